"""`Tensor.apply_`, `map_`, `map2_`: a Python function called on every element (PyTorch's CPU
methods for tensors without autograd history). Elements reach the function as Python numbers
(int, float, bool by dtype); its results are converted back as PyTorch's C++ casts do
(a float into an integer tensor truncates) and written in place, without a version bump."""
import numbers

import numpy as np

from ._tensor import Tensor
from ._tensor_conversion import host_numpy


def _number(value, dtype):
    """`value` converted as PyTorch converts a callable's result to the element type."""
    if dtype.is_floating_point:
        if not isinstance(value, numbers.Real):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        return float(value)
    if dtype.is_complex:
        return complex(value)
    if dtype.name == "bool":
        return bool(value)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")
    return int(value)


def _map(name, self, others, fn):
    for t in (self,) + others:
        if t.requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                               f"var.detach().{name}() instead.")
    for label, other in zip(("other", "tensor2"), others):
        if other.dtype is not self.dtype:
            raise TypeError(f"{name}: expected {self.type()} for '{label}' (got "
                            f"{other.type()})")
    shape = tuple(self.shape)
    # (host_numpy: bfloat16 and float8, which numpy() refuses, map as well)
    columns = [host_numpy(self.detach()).ravel().tolist()] + [
        host_numpy(o.detach().expand(shape)).ravel().tolist() for o in others]
    values = [_number(fn(*args), self.dtype) for args in zip(*columns)]
    result = np.array(values, dtype=self.dtype.np).reshape(shape)
    version = self._vc[0]
    self._set_data(result)
    self._vc[0] = version   # (PyTorch writes the elements in place, uncounted)
    return self


def apply_(self, callable):
    return _map("apply_", self, (), callable)


def map_(self, tensor, callable):
    return _map("map_", self, (tensor,), callable)


def map2_(self, x, y, callable):
    return _map("map2_", self, (x, y), callable)


Tensor.apply_, Tensor.map_, Tensor.map2_ = apply_, map_, map2_
