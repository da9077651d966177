"""Grad modes as context managers, decorators and functions."""
import torch

x = torch.ones(2, 2, requires_grad=True)

with torch.no_grad():
    y = x * 2
    print(torch.is_grad_enabled(), y.requires_grad, y.grad_fn)
    with torch.enable_grad():
        z = x * 2
        print(torch.is_grad_enabled(), z.requires_grad, z.grad_fn.name())
print(torch.is_grad_enabled())


@torch.no_grad()
def doubler(t):
    return t * 2


@torch.no_grad
def tripler(t):
    return t * 3


@torch.enable_grad()
def inside_enable(t):
    return t * 2


print(doubler(x).requires_grad, tripler(x).requires_grad)
with torch.no_grad():
    print(inside_enable(x).requires_grad)

with torch.set_grad_enabled(False):
    print((x * 2).requires_grad)
print((x * 2).requires_grad)

torch.set_grad_enabled(False)
print(torch.is_grad_enabled(), (x + 1).requires_grad)
torch.set_grad_enabled(True)
print(torch.is_grad_enabled(), (x + 1).requires_grad)

is_train = False
with torch.set_grad_enabled(is_train):
    print((x ** 2).requires_grad)


@torch.set_grad_enabled(False)
def f(t):
    return t.exp()


print(f(x).requires_grad, torch.is_grad_enabled())

with torch.inference_mode():
    w = x * 5
    print(w.requires_grad, torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    print(w.is_inference())
print(x.is_inference(), torch.is_inference_mode_enabled())

with torch.inference_mode(mode=False):
    print((x * 2).requires_grad)


@torch.inference_mode()
def predict(t):
    return t @ t


print(predict(x).requires_grad)


# generator decorated with no_grad
@torch.no_grad()
def gen(t):
    for i in range(2):
        yield (t * i).requires_grad, torch.is_grad_enabled()


for item in gen(x):
    print(item, torch.is_grad_enabled())

# exception inside restores the mode
try:
    with torch.no_grad():
        raise ValueError("boom")
except ValueError as e:
    print(type(e).__name__, e, torch.is_grad_enabled())

# requires_grad flags
a = torch.randn(3)
print(a.requires_grad, a.is_leaf)
a.requires_grad_()
print(a.requires_grad, a.is_leaf)
b = a * 2
print(b.requires_grad, b.is_leaf)
try:
    b.requires_grad_(False)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.tensor([1, 2, 3]).requires_grad_()
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    torch.tensor([1, 2], requires_grad=True)
except RuntimeError as e:
    print(type(e).__name__, e)
c = torch.zeros(2, dtype=torch.float64, requires_grad=True)
print(c.requires_grad, c.dtype)
with torch.no_grad():
    d = torch.zeros(2, requires_grad=True)
print(d.requires_grad, d.is_leaf)

# module in no_grad, params keep requires_grad
lin = torch.nn.Linear(2, 1)
with torch.no_grad():
    out = lin(torch.ones(1, 2))
print(out.requires_grad, lin.weight.requires_grad)
for p in lin.parameters():
    p.requires_grad_(False)
print(lin(torch.ones(1, 2)).requires_grad)
