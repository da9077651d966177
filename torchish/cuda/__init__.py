"""`torchish.cuda`: CUDA devices are JAX's GPU devices."""
from .._device import cuda_device_count, device as _device
from .._unsupported import module_getattr
from .._functions import OutOfMemoryError  # noqa: F401


def is_available():
    return cuda_device_count() > 0


def device_count():
    return cuda_device_count()


def current_device():
    return 0


def get_device_name(device=None):
    from .._device import jax_device
    return jax_device(_device("cuda", 0 if device is None else _device(device).index or 0)
                      ).device_kind


def synchronize(device=None):
    import jax
    jax.effects_barrier()


def set_device(device):
    pass


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


def reset_peak_memory_stats(device=None):
    pass


__getattr__ = module_getattr(__name__)
from . import amp  # noqa: E402,F401


# `torch.cuda.FloatTensor` and kin: isinstance checks (False for CPU tensors) and, with a GPU,
# constructors
from .._ops.legacy_tensor_types import _legacy_types  # noqa: E402
globals().update(_legacy_types("torch.cuda", "cuda"))
