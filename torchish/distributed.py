"""`torchish.distributed`: single-process only (no process groups)."""
from ._unsupported import module_getattr


def is_available():
    return False


def is_initialized():
    return False


def get_rank(group=None):
    return 0


def get_world_size(group=None):
    return 1


__getattr__ = module_getattr(__name__)
