"""torch.compile(model) then an ordinary eager training loop (SGD momentum), batch-size change."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = MLP()
compiled = torch.compile(model, backend="aot_eager")
opt = torch.optim.SGD(compiled.parameters(), lr=0.1, momentum=0.9)
X = torch.randn(32, 8)
Y = torch.randint(0, 3, (32,))
for step in range(6):
    opt.zero_grad()
    out = compiled(X)
    loss = F.cross_entropy(out, Y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f} grad_fn {type(loss.grad_fn).__name__}")
print(out.shape, out.requires_grad)
# a different batch size: the compiled module retraces
out = compiled(X[:5])
print(out.shape, f"{out.sum().item():.5f}")
# the compiled wrapper shares parameters and state_dict with the original module
print(compiled.fc1.weight is model.fc1.weight, sorted(compiled.state_dict().keys())[:2])
print(f"{model.fc2.bias.sum().item():.6f}")
with torch.no_grad():
    pred = compiled(X).argmax(1)
print("accuracy", (pred == Y).float().mean().item())
compiled.eval()
print(model.training, compiled.training)
