"""Compiled functions PyTorch graph-breaks on: .item(), data-dependent `if`, printing values."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch._dynamo.config.suppress_errors = False
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 4)
y = x.sum(1, keepdim=True)


@torch.compile(backend="aot_eager")
def train_step(x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


for i in range(4):
    print(f"{train_step(x, y):.6f}")


@torch.compile(backend="eager")
def clipped(x):
    s = x.abs().sum()
    if s > 10:
        return x / s
    return x * 2


print(clipped(torch.ones(3)), clipped(torch.full((3,), 5.0)))
print(torch.compiler.is_compiling(), f"{model.weight.sum().item():.6f}")
