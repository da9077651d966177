"""Tape basics: grad_fn names, leaves, accumulation, retain_grad, no_grad."""
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x + 2 * x).sum()
print(y, y.grad_fn.name(), x.is_leaf, y.is_leaf)
print([type(f).__name__ if f is not None else None for f, _ in y.grad_fn.next_functions])
y.backward()
print(x.grad)
(x ** 3).mean().backward()
print(x.grad)
h = x.exp()
h.retain_grad()
h.sum().backward()
print(h.grad, x.grad.shape)
with torch.no_grad():
    z = x * 2
print(z.requires_grad, z.grad_fn)
try:
    z.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
