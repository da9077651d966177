"""Sparse COO tensors (`layout=torch.sparse_coo`).

A sparse tensor is a `Tensor` subclass holding an int64 indices tensor `(sparse_dim, nnz)`, a
values tensor `(nnz, *dense_size)` and its size. Its autograd identity is its values tensor: an
op on a sparse tensor is an op on the values (with the indices as a constant), so gradients
reach a sparse leaf as values-shaped arrays, and `.grad` wraps them as a sparse tensor.

Ops reach the sparse implementations through `__torch_function__` (the dispatcher's and the
Python-level methods' existing hook): `_sparse_ops.IMPLS` by the called function's name. What
is not there raises PyTorch's refusal where PyTorch refuses the op on a sparse tensor, else a
NotImplementedError naming the op and the layout: never a dense answer in a sparse disguise.
This module is imported on first use, so that programs without sparse tensors never arm the
`__torch_function__` routing.
"""
import math

from . import overrides as _tf
from ._layout import sparse_coo
from ._tensor import Size, Tensor, _alias


class SparseCooTensor(Tensor):
    """A tensor with `layout=torch.sparse_coo` (PyTorch's is a plain `torch.Tensor`)."""

    # ---- metadata -----------------------------------------------------------------------
    layout = sparse_coo
    is_sparse = True

    @property
    def shape(self):
        return Size(self._sp_size)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        from ._tensor_checks import _wrap_dim
        return self._sp_size[_wrap_dim(dim, len(self._sp_size))]

    @property
    def ndim(self):
        return len(self._sp_size)

    def dim(self):
        return len(self._sp_size)

    ndimension = dim

    def numel(self):
        return math.prod(self._sp_size)

    nelement = numel

    def __len__(self):
        if not self._sp_size:
            raise TypeError("len() of a 0-d tensor")
        return self._sp_size[0]

    def sparse_dim(self):
        return self._sp_indices.shape[0]

    def dense_dim(self):
        return len(self._sp_size) - self._sp_indices.shape[0]

    def _nnz(self):
        return self._sp_indices.shape[1]

    def is_coalesced(self):
        return self._sp_coalesced

    def _indices(self):
        return self._sp_indices

    def _values(self):
        return self._sp_values.detach()

    def indices(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._sp_indices

    def values(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        from ._sparse_ops import identity
        return identity("ValuesBackward0", self._sp_values)

    def sparse_resize_(self, size, sparse_dim, dense_dim):
        from ._sparse_ops import IMPLS
        return IMPLS["sparse_resize_"](self, size, sparse_dim, dense_dim)

    def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
        from ._sparse_ops import IMPLS
        return IMPLS["sparse_resize_and_clear_"](self, size, sparse_dim, dense_dim)

    def smm(self, mat2):
        from ._sparse_math import smm
        return smm(self, mat2)

    def coalesce(self):
        from ._sparse_ops import coalesce
        return coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        from ._sparse_ops import to_dense
        return to_dense(self, dtype)

    def to_sparse(self, *args, **kwargs):
        from ._sparse_ops import sparse_to_sparse
        return sparse_to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self):
        return self

    def is_contiguous(self, memory_format=None):
        return False

    def stride(self, dim=None):   # (what PyTorch 2.13 answers)
        return (0,) * self.ndim if dim is None else 0

    def storage_offset(self):
        return 0

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def jax(self):
        raise NotImplementedError("torchish: .jax() of a sparse_coo tensor: use "
                                  "to_dense().jax(), or _indices() and _values()")

    __jax_array__ = jax

    def untyped_storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def __reduce_ex__(self, protocol):   # (pickle, copy; torch.save writes PyTorch's format)
        return (make, (self._sp_indices, self._sp_values.detach(), self._sp_size,
                       self._sp_coalesced))

    # ---- autograd: the values tensor's --------------------------------------------------
    @property
    def requires_grad(self):
        return self._sp_values.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._sp_values.requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        self._sp_values.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._sp_values.grad_fn

    @property
    def is_leaf(self):
        return self._sp_values.is_leaf

    @property
    def grad(self):
        g = self._sp_values.grad
        if g is None:
            return None
        from ._sparse_ops import grad_of_leaf
        return grad_of_leaf(self, g)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise NotImplementedError("torchish: assigning .grad of a sparse_coo tensor is "
                                      "not supported yet")
        self._sp_values.grad = None
        self.__dict__.pop("_sp_grad_dims", None)

    def detach(self):
        return make(self._sp_indices, self._sp_values.detach(), self._sp_size,
                    self._sp_coalesced)

    # ---- printing ---------------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ._sparse_ops import sparse_repr
        return sparse_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        return self.__repr__() if not spec else format(self.__repr__(), spec)

    # ---- everything else: the sparse op table ---------------------------------------------
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ._sparse_ops import IMPLS, refuse
        name = _name_of(func)
        impl = IMPLS.get(name)
        if impl is None:
            if name in _PASS_THROUGH:
                with _tf.DisableTorchFunctionSubclass():
                    return func(*args, **(kwargs or {}))
            raise refuse(name)
        return impl(*args, **(kwargs or {}))


# Tensor attributes that mean the same for a sparse tensor (its device, dtype: the values')
_PASS_THROUGH = frozenset({"device", "dtype", "is_cuda", "is_cpu", "is_meta", "is_quantized",
                           "is_nested", "is_mkldnn", "is_sparse_csr", "is_complex",
                           "is_floating_point", "is_signed", "get_device", "element_size",
                           "itemsize", "output_nr", "_version", "__hash__",
                           "is_inference", "is_conj", "is_neg"})

_PROPERTY_NAMES = {}


def _name_of(func):
    """The Tensor/torch name `func` is called by (a property: its attribute name)."""
    name = getattr(func, "__name__", None)
    if name in ("__get__", "__set__", "__delete__"):
        prop = getattr(func, "__self__", None)
        if not _PROPERTY_NAMES:
            _PROPERTY_NAMES.update((id(v), k) for k, v in vars(Tensor).items()
                                   if isinstance(v, property))
        return _PROPERTY_NAMES.get(id(prop), name)
    return name


def warn_invariants():
    """PyTorch's once-per-process note when a sparse tensor is built unchecked."""
    from ._warnings import warn_once
    warn_once("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) "
              "will occur when operating on a sparse tensor which violates the invariants, but "
              "checks incur performance overhead. To silence this warning, explicitly opt in or "
              "out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  "
              "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/Context.cpp:816.)")


def make(indices, values, size, coalesced):
    """A sparse tensor over an int64 `indices` Tensor and a `values` Tensor (not copied)."""
    t = _alias(values, cls=SparseCooTensor)
    t._base = None
    d = t.__dict__
    d["_sp_indices"] = indices
    d["_sp_values"] = values
    d["_sp_size"] = tuple(int(s) for s in size)
    d["_sp_coalesced"] = bool(coalesced)
    return t


_tf.ARMED[0] = True   # composites (`torch.matmul`) now look for sparse operands


def is_sparse_coo(x):
    return type(x) is SparseCooTensor


__all__ = ["SparseCooTensor", "make", "is_sparse_coo", "warn_invariants"]
