"""The pre-2.4 spellings `torch.cuda.amp.autocast` and `torch.cpu.amp.autocast`: the same
regions for one device type, with PyTorch's FutureWarning."""
import warnings

from .. import _dtype as dt
from .autocast_mode import autocast, custom_bwd, custom_fwd


def _warn(old, new):
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


class cuda_autocast(autocast):
    def __init__(self, enabled=True, dtype=dt.float16, cache_enabled=True):
        _warn("torch.cuda.amp.autocast", "torch.amp.autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class cpu_autocast(autocast):
    def __init__(self, enabled=True, dtype=dt.bfloat16, cache_enabled=True):
        _warn("torch.cpu.amp.autocast", "torch.amp.autocast('cpu', args...)")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    _warn("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd):
    _warn("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return custom_bwd(bwd, device_type="cuda")
