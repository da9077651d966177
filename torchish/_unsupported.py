"""What happens when code asks for a PyTorch API torchish does not have (yet)."""
import types


class UnsupportedError(NotImplementedError, AttributeError):
    """Raised for a PyTorch name torchish lacks.

    A NotImplementedError naming the API; also an AttributeError so that `hasattr(torch, x)`
    and `getattr(torch, x, default)` keep working in feature-detecting code.
    """


def missing(module_name, attr):
    public = "torch" + module_name[len("torchish"):] if module_name.startswith("torchish") \
        else module_name
    return UnsupportedError(f"{public}.{attr} is not supported by torchish yet")


def module_getattr(module_name):
    """A module-level `__getattr__` raising UnsupportedError for unknown public names."""
    def __getattr__(name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise missing(module_name, name)
    return __getattr__


def stub_module(name):
    """A placeholder for a torch submodule torchish does not provide."""
    mod = types.ModuleType(name)
    mod.__getattr__ = module_getattr(name)
    mod.__path__ = []
    return mod
