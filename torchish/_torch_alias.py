"""Make `import torch` (and every `torch.*` submodule) resolve to torchish.

Used by `python -m torchish SCRIPT`; call `install()` to do the same in-process.
"""
import importlib
import importlib.abc
import importlib.util
import sys

from ._unsupported import stub_module


class _TorchAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    # the module is torchish's own (one copy, one grad mode), so there is nothing to execute

    def create_module(self, spec):
        real = "torchish" + spec.name[len("torch"):]
        try:
            return importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (real == exc.name or real.startswith(exc.name + ".")):
                raise
            return stub_module(spec.name)

    def exec_module(self, module):
        pass


class _SubmoduleAliasFinder(_TorchAliasFinder):
    """After a plain `sys.modules["torch"] = torchish`, `import torch.nn` would load a second
    copy of `torchish/nn` (with its own grad-mode state, through relative imports) under the
    name `torch.nn`. This finder, always installed, maps `torch.X` to `torchish.X` instead,
    and only while `torch` is torchish: real PyTorch's imports are never touched."""

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torch.") and getattr(sys.modules.get("torch"), "__name__",
                                                     None) == "torchish":
            return importlib.util.spec_from_loader(fullname, self)
        return None


def install_submodule_alias():
    if not any(isinstance(f, _SubmoduleAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SubmoduleAliasFinder())


def install():
    """Alias `torch` to torchish in this interpreter (before anything imports real torch)."""
    # exact type: torchish's own import installs the _SubmoduleAliasFinder subclass first
    if any(type(f) is _TorchAliasFinder for f in sys.meta_path):
        return
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _TorchAliasFinder())
    import torchish
    sys.modules["torch"] = torchish
