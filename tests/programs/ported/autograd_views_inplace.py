"""Views alias their base; in-place writes go through; grad_fn names after in-place on views."""
import torch

base = torch.arange(12.0).reshape(3, 4)
v = base[1]
v.add_(100)
print(base, base._version, v._version)
print(v._base is base, base._base, v.is_contiguous())
t = base.t()
t[0, 2] = -1
print(base[2, 0], base._version)
print(t.stride(), t.is_contiguous(), t.storage_offset())
n = base.narrow(1, 1, 2)
n.mul_(0)
print(base, n.stride(), n.storage_offset())
e = torch.zeros(3).unsqueeze(0).expand(2, 3)
print(e.stride())
d = base.diagonal()
d.fill_(7)
print(base)
p = base.permute(1, 0)
print(p.shape, p.stride())
s = base.view(12)[::5]
s.copy_(torch.tensor([-5.0, -6.0, -7.0]))
print(base, base._version)

# view on incompatible strides
try:
    base.t().view(12)
except RuntimeError as e:
    print(type(e).__name__, e)
print(base.t().reshape(12))
print(base.t().reshape(12)._base is None, base.reshape(2, 6)._base is base)

# in-place on views of a non-leaf: grad_fn names
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
y = x * 2
print(y.grad_fn.name(), y._version)
y[1:3] *= 10
print(y.grad_fn.name(), y._version)
view = y[:2]
print(view.grad_fn.name())
y.sum().backward()
print(x.grad)

x.grad = None
y = x.clone()
yv = y.view(2, 2)
yv[0].mul_(3)
print(y.grad_fn.name(), yv.grad_fn.name())
tail = y[2:]
tail.add_(1)
print(tail.grad_fn.name(), y.grad_fn.name())
(y * torch.arange(4.0)).sum().backward()
print(x.grad)

# view created before the base is modified sees the write and regenerates its grad_fn
x.grad = None
y = x * 1
w = y.view(2, 2)
print(w.grad_fn.name())
y.mul_(2)
print(w.grad_fn.name(), w, w._version)
w.sum().backward()
print(x.grad)

# multi-output views cannot be modified in place
z = x * 2
parts = z.unbind(0)
try:
    parts[0].mul_(2)
except RuntimeError as e:
    print(type(e).__name__, e)
a, b = z.split(2)
try:
    a.add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
c0, c1 = z.chunk(2)
print(c0.grad_fn.name(), c0._base is z)
print(z.unbind(0)[0].grad_fn.name())

# in-place on a leaf view
leaf = torch.ones(3, requires_grad=True)
try:
    leaf[0] = 5
except RuntimeError as e:
    print(type(e).__name__, e)
try:
    leaf.add_(1)
except RuntimeError as e:
    print(type(e).__name__, e)
lv = leaf[1:]
try:
    lv.mul_(2)
except RuntimeError as e:
    print(type(e).__name__, e)
with torch.no_grad():
    leaf[0] = 5
print(leaf, leaf._version, leaf.grad_fn, leaf.is_leaf)

# squeeze / unsqueeze / expand views
q = torch.zeros(1, 3)
qs = q.squeeze(0)
qs[1] = 4
qu = q.unsqueeze(2)
qu[0, 2, 0] = 9
print(q, q._version, qs._version)
r = torch.ones(2, 3, requires_grad=True)
r2 = r * 1
ex = r2[:, :1].expand(2, 3)
print(ex.grad_fn.name(), ex.stride())
ex.sum().backward()
print(r.grad)
