"""`torchish.cuda`: CUDA devices are JAX's GPU devices."""
from .._device import cuda_device_count, device as _device
from .._unsupported import missing, module_getattr
from .._functions import OutOfMemoryError  # noqa: F401


def is_available():
    return cuda_device_count() > 0


def device_count():
    return cuda_device_count()


# Without a CUDA device these calls fail as in a CPU-only PyTorch build (the reference): its
# `_lazy_init` asserts, and the few functions that reach for a missing torch._C binding first
# raise that AttributeError.
_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _require_cuda():
    if not is_available():
        raise AssertionError(_NOT_COMPILED)


def _missing_binding(name):
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def init():
    _require_cuda()


def current_device():
    _require_cuda()
    return 0


def get_device_name(device=None):
    _require_cuda()
    from .._device import jax_device
    return jax_device(_device("cuda", 0 if device is None else _device(device).index or 0)
                      ).device_kind


def get_device_capability(device=None):
    _require_cuda()
    raise missing(__name__, "get_device_capability")


def get_device_properties(device=None):
    _require_cuda()
    raise missing(__name__, "get_device_properties")


def synchronize(device=None):
    _require_cuda()
    import jax
    jax.effects_barrier()


def set_device(device):
    if not isinstance(device, int):
        d = _device(device)
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        device = d.index if d.index is not None else -1
    if device >= 0 and not is_available():   # (a negative index is a no-op in PyTorch)
        raise _missing_binding("_cuda_setDevice")


def manual_seed(seed):
    """Seeds torchish's generator (torchish draws CUDA randoms from the CPU algorithm); without
    a GPU nothing, as PyTorch (its CUDA seed waits for a CUDA device, the CPU stream goes on)."""
    if not is_available():
        int(seed)   # (still refuses what is not a number)
        return
    from .. import random
    random.manual_seed(seed)


manual_seed_all = manual_seed


def empty_cache():
    pass


def is_bf16_supported(including_emulation=True):
    return is_available()


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


def reset_peak_memory_stats(device=None):
    if not is_available():
        raise _missing_binding("_cuda_resetPeakMemoryStats")


__getattr__ = module_getattr(__name__)
from . import amp  # noqa: E402,F401


# `torch.cuda.FloatTensor` and kin: isinstance checks (False for CPU tensors) and, with a GPU,
# constructors
from .._ops.legacy_tensor_types import _legacy_types  # noqa: E402
globals().update(_legacy_types("torch.cuda", "cuda"))
