"""Compiled training step of a small CNN with BatchNorm in train mode, then eval."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 4 * 4, 5, bias=False)
        self.bn1 = nn.BatchNorm1d(5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.bn1(self.fc(x.flatten(1)))


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
x = torch.randn(16, 1, 8, 8)
y = torch.randint(0, 5, (16,))


@torch.compile(backend="eager", dynamic=False)
def step(x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


for i in range(3):
    print(f"{i} {step(x, y).item():.5f}")
print("running_mean", [round(v, 5) for v in model.bn.running_mean.tolist()])
print("running_var", [round(v, 5) for v in model.bn.running_var.tolist()])
print("num_batches_tracked", model.bn.num_batches_tracked.item(), model.bn1.num_batches_tracked)
print("grad", model.conv.weight.grad)
# a smaller batch retraces
print(f"small {step(x[:6], y[:6]).item():.5f}", model.bn.num_batches_tracked.item())


@torch.compile(backend="aot_eager")
def evaluate(x):
    return model(x).softmax(-1)


model.eval()
p = evaluate(x)
print(p.shape, f"{p[0].sum().item():.5f}", f"{p.max().item():.5f}")
print("eval leaves running stats", model.bn.num_batches_tracked.item())
