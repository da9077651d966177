"""The examples of the Russian seed document on Tensor.detach() (shared/seeds/000_*.txt).

Run with torchish directly (`python examples/seed_detach_ru.py`) or as a PyTorch script
(`python -m torchish examples/seed_detach_ru.py` with `import torch`). Its output equals real
PyTorch's line for line (tests/test_examples.py checks it).
"""
try:
    import torchish as torch
except ImportError:  # pragma: no cover
    import torch
import numpy as np

# 1. A detached tensor does not require grad
t = torch.tensor([1., 2., 3.], requires_grad=True)
detached_t = t.detach()
print(t)
print(detached_t)
print(t.requires_grad)
print(detached_t.requires_grad)

# 2. Only the original tensor receives a gradient
torch.manual_seed(0)
t = torch.tensor([1., 2., 3.], requires_grad=True)
detached_t = t.detach()
res = detached_t.sum() + t.sum()
res.backward()
print(t.grad)
print(detached_t.grad)

# 3. detach() to get a NumPy array
torch.manual_seed(0)
t = torch.randn(3, requires_grad=True)
numpy_array = t.detach().numpy()
print(numpy_array)
print(type(numpy_array))

# 4. Detaching a loss in a training loop
torch.manual_seed(0)
t = torch.randn(3, requires_grad=True)
loss = (t ** 2).sum()
detached_loss = loss.detach()
print(loss)
print(detached_loss)
print(loss.requires_grad)
print(detached_loss.requires_grad)

# 5. The detached tensor shares data (and the version counter) with its source
t = torch.tensor([1., 2., 3.], requires_grad=True)
d = t.detach()
d.zero_()
print(t)
print(t._version, d._version)
assert isinstance(numpy_array, np.ndarray)
