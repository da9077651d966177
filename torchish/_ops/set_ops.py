"""In-place changes of what a tensor is laid over: `Tensor.set_` (another tensor's or a
storage's elements) and `Tensor.as_strided_` (new size/stride/offset over its storage)."""
import jax.numpy as jnp

from .._storage import Storage, TypedStorage, resolve_storage
from .._views import contiguous_strides
from .._tensor import _INFERENCE_INPLACE_MSG, Tensor
from ..autograd import grad_mode
from .call_jax import record_not_implemented
from .inplace import check_inplace
from .overloads import parser_error
from .pointwise import CPP_NAMES
from .shape import _ints, as_strided, check_strided, retype

PLAIN = ["as_strided_"]


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    check_inplace(self)
    refused = self._unversioned() and not grad_mode._INFERENCE[0]   # (raised once made)
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {CPP_NAMES[source.dtype.name]} "
                               f"to a tensor of type {CPP_NAMES[self.dtype.name]}")
        if storage_offset is None:   # set_(source): every alias of `source` is seen
            self._storage, self._view = source._storage, source._view
            self._cache, self._cache_base = source._cache, source._cache_base
            self._base, self._view_vc = None, None
            return _finish(self, refused)
        source = source._storage
    elif source is None:
        self._storage = Storage(jnp.zeros((0,), self.dtype.np), self._storage.device)
        self._view, self._cache, self._cache_base = None, None, None
        self._base, self._view_vc = None, None
        return _finish(self, refused)
    if isinstance(source, TypedStorage):
        source = source.untyped()
    if not isinstance(source, Storage):
        given = [v for v in (source, storage_offset, size, stride) if v is not None]
        raise parser_error("set_", True, given, {})
    if storage_offset is None:   # set_(storage): all of it, one dim
        storage_offset, size = 0, (source.nbytes() // self.dtype.itemsize,)
    size = tuple(size)
    stride = tuple(stride) if stride is not None else contiguous_strides(size)
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_ints(size)} and "
                           f"strides={_ints(stride)}")
    check_strided(size, stride, storage_offset, self.dtype.itemsize, source.nbytes())
    source, start = resolve_storage(source)   # (a slice's or a NumPy-shared one's handle)
    retype(self, source, None, self.dtype.np, size, stride,
           storage_offset + start // self.dtype.itemsize)
    self._base, self._view_vc = None, None
    return _finish(self, refused)


def _finish(self, refused):
    if refused:   # an inference tensor outside the mode: PyTorch changes it, then refuses
        raise RuntimeError(_INFERENCE_INPLACE_MSG)
    self._vc[0] += 1
    if self._grad_fn is not None and grad_mode.GRAD_ENABLED[0]:
        record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
            "derivative for set_ is not implemented"), [self], [self])
    return self


def as_strided_(input, size, stride, storage_offset=None):
    check_inplace(input)
    new = as_strided(input, size, stride, storage_offset)
    input._view, input._cache, input._cache_base = new._view, None, None
    input._vc[0] += 1
    if new._grad_fn is not None:
        new._grad_fn._name = "AsStridedBackward1"
        input._grad_fn, input._output_nr = new._grad_fn, 0
        if input._base is not None:   # (the node is current: not replayed as a view's)
            input._view_vc = input._vc[0]
    return input


Tensor.set_ = set_
Tensor.as_strided_ = as_strided_
