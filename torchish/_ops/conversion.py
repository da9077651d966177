"""dtype and device conversion: `cast` (PyTorch's CPU conversion rules), `Tensor.to` with its
overloads, `type_as` and the `float()`/`long()`/... methods."""
import builtins
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit
from .. import _dtype as dt, _meta
from .._device import device as Device, jax_device
from .._warnings import user_stacklevel
from .._tensor import Tensor, contiguous_format, preserve_format
from .._memory_layout import like_layout
from .registry import Promote, op, call_jax
from .plans import bool_to
from . import float8, unsigned_support
from .result_layout import suggest_memory_format

P = Promote

_complex_to_real_warned = [False]


def warn_if_complex_to_real(src, dst):
    """PyTorch's copy kernel warns (once per process) when a cast drops imaginary parts."""
    if src.is_complex and not dst.is_complex and not _complex_to_real_warned[0]:
        _complex_to_real_warned[0] = True
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=user_stacklevel())


def cast(x, np_dtype):
    """`x.astype`, taking the real part first for complex -> real (as PyTorch; JAX deprecates
    the implicit form), and float -> signed or 8-bit integers as PyTorch's CPU kernels convert
    (x86 truncation: out of range or NaN is the most negative value, and narrower integers
    take the low bits of the int32; XLA would saturate)."""
    if jnp.iscomplexobj(x) and not jnp.issubdtype(np_dtype, jnp.complexfloating):
        x = jnp.real(x)
    target = np.dtype(np_dtype)
    if x.dtype != target and float8.is_float8(target):
        return float8.to_float8(x, target)
    from_float8 = x.dtype != target and float8.is_float8(x.dtype)
    if from_float8:   # (read in float32; its non-finite values give uint32 0, as float16's)
        x = float8.from_float8(x, target)
    if jnp.issubdtype(x.dtype, jnp.floating) and target.kind in "iu":
        fp16 = x.dtype == np.float16 or from_float8
        if x.dtype.itemsize < 4:   # (half types: compared in float32, where the limits fit)
            x = x.astype(np.float32)
        if target.kind == "i" or target.itemsize <= 2:
            wide = np.int64 if target == np.int64 else np.int32
            return unsigned_support.truncate(x, wide).astype(target)
        return unsigned_support.float_to_unsigned(x, target, fp16)
    if x.dtype == bool and target.kind != "b":
        return bool_to(x, np_dtype)
    return x.astype(np_dtype)


@op(promote=P.NONE, grad_fn="ToCopyBackward0", function=False, method=False, saves=())
def _to_dtype(input, dtype, memory_format=None):
    # (memory_format: read by its layout rule, result_layout.preserve)
    return cast(input, dtype.np)


_TO_OVERLOADS = []   # (read on first use)
_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy"})


def _to_common(args, kwargs):
    """`_parse_to` for the common calls, which the first two overloads take: a device and a
    dtype (or either) by position or keyword, the flags as bools by keyword; else None."""
    for k, v in kwargs.items():
        if k not in _TO_KEYWORDS or (k[0] in "nc" and v.__class__ is not builtins.bool):
            return None
    if not args:
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
    elif len(args) == 1 and isinstance(args[0], dt.dtype):
        if "device" in kwargs or "dtype" in kwargs:
            return None
        device, dtype = None, args[0]
    elif len(args) <= 2 and isinstance(args[0], (str, Device)) and "device" not in kwargs:
        if len(args) == 2 and "dtype" in kwargs:
            return None
        device, dtype = args[0], args[1] if len(args) == 2 else kwargs.get("dtype")
    else:
        return None
    if not (device is None or isinstance(device, (str, Device))) or not (
            dtype is None or isinstance(dtype, dt.dtype)):
        return None
    return dtype, None if device is None else Device(device), kwargs.get("copy", False)


def _parse_to(args, kwargs):
    """(dtype, device, copy) of a `Tensor.to` call, as PyTorch's parser reads its overloads
    (device and dtype; dtype; tensor; each with non_blocking and copy)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        return args[0].dtype, args[0].device, False
    common = _to_common(args, kwargs)
    if common is not None:
        return common
    from .overloads import parse, table
    if not _TO_OVERLOADS:
        _TO_OVERLOADS.extend(table("to", True))
    sigs = _TO_OVERLOADS
    try:
        index, bound = parse("to", sigs, args, kwargs)
    except TypeError as error:
        # the parser lets a number stand for the tensor (as a wrapped number: float64 for a
        # float, ...), whose overload it tries last
        first = args[0] if args else kwargs.get("tensor")
        if not isinstance(first, (int, float, builtins.complex, np.number, np.bool_)):
            raise
        wrapped = _number_as_tensor(first)
        try:
            bound = parse("to", sigs[2:], (wrapped,) + tuple(args[1:]) if args else args,
                          kwargs if args else dict(kwargs, tensor=wrapped))[1]
        except TypeError:
            raise error from None
        index = 2
    if index == 2:
        return bound["tensor"].dtype, bound["tensor"].device, bound.get("copy", False)
    device = bound.get("device")
    return (dt.from_python_type(bound.get("dtype")), None if device is None else Device(device),
            bound.get("copy", False))


def _number_as_tensor(value):
    """A number as PyTorch's parser wraps it for a Tensor parameter: a 0-d CPU tensor of
    int64, float64, complex128 or bool."""
    kind = builtins.bool if isinstance(value, (builtins.bool, np.bool_)) else int if \
        isinstance(value, (int, np.integer)) else builtins.complex if isinstance(
            value, (builtins.complex, np.complexfloating)) else float
    from .creation_data import tensor   # (creation_data imports this module)
    return tensor(kind(value), dtype=dt.from_python_type(kind), device="cpu")


def to(self, *args, **kwargs):
    memory_format = kwargs.pop("memory_format", None)
    dtype, device, copy = _parse_to(args, kwargs)
    if memory_format is preserve_format:
        memory_format = None
    new_dtype = dtype is not None and dtype is not self.dtype
    new_device = device is not None and _norm(device) != self.device
    if not (new_dtype or new_device or copy) and (memory_format is None or memory_format is (
            suggest_memory_format(self) or contiguous_format)):
        return self   # (ATen's to_will_alias: a format the tensor already suggests is no copy)
    out = self
    if new_dtype:
        warn_if_complex_to_real(self.dtype, dtype)
        out = _to_dtype(out, dtype, memory_format)   # (laid out in memory_format by its rule)
    if new_device:
        dev = _norm(device)
        if self.device.type == "meta":
            raise NotImplementedError(_meta.NO_DATA)
        if dev.type == "meta":
            out = call_jax("ToCopyBackward0", lambda a: _meta.empty(a.shape, a.dtype), [out])
            out._storage.device = _meta.META
            return out
        target = jax_device(dev)
        out = call_jax("ToCopyBackward0", lambda a: jax.device_put(a, target), [out])
        out._storage.device = dev
        if memory_format is not None:
            out = like_layout(out, self, memory_format)
    if out is self:
        # copy=True or a format the tensor does not suggest (x.to(memory_format=
        # torch.channels_last)): one copy, recorded as PyTorch's _to_copy
        out = call_jax("ToCopyBackward0", _copy, [self])
        if not isinstance(out._storage.data, jax.core.Tracer):   # (traced: no strides to keep)
            out = like_layout(out, self, memory_format)
    return out


_copy = eager_jit(jnp.copy)   # (an EagerJit: on a meta tensor it gives its shape)


def _norm(device):
    if device.type == "cuda" and device.index is None:
        return Device("cuda", 0)
    return device


def _conversion(dtype, name):
    def convert(self, memory_format=None):
        return to(self, dtype, memory_format=memory_format)
    convert.__name__ = convert.__qualname__ = name   # (Python's TypeErrors name it)
    return convert


def _bind():
    Tensor.to = to
    Tensor.type_as = lambda self, other: to(self, device=other.device, dtype=other.dtype)
    for name, d in (("float", dt.float32), ("double", dt.float64), ("half", dt.float16),
                    ("bfloat16", dt.bfloat16), ("long", dt.int64), ("int", dt.int32),
                    ("short", dt.int16), ("char", dt.int8), ("byte", dt.uint8),
                    ("bool", dt.bool), ("cfloat", dt.complex64), ("cdouble", dt.complex128)):
        setattr(Tensor, name, _conversion(d, name))


_bind()
