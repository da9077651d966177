"""Tensor's conversions to Python and NumPy and the Python protocols around them: `numpy()`,
`item()`, `tolist()`, `bool()`/`float()`/`int()`/`index()`, iteration, `repr`/`format`,
`copy.deepcopy`, pickling, DLPack, `type()`/`cpu()`/`cuda()`. Kept apart from `_tensor.py` (its
size); `_tensor` imports this module last and `install`s the methods on `Tensor`."""
import warnings

import jax
import numpy as np

from . import _dtype as dt, _tensor
from ._device import device as _device_cls
from ._storage import LaidOutStorage, Storage, numpy_of
from ._tensor import Tensor, _alias, _rebuild, _rebuild_as, _wrap
from ._tensor_checks import _vmap_batched
from .autograd import grad_mode


class _ConversionMethods:
    """Tensor's methods of this group, written as in its class body (copied onto it by
    `install`)."""

    def numpy(self, *, force=False):
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu" and not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if self.dtype in _NO_NUMPY:   # NumPy has no such type: PyTorch refuses, force or not
            raise TypeError(f"Got unsupported ScalarType {self.dtype._legacy}")
        return host_numpy(self)

    def __array__(self, dtype=None, copy=None):
        # PyTorch's is `numpy()`: `np.asarray(t)` shares t's memory, and refuses a tensor that
        # requires grad, or one of a dtype NumPy lacks (even with `dtype=`), as numpy() does
        arr = self.numpy()
        if dtype is not None:
            return arr.astype(dtype, copy=bool(copy))
        return arr.copy() if copy else arr

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # `t + ndarray`: the operator gives up, NumPy computes (with NumPy's promotion) and
        # hands its result here, as PyTorch's tensor takes it back (bool as uint8); PyTorch's
        # conversion of a tensor that requires grad refuses, the gradient would be lost
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        from ._ops.creation_data import from_numpy
        return from_numpy(np.asarray(array, order="C"))   # (keeps a 0-d result 0-d)

    def item(self):
        if _vmap_batched(self._data):
            raise RuntimeError(_VMAP_ITEM)
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if self._storage.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return _to_python(np.asarray(self._data).reshape(()), self.dtype)

    def tolist(self):
        arr = np.asarray(self._data)
        if self.dtype is dt.bfloat16 or self.dtype is dt.float16:
            arr = arr.astype(np.float64)
        return arr.tolist()

    def __bool__(self):
        if _vmap_batched(self._data):
            raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                               "data-dependent control flow. We don't support that yet, please "
                               "file an issue at https://github.com/pytorch/pytorch/issues .")
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if n == 0 else 'more than one value'} is "
                               f"ambiguous")
        return bool(self.item())

    def _scalar(self):
        # float()/int()/complex() go through Python's number protocol in PyTorch, which
        # raises ValueError (where .item() raises RuntimeError)
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __float__(self):
        # PyTorch 2.13 warns once per process, for float() only (not item()/int()), and only
        # with grad mode on (a call under no_grad does not use up the once)
        # (the flag read from `_tensor` at each call: tests reset it there)
        if (self.requires_grad and not _tensor._WARNED_FLOAT[0]
                and grad_mode.is_grad_enabled()):
            _tensor._WARNED_FLOAT[0] = True
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=2)
        return float(_real_part(self._scalar(), "double"))

    def __int__(self):
        return int(_real_part(self._scalar(), "int64_t"))

    def __complex__(self):
        return complex(self._scalar())

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reversed__(self):
        return iter(self.flip(0).unbind(0)) if self.ndim else self

    def __contains__(self, element):
        return bool((self == element).any().item())

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import format_tensor
        fn = self._grad_fn
        name = fn.name() if fn is not None else None
        if name is not None and "::" in name:
            name = name.rsplit("::", 1)[-1]
        device = None if self.device.type == "cpu" else str(self.device)
        tangent = self.__dict__.get("_fw_tangent")   # a dual tensor's (forward AD)
        cls = type(self)   # a subclass prints its name (Parameter adds its own header)
        prefix = "tensor(" if cls is Tensor or "_prints_as_tensor" in vars(cls) else \
            cls.__name__ + "("
        meta = self._storage.device.type == "meta"
        return format_tensor(None if meta else np.asarray(self._data), self.dtype.name,
                             device=device, prefix=prefix,
                             meta_shape=tuple(self.shape) if meta else None,
                             requires_grad=self.requires_grad, grad_fn_name=name,
                             default_float_dtype=dt.get_default_dtype().name,
                             tangent=None if tangent is None else repr(tangent))

    def __str__(self):
        return self.__repr__()

    def __format__(self, spec):
        # PyTorch: a plain 0-d tensor formats as its Python number (f"{loss}" -> "0.25")
        if self.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                "be because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = self._deepcopy_alias(memo)
        if self._view is not None and self._view.bits():
            # PyTorch copies the storage (once per memo) and resolves the bits in a new tensor
            with grad_mode.no_grad():
                new = _rewrap_like(self, (self if new is None else new).clone())
        elif new is None:
            with grad_mode.no_grad():
                new = self.clone()
            new = _rewrap_like(self, new)
            new._vc[0] += 1   # PyTorch fills the copy's storage with `set_`: version 1
            if self._view is None and type(self._storage) is Storage:
                memo[id(self._storage)] = new
        new._requires_grad = self.requires_grad if self.is_leaf else False
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        new.__dict__.update(__import__("copy").deepcopy(self.__dict__, memo))
        memo[id(self)] = new
        return new

    def _deepcopy_alias(self, memo):
        """As PyTorch's deepcopy copies a storage once per `memo`, a view, or a tensor whose
        storage was copied already, aliases that copy (None: copy by cloning)."""
        storage = self._storage
        if type(storage) not in (Storage, LaidOutStorage) or (self._view is None and
                                                               id(storage) not in memo):
            return None
        root = memo.get(id(storage))
        if root is None:   # JAX arrays are immutable: the new storage may hold the same one
            root = _wrap(storage.data, device=storage.device)
            root._vc[0] += 1   # (as a cloned copy: version 1)
            memo[id(storage)] = root
        new = _alias(root, view=self._view, cls=type(self))
        new._base = None
        return new

    def __reduce_ex__(self, proto):
        # Plain pickling (multiprocessing, copy): rebuild from a NumPy copy (a subclass
        # instance as its class, with its attributes).
        data = self._data
        bits = self._view.bits() if self._view is not None else 0
        if bits and not self.is_meta:   # its memory, the bits set again on load (PyTorch's)
            from ._ops.conj_views import raw_values
            data = raw_values(self)
        args = (data if self.is_meta else np.asarray(data), str(self.device),
                self.requires_grad)
        if type(self) is not Tensor:
            rebuild, args = _rebuild_as, (type(self), args, self.__dict__)
        else:
            rebuild = _rebuild
        if bits:
            return (_rebuild_with_bits, (rebuild, args, bits))
        return (rebuild, args)

    def __getstate__(self):
        return None

    def __dlpack__(self, stream=None, **kwargs):
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __jax_array__(self):
        return self._data

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            name = dt.type_name(self.dtype)
            return name.replace("torch.", "torch.meta.", 1) if self.is_meta else name
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1].replace("Tensor", "")
            by_name = {d._legacy: d for d in dt.ALL}
            if name not in by_name or not dtype.endswith("Tensor"):
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = by_name[name]
        elif isinstance(dtype, type) and hasattr(dtype, "device_type"):   # torch.HalfTensor
            if dtype.device_type != "cpu":
                return self.to(dtype.device_type, dtype.dtype)
            dtype = dtype.dtype
        return self.to(dtype)

    def cpu(self, memory_format=None):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return self.to("cuda" if device is None else _device_cls(
            device if not isinstance(device, int) else f"cuda:{device}"))


def install(cls):
    """Copy the methods onto `cls` (Tensor) itself, not as a base class: `overrides` routes the
    methods it finds in `vars(Tensor)`. Each is named as if written in Tensor's body
    (`Tensor.<name>`: Python's argument errors and bound-method reprs show that name)."""
    every_class = vars(type("every_class", (), {}))   # (__module__, __dict__, __doc__, ...)
    for name, value in vars(_ConversionMethods).items():
        if name in every_class:
            continue
        (value.fget if isinstance(value, property) else value).__qualname__ = "Tensor." + name
        setattr(cls, name, value)


# dtypes NumPy lacks (ml_dtypes has them: torchish's own code reads them through `host_numpy`)
_NO_NUMPY = frozenset({dt.bfloat16}) | dt.FLOAT8


def host_numpy(tensor):
    """`tensor`'s values as a NumPy array for torchish's own code, whatever its dtype (bfloat16
    and float8 as ml_dtypes arrays, which `numpy()` refuses as PyTorch does); no check of
    requires_grad or device. A CPU tensor's array shares its memory where `numpy()`'s would."""
    if tensor.dtype not in _NO_NUMPY and tensor.device.type == "cpu" and \
            not isinstance(tensor._data, jax.core.Tracer):
        shared = numpy_of(tensor)   # the array and the tensor share memory, as in PyTorch
        if shared is not None:
            return shared
    return np.asarray(tensor._data)


_VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
              "over calling .item() on a Tensor, please try to rewrite what you're doing with "
              "other operations. If error is occurring somewhere inside PyTorch internals, "
              "please file a bug report.")


def _rebuild_with_bits(rebuild, args, bits):
    """Unpickle a tensor whose conjugate / negative bits were set (`bits`, as `View.bits`)."""
    from ._ops.conj_views import set_bits
    from ._views import CONJ, NEG
    return set_bits(rebuild(*args), conj=bool(bits & CONJ), neg=bool(bits & NEG))


def _rewrap_like(template, new):
    if type(template) is not Tensor and type(new) is Tensor:
        t = _alias(new, cls=type(template))
        t.__dict__.update(getattr(template, "__dict__", {}))
        return t
    return new


def _real_part(value, ctype):
    """A complex value as a real number, as PyTorch's Scalar conversion (only if exact)."""
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return value.real
    return value


def _to_python(arr, d):
    if d is dt.bool:
        return bool(arr)
    if d.is_complex:
        return complex(arr)
    if d.is_floating_point:
        return float(arr)
    return int(arr)
