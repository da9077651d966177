"""The example of the Chinese seed document on torch.detach() (shared/seeds/001_*.txt).

The document claims `w.backward()` gives x.grad = [2, 4, 6]; real PyTorch raises instead,
because `w` depends on `x` only through the detached `z`. This script prints what PyTorch does.
"""
try:
    import torchish as torch
except ImportError:  # pragma: no cover
    import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2
z = y.detach()
w = z.sum()
try:
    w.backward()
except RuntimeError as exc:
    print(f"RuntimeError: {exc}")
print(x.grad)
print(z.grad)
print(y.requires_grad, z.requires_grad, w.requires_grad)
