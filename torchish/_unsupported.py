"""What happens when code asks for a PyTorch API torchish does not have (yet)."""
import types

from ._torch_names import NAMES


class UnsupportedError(NotImplementedError, AttributeError):
    """Raised for a PyTorch name torchish lacks.

    A NotImplementedError naming the API; also an AttributeError so that `hasattr(torch, x)`
    and `getattr(torch, x, default)` keep working in feature-detecting code.
    """


def _public(module_name):
    return "torch" + module_name[len("torchish"):] if module_name.startswith("torchish") \
        else module_name


def missing(module_name, attr):
    return UnsupportedError(f"{_public(module_name)}.{attr} is not supported by torchish yet")


def module_getattr(module_name):
    """A module-level `__getattr__` for unknown names: UnsupportedError for a name PyTorch's
    module has, PyTorch's own AttributeError for one it lacks too."""
    public = _public(module_name)

    def __getattr__(name):
        known = NAMES.get(public)
        if name.startswith("__") and name.endswith("__") or known is not None and \
                name not in known:
            raise AttributeError(f"module '{public}' has no attribute '{name}'")
        raise missing(module_name, name)
    return __getattr__


def stub_module(name):
    """A placeholder for a torch submodule torchish does not provide."""
    mod = types.ModuleType(name)
    mod.__getattr__ = module_getattr(name)
    mod.__path__ = []
    return mod
