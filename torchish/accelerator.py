"""`torchish.accelerator`: the current accelerator is a JAX GPU when there is one."""
from . import cuda
from ._device import device
from ._unsupported import module_getattr


def is_available():
    return cuda.is_available()


def current_accelerator(check_available=False):
    if cuda.is_available():
        return device("cuda")
    return None


def device_count():
    return cuda.device_count()


def synchronize(device=None):
    if not cuda.is_available():   # (PyTorch asks for the current accelerator's index first)
        raise RuntimeError("Cannot access accelerator device when none is available.")
    cuda.synchronize()


__getattr__ = module_getattr(__name__)
