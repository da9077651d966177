"""`torch.xpu`: Intel's GPU backend, which torchish (on JAX) never has: reports no device, and
its seeding and cache calls do nothing, as PyTorch's do on a machine without one."""
from ._unsupported import module_getattr


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    int(seed)   # (refuses what is not a number)


manual_seed_all = manual_seed


def empty_cache():
    pass


__getattr__ = module_getattr(__name__)
