"""Top-level `torch.*` functions that are not tensor ops: predicates and global switches; and
the constants `torch.pi`, `e`, `inf`, `nan`, `newaxis`."""
import contextlib
import functools
import math
import os

import jax

from ._frombuffer import frombuffer  # noqa: F401
from ._tensor import Tensor

__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel", "typename",
           "is_storage", "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "autocast", "set_default_tensor_type", "finfo",
           "iinfo", "frombuffer", "norm_except_dim", "_weight_norm", "pi", "e", "inf", "nan",
           "newaxis", "set_warn_always", "is_warn_always_enabled", "set_anomaly_enabled",
           "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum", "SymInt", "SymFloat", "SymBool", "OutOfMemoryError", "AcceleratorError",
           "get_device_module", "compiled_with_cxx11_abi", "has_mkl", "has_lapack",
           "has_openmp", "has_spectral", "_check", "_check_with", "_check_value",
           "_check_index", "_check_type", "_check_not_implemented", "_check_is_size",
           "_check_tensor_all", "_check_tensor_all_with", "_assert"]

# as torch/__init__.py: Python's floats (torch.pi is math.pi); `x[:, torch.newaxis]` is None
pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_storage(obj):
    from ._storage import Storage, TypedStorage
    return isinstance(obj, (Storage, TypedStorage))


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


def numel(input):
    return input.numel()


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + "." + type(obj).__qualname__


_threads = [1]
_threads_set = [False]


def set_num_threads(n):
    """PyTorch's intra-op thread count (XLA chooses its own thread pool). Some of PyTorch's
    CPU kernels split their work by it, with effects on the numbers (half softmax) and on
    which kernel raises (see multithreaded): those follow it."""
    changed = get_num_threads() != int(n)
    _threads[0] = int(n)
    _threads_set[0] = True
    if changed:   # (softmax plans bake the work split in)
        from ._ops.registry import REGISTRY
        REGISTRY["softmax"].plans.clear()


@functools.cache
def _default_threads():
    """PyTorch's default: OMP_NUM_THREADS, else one thread per physical core."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        with open("/proc/cpuinfo") as f:
            cores, package = set(), None
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "physical id":
                    package = value.strip()
                elif key.strip() == "core id":
                    cores.add((package, value.strip()))
        if cores:
            return len(cores)
    except OSError:
        pass
    return os.cpu_count() or 1


def multithreaded():
    """Whether PyTorch's intra-op pool would have several threads (some of its kernel choices,
    hence their error messages, depend on it)."""
    return get_num_threads() > 1


def get_num_threads():
    return _threads[0] if _threads_set[0] else _default_threads()


set_num_interop_threads = set_num_threads
get_num_interop_threads = get_num_threads

_deterministic = [False, False]   # (enabled, warn_only): JAX's CPU kernels are deterministic


def use_deterministic_algorithms(mode, *, warn_only=False):
    for name, flag in (("mode' (position 1)", mode), ("warn_only'", warn_only)):
        if type(flag) is not bool:
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name} must be bool, "
                            f"not {type(flag).__name__}")
    _deterministic[:] = [mode, warn_only]


def are_deterministic_algorithms_enabled():
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic[1]


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    elif debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _deterministic[:] = [debug_mode > 0, debug_mode == 1]


def get_deterministic_debug_mode():
    return (2 - _deterministic[1]) if _deterministic[0] else 0


_PRECISION = {"highest": "highest", "high": "high", "medium": "bfloat16"}
_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """PyTorch's switch, mapped onto JAX's default matmul precision ('high' allows TF32)."""
    if precision not in _PRECISION:
        raise RuntimeError(f"Invalid precision {precision}")
    _precision[0] = precision
    jax.config.update("jax_default_matmul_precision", _PRECISION[precision])


def get_float32_matmul_precision():
    return _precision[0]


@contextlib.contextmanager
def autocast(device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
    """Accepted for compatibility; computations keep their dtypes (no automatic casting)."""
    yield


def set_default_tensor_type(t):
    from . import _dtype
    name = t if isinstance(t, str) else t.__name__
    if "Double" in name:
        _dtype.set_default_dtype(_dtype.float64)
    elif "Float" in name:
        _dtype.set_default_dtype(_dtype.float32)


class _TypeInfo:
    """PyTorch's finfo/iinfo objects: read-only attributes, equal when their dtypes are (and,
    so, unhashable)."""

    def _set(self, **values):
        self.__dict__.update(values)

    def __setattr__(self, name, value):
        if name in self.__dict__:
            raise AttributeError(f"attribute '{name}' of 'torch.{type(self).__name__}' "
                                 f"objects is not writable")
        raise AttributeError(f"'torch.{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        self.__setattr__(name, None)

    def __getattr__(self, name):
        raise AttributeError(f"'torch.{type(self).__name__}' object has no attribute '{name}'")

    def __eq__(self, other):
        return type(other) is type(self) and self.dtype == other.dtype

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        raise TypeError(f"unhashable type: 'torch.{type(self).__name__}'")


def _dtype_arg(fn, value):
    from . import _dtype as dt
    if not isinstance(value, dt.dtype):
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be torch.dtype, not "
                        f"{type(value).__name__}")
    return value


_DEFAULT = object()   # finfo() is the default dtype's; finfo(None) a TypeError


class finfo(_TypeInfo):
    """`torch.finfo(dtype)`: machine limits of a floating dtype (of its real part if complex)."""

    def __init__(self, type=_DEFAULT):
        from . import _dtype as dt
        d = dt.get_default_dtype() if type is _DEFAULT else _dtype_arg("finfo", type)
        if d.is_complex:
            d = d.to_real()
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        import ml_dtypes
        info = ml_dtypes.finfo(d.np)
        # PyTorch's float8_e5m2fnuz eps is 2**-3 (ml_dtypes: 2**-2; the other fields agree)
        eps = 0.125 if d.name == "float8_e5m2fnuz" else float(info.eps)
        self._set(bits=int(info.bits), eps=eps, max=float(info.max), min=float(info.min),
                  tiny=float(info.smallest_normal), smallest_normal=float(info.smallest_normal),
                  # PyTorch rounds to a power of ten: 10 ** -floor(-log10(eps))
                  resolution=10.0 ** -int(-math.log10(eps)), dtype=d.name)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo(_TypeInfo):
    """`torch.iinfo(dtype)`: the range of an integer dtype."""

    def __init__(self, type):
        _dtype_arg("iinfo", type)
        if type.name == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        import numpy as np
        info = np.iinfo(type.np)
        self._set(bits=int(info.bits), max=int(info.max), min=int(info.min), dtype=type.name)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of `v` over every dim but `dim` (size 1 elsewhere); over all of `v` for
    dim=-1. PyTorch's composite: flatten to 2-D, norm along the other dim, view back."""
    if dim == -1:
        from ._ops import nn_norm
        return nn_norm._norm_all(v, pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(
            [v.size(0)] + [1] * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(
            [1] * (v.dim() - 1) + [v.size(-1)])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """`v * (g / ||v||)`, the norm taken over every dim but `dim` (weight normalization)."""
    from ._ops import nn_norm
    half = any(t.dtype.is_floating_point and t.dtype.itemsize == 2 for t in (v, g))
    if not half and v.dim() and (dim == 0 or dim == v.dim() - 1):
        return nn_norm._weight_norm_interface(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))


def set_warn_always(b):
    """Warnings PyTorch gives once per process (TORCH_WARN_ONCE) are given every time."""
    from ._warnings import _WARN_ALWAYS
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    from ._warnings import _WARN_ALWAYS
    return _WARN_ALWAYS[0]


def set_anomaly_enabled(enabled, check_nan=True):
    from .autograd import anomaly
    anomaly._enabled[0], anomaly._check_nan[0] = bool(enabled), bool(check_nan)


# ---- symbolic-shape helpers: torchish traces with concrete shapes, so a size is a plain int
# (nothing is a SymInt) and these are Python's own operations (with PyTorch's result types)

class SymInt:
    """A symbolic size; torchish's sizes are always concrete ints."""


class SymFloat:
    pass


class SymBool:
    pass


def sym_int(a):
    return math.trunc(a) if isinstance(a, float) else int(a)


def sym_float(a):
    return float(a)


def sym_max(a, b):
    """max, a float when either is one (PyTorch's promotion)."""
    result = max(a, b)
    return float(result) if isinstance(a, float) or isinstance(b, float) else result


def sym_min(a, b):
    result = min(a, b)
    return float(result) if isinstance(a, float) or isinstance(b, float) else result


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return sum(args)


class OutOfMemoryError(RuntimeError):
    """`torch.OutOfMemoryError` (also `torch.cuda.OutOfMemoryError`)."""


class AcceleratorError(RuntimeError):
    pass


def out_of_memory(exc, device_type):
    """PyTorch's error for XLA's RESOURCE_EXHAUSTED `exc` on a device of `device_type`
    (`torch.OutOfMemoryError` on an accelerator, the CPU allocator's RuntimeError on the CPU),
    or None for any other error."""
    import re
    text = str(exc)
    if not text.startswith("RESOURCE_EXHAUSTED"):
        return None
    found = re.search(r"allocat\w* (\d+) bytes", text)
    size = int(found.group(1)) if found else None
    if device_type == "cpu":
        return RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: "
                            f"can't allocate memory: you tried to allocate {size} bytes. Error "
                            "code 12 (Cannot allocate memory)")
    what = "" if size is None else f" Tried to allocate {_memory_size(size)}."
    return OutOfMemoryError(f"CUDA out of memory.{what} ({text})")


def _memory_size(n):
    """PyTorch's format_size: bytes as 'N bytes', KiB, MiB or GiB with two decimals."""
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} bytes"


def get_device_module(device=None):
    """The `torch.<type>` module of a device (`cpu`, `cuda`, ...); default: the CPU's."""
    import importlib
    from ._device import device as _device
    kind = "cpu" if device is None else _device(device).type
    return importlib.import_module("torchish." + kind)


def compiled_with_cxx11_abi():
    return True


has_mkl = has_lapack = has_openmp = has_spectral = True   # (PyTorch's build flags)

# ---- torch._check and kin: the asserts of fake kernels and shape checks in model code. A
# condition is a Python bool (sizes are concrete here); only a failing one looks at the message.

def _check_with(error_type, cond, message=None):
    if not isinstance(cond, (bool, SymBool)):
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not (isinstance(error_type, type) and issubclass(error_type, Exception)
            and not issubclass(error_type, Warning)):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, "
                             f"got {error_type}")
    if message is None:
        text = ("Expected cond to be True, but got False. (Could this error message be "
                "improved? If so, please report an enhancement request to PyTorch.)")
    elif not callable(message):
        raise TypeError("message must be a callable")
    else:
        text = str(message())
    raise error_type(text)


def _check(cond, message=None):
    _check_with(RuntimeError, cond, message)


def _check_value(cond, message=None):
    _check_with(ValueError, cond, message)


def _check_index(cond, message=None):
    _check_with(IndexError, cond, message)


def _check_type(cond, message=None):
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond, message=None):
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i, message=None, *, max=None):
    import warnings
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with "
                  "guard_size_oblivious.     Use _check(i >= 0) instead.", FutureWarning,
                  stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)


def _check_tensor_all_with(error_type, cond, message=None):
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    from ._dtype import bool as _bool
    if cond.dtype != _bool:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    flag = cond.all()._data
    if isinstance(flag, jax.core.Tracer):
        return   # a traced condition has no value to check (PyTorch defers it to run time)
    _check_with(error_type, bool(flag), message)


def _check_tensor_all(cond, message=None):
    _check_tensor_all_with(RuntimeError, cond, message)


def _assert(condition, message):
    """torch._assert (torchvision's models check shapes with it): Python's `assert`, kept
    under `python -O`; a traced tensor condition has no value to check."""
    if isinstance(condition, Tensor) and isinstance(condition._data, jax.core.Tracer):
        return
    if not condition:
        raise AssertionError(message)


for _cls in (SymInt, SymFloat, SymBool, OutOfMemoryError, AcceleratorError):
    _cls.__module__ = "torchish"   # (torch.OutOfMemoryError; PyTorch's name under its alias)
