"""`torch.mps`: Apple's Metal backend, which torchish (on JAX) never has: reports no device, and
its seeding and cache calls do nothing, as PyTorch's do on a machine without one."""
from ._unsupported import module_getattr


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    int(seed)   # (refuses what is not a number)


def seed():
    pass


def synchronize():
    pass


def empty_cache():
    pass


def current_allocated_memory():
    return 0


def driver_allocated_memory():
    return 0


__getattr__ = module_getattr(__name__)
