"""Tensor methods PyTorch defines outside its op table: `dim_order`, `const_data_ptr`,
`storage_type`, `is_set_to`, the deprecated autograd-aware `resize`/`resize_as`, `grad_dtype`
and `polygamma_` (the in-place form of an op whose tensor is not its first parameter)."""
import math
import warnings

from ._tensor import Tensor, memory_format
from ._memory_layout import memory_order
from .autograd.function import Function


def _dim_order(self, *, ambiguity_check=False):
    if not (isinstance(ambiguity_check, bool) or (isinstance(ambiguity_check, list) and all(
            isinstance(f, memory_format) for f in ambiguity_check))):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    size, stride = self.shape, self.stride()
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    several = 1 in size or any(a == b for a, b in zip(stride, stride[1:]))
    if (ambiguity_check is not False and several
            and sum(self.is_contiguous(memory_format=f) for f in formats) != 1):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    order = memory_order(size, stride)   # innermost dim first
    if ambiguity_check and any(   # (an empty list checks only the first rule)
            not 0 < stride[a] < stride[b] for a, b in zip(order, order[1:])):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(reversed(order))


Tensor.dim_order = _dim_order


def _const_data_ptr(self):
    return self.data_ptr()


Tensor.const_data_ptr = _const_data_ptr


def _storage_type(self):
    from . import _storage_classes
    from ._tensor import _warn_typed_storage
    _warn_typed_storage()
    return _storage_classes.TYPED[self.dtype]


Tensor.storage_type = _storage_type


def _is_set_to(self, tensor):
    return (self._storage is tensor._storage and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and self.storage_offset() == tensor.storage_offset())


Tensor.is_set_to = _is_set_to


class Resize(Function):
    @staticmethod
    def forward(ctx, tensor, sizes):
        ctx.sizes = sizes
        ctx.numel = math.prod(sizes)
        if tensor.numel() != ctx.numel:
            given = "x".join(str(s) for s in sizes)
            have = "x".join(str(s) for s in tensor.shape)
            raise RuntimeError(
                f"requested resize to {given} ({ctx.numel} elements in total), but the given "
                f"tensor has a size of {have} ({tensor.numel()} elements). autograd's resize "
                "can only change the shape of a given tensor, while preserving the number of "
                "elements. ")
        ctx.input_sizes = tensor.shape
        return tensor.contiguous().view(tuple(sizes))

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous().view(ctx.input_sizes), None


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return Resize.apply(self, tuple(sizes))


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return Resize.apply(self, tuple(tensor.shape))


Tensor.resize = _resize
Tensor.resize_as = _resize_as


def _get_grad_dtype(self):
    return self.__dict__.get("_grad_dtype", self.dtype)


def _set_grad_dtype(self, dtype):
    if not self.is_leaf:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    self.__dict__["_grad_dtype"] = dtype


Tensor.grad_dtype = property(_get_grad_dtype, _set_grad_dtype)


def _polygamma_(self, n):
    from ._ops.inplace import dispatch_inplace
    from ._ops.registry import REGISTRY
    if type(n) is not int:
        raise TypeError(f"polygamma_(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    return dispatch_inplace(REGISTRY["polygamma"], (self,), (n,))


Tensor.polygamma_ = _polygamma_
