"""`torch.nn.utils.skip_init`: build a module without initializing its parameters."""
import inspect

import torchish

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """The module with parameters left as they come (PyTorch's are uninitialised memory).
    Construction draws no random numbers: the generator's state is restored afterwards."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, torchish.nn.Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with torchish.random.fork_rng():
        return module_cls(*args, **kwargs)
