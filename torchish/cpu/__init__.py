"""`torchish.cpu`: the CPU device module (always available; one device)."""
from . import amp  # noqa: F401
from .._unsupported import module_getattr


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    import jax
    jax.effects_barrier()


__getattr__ = module_getattr(__name__)
