# Views and in-place writes under autograd: view chains, CopySlices, index_put_ with
# accumulate, masked_scatter_, out=, version-counter errors and PyTorch's view rules.
import torch

torch.manual_seed(0)


def show(name, t):
    print(name, t, t._version, t.is_leaf, t.requires_grad, t.grad_fn.name() if t.grad_fn else None)


w = torch.arange(6.0).reshape(3, 2).requires_grad_()
base = w * 1
v = base[1:].t().unsqueeze(0)
show("view", v)
v.mul_(torch.tensor([[[2.0, 3.0]]]).transpose(1, 2))
show("after mul_", v)
show("base", base)
base.sum().backward()
print("w.grad", w.grad)

x = torch.ones(2, 3, requires_grad=True)
y = x.clone()
y[0, 1:] = torch.tensor([5.0, 6.0]) * x[1, :2]
y[:, 0] *= 3
show("setitem", y)
print([(f.name() if f else None, i) for f, i in y.grad_fn.next_functions])
(y * torch.arange(6.0).reshape(2, 3)).sum().backward()
print("x.grad", x.grad)

src = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
acc = torch.zeros(4).index_put_((torch.tensor([0, 2, 0]),), src * 2, accumulate=True)
show("index_put_", acc)
acc.pow(2).sum().backward()
print("src.grad", src.grad)
m = torch.zeros(2, 3, requires_grad=True)
mask = torch.tensor([[True, False, True], [False, True, False]])
ms = m.clone().masked_scatter_(mask, torch.tensor([7.0, 8.0, 9.0, 10.0]))
show("masked_scatter_", ms)
(ms * 2).sum().backward()
print("m.grad", m.grad)

out = torch.empty(3)
torch.add(torch.ones(3), 2, out=out)
show("out=", out)
try:
    torch.mul(src, 2, out=torch.empty(3))
except RuntimeError as e:
    print(type(e).__name__, e)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
s = a.sigmoid()
t = s * 2
s.add_(1)
try:
    t.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
with torch.autograd.detect_anomaly(check_nan=True):
    e2 = a.exp()
    e2.mul_(3)
    try:
        (e2 * a).sum().backward()
        print("anomaly ok", a.grad)
    except RuntimeError as e:
        print(type(e).__name__, e)

parts = torch.ones(4, requires_grad=True).mul(2).unbind(0)
try:
    parts[1].add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
chunks = torch.ones(4, requires_grad=True).mul(2).split(2)
try:
    chunks[0].mul_(2)
except RuntimeError as e:
    print(type(e).__name__, e)

leaf = torch.tensor([1.0, 2.0], requires_grad=True)
leaf.data.mul_(10)
print("data trick", leaf, leaf._version, leaf.grad_fn)
d = leaf.detach()
d[0] = -1
print("detach shares", leaf, leaf._version, d._version)
vv = (leaf * 1)[:1]
try:
    vv.detach_()
except RuntimeError as e:
    print(type(e).__name__, e)
with torch.no_grad():
    leaf.add_(1)
    leaf[1] = 0
print("no_grad inplace", leaf, leaf._version, leaf.is_leaf)
try:
    leaf.add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    leaf[0:1].mul_(2)
except RuntimeError as e:
    print(type(e).__name__, e)
