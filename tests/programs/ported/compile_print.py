"""print() inside compiled functions: constants print on every call, a tensor breaks the graph."""
import torch
torch.manual_seed(0)
m = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
@torch.compile
def step(x):
    print("step start", x.shape)
    opt.zero_grad()
    loss = m(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss
@torch.compile
def show(x):
    y = x * 2
    print("y is", y)
    return y + 1
torch.manual_seed(0)
x = torch.randn(4, 3)
for i in range(3):
    print(i, round(step(x).item(), 5))
for i in range(2):
    print(show(torch.ones(2)))
