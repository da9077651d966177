"""detach / detach_ / .data: shared storage, version counters and the errors they lead to."""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b.detach()
print(c.requires_grad, c.is_leaf, c.grad_fn, b._version, c._version)
c.zero_()
print(b, b._version, c._version)
try:
    b.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# .data does not share the version counter
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
d = b.data
d.zero_()
print(b, b._version, d._version)
b.sum().backward()
print(a.grad)

# updating parameters through .data and under no_grad
w = torch.tensor([0.5, -0.5], requires_grad=True)
loss = (w * torch.tensor([2.0, 3.0])).sum()
loss.backward()
w.data -= 0.1 * w.grad
print(w, w._version, w.is_leaf)
with torch.no_grad():
    w -= 0.1 * w.grad
print(w, w._version, w.requires_grad, w.grad_fn)
w.grad.zero_()
print(w.grad)

# detach shares memory: writes appear in the original
x = torch.arange(4.0, requires_grad=True)
y = x.detach()
y[0] = 100.0
print(x, x._version, y._version)
print(y.data_ptr() == x.data_ptr())

# detach_
m = torch.ones(2, requires_grad=True)
n = m * 3
n.detach_()
print(n.requires_grad, n.grad_fn, n.is_leaf)
v = (m * 2)[0:1]
try:
    v.detach_()
except RuntimeError as e:
    print(type(e).__name__, e)

# numpy() on a tensor that requires grad
try:
    m.numpy()
except RuntimeError as e:
    print(type(e).__name__, e)
print(m.detach().numpy())
print(m.detach().numpy().dtype)

# clone keeps the graph, detach().clone() does not
k = m.clone()
print(k.grad_fn.name(), k.requires_grad)
k2 = m.detach().clone()
print(k2.grad_fn, k2.requires_grad)
k3 = m.clone().detach().requires_grad_(True)
print(k3.is_leaf, k3.requires_grad)

# item / tolist work on requires-grad tensors
print(m.sum().item(), m.tolist())

# stop-gradient trick
p = torch.tensor([2.0, 3.0], requires_grad=True)
q = p * p.detach()
q.sum().backward()
print(p.grad)

# straight-through estimator
p.grad = None
hard = (p > 2.5).float()
st = hard + p - p.detach()
print(st)
(st * torch.tensor([1.0, 2.0])).sum().backward()
print(p.grad)
