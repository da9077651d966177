"""`torch.autocast` / `torch.amp.autocast`: regions where listed ops run in lower precision.

The state and the per-op casts live in `torchish._autocast` (the dispatcher reads them); this
module is the public API over that state, with PyTorch's checks and warnings.
"""
import functools
import warnings

from .. import _autocast as _ac
from .. import _dtype as dt

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type):
    from .._device import device
    if device_type in _ac.DEVICE_TYPES:
        return True
    device(device_type)   # PyTorch's error for a malformed device type
    return False


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


class autocast:
    """`with torch.autocast("cpu"):` or `@torch.autocast("cuda")`: inside, the ops PyTorch's
    autocast lists for the device type cast their floating inputs (see `torchish._autocast`).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        if enabled:
            if device_type == "cuda":
                from .. import cuda
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. "
                                  "Disabling autocast.", stacklevel=2)
                    enabled = False
                elif self.fast_dtype is dt.bfloat16 and not cuda.is_bf16_supported():
                    raise RuntimeError("Current CUDA Device does not support bfloat16. "
                                       "Please switch dtype to float16.")
            elif self.fast_dtype not in (dt.bfloat16, dt.float16):
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                    f"torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with torch.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# ---- the state functions torch exposes at top level -----------------------------------------

def is_autocast_enabled(device_type=None):
    return _ac.enabled.get("cuda" if device_type is None else device_type, False)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:   # the old one-argument form, for CUDA
        device_type, enabled = "cuda", device_type
    _ac.enabled[device_type] = bool(enabled)
    _ac.refresh()


def get_autocast_dtype(device_type):
    if device_type not in _ac.dtypes:
        is_autocast_available(device_type)
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return _ac.dtypes[device_type]


def set_autocast_dtype(device_type, dtype):
    _ac.dtypes[device_type] = dtype


def _deprecated(old, new):
    # PyTorch 2.13 warns (from C++, at the caller's line) for the per-device spellings
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _ac.dtypes["cpu"]


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _ac.dtypes["cuda"]


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _ac.enabled["cpu"]


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _ac.enabled["cpu"] = bool(enabled)
    _ac.refresh()


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _ac.dtypes["cpu"] = dtype


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _ac.dtypes["cuda"] = dtype


def is_autocast_cache_enabled():
    return _ac.state["cache_enabled"]


def set_autocast_cache_enabled(enabled):
    _ac.state["cache_enabled"] = bool(enabled)


def clear_autocast_cache():
    _ac.clear_cache()


def autocast_increment_nesting():
    _ac.state["nesting"] += 1
    return _ac.state["nesting"]


def autocast_decrement_nesting():
    _ac.state["nesting"] -= 1
    return _ac.state["nesting"]


# ---- custom autograd.Function helpers ---------------------------------------------------------

def _cast(value, device_type, dtype):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not dt.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's `forward`: with `cast_inputs`, inside an autocast region
    its floating inputs are cast to that dtype and it runs with autocast off."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not in_region:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's `backward`: it runs with the autocast state its forward
    ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
