"""torch.compile keyword arguments, plain functions, retracing, and dropout inside compiled code."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def f(x, y):
    return (x.sin() * y.cos()).sum(-1) + x.mean()


a = torch.randn(4, 5)
b = torch.randn(4, 5)
for kwargs in [dict(backend="eager"), dict(backend="aot_eager", mode="reduce-overhead"),
               dict(backend="aot_eager", fullgraph=True, dynamic=False),
               dict(backend="aot_eager", mode="max-autotune-no-cudagraphs"),
               dict(backend="aot_eager", options=None, disable=True)]:
    g = torch.compile(f, **kwargs)
    print(sorted(kwargs), [f"{v:.5f}" for v in g(a, b).tolist()])

g = torch.compile(f, backend="aot_eager")
for n in [3, 7, 3]:
    print(n, g(torch.ones(n, 2), torch.zeros(n, 2)).shape)


@torch.compile(backend="aot_eager")
def with_grad(x):
    return (x ** 2).sum()


x = torch.arange(4.0, requires_grad=True)
out = with_grad(x)
out.backward()
print(out.item(), x.grad, out.requires_grad)

# a method compiled as a decorator
class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(2.0))

    @torch.compile(backend="aot_eager")
    def forward(self, x):
        return x * self.scale


m = Scaler()
print(m(torch.tensor([1.0, 2.0])).tolist())

# Dropout in compiled code: the mask differs from eager, but its statistics do not
drop = torch.compile(nn.Dropout(0.5), backend="aot_eager")
z = drop(torch.ones(1000, 10))
kept = (z != 0).float().mean().item()
print(z.shape, abs(kept - 0.5) < 0.05, sorted(set(z.unique().tolist())))
drop.eval()
print(drop(torch.ones(3)).tolist())
torch._dynamo.reset()
print(torch.compiler.is_compiling())
