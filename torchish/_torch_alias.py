"""Make `import torch` (and every `torch.*` submodule) resolve to torchish.

Used by `python -m torchish SCRIPT`; call `install()` to do the same in-process.
"""
import importlib
import importlib.abc
import importlib.machinery
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
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (real == exc.name or real.startswith(exc.name + ".")):
                raise
            return stub_module(spec.name)
        present_as_torch()
        return module

    def exec_module(self, module):
        pass


class _SubmoduleAliasFinder(_TorchAliasFinder):
    """After a plain `sys.modules["torch"] = torchish`, `import torch.nn` would load a second
    copy of `torchish/nn` (with its own grad-mode state, through relative imports) under the
    name `torch.nn`. This finder, always installed, maps `torch.X` to `torchish.X` instead,
    and only while `torch` is torchish: real PyTorch's imports are never touched."""

    def find_spec(self, fullname, path, target=None):
        if getattr(sys.modules.get("torch"), "__name__", None) != "torchish":
            return None
        if fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        if fullname.startswith("torchish."):
            return _presenting_spec(fullname, path)
        return None


def _presenting_spec(fullname, path):
    """The spec of a torchish submodule imported under its own name while `torch` is torchish
    (`from torch.nn.utils import prune` imports `torchish.nn.utils.prune`, the package's own
    name): once it has run, its classes take torch's names too."""
    spec = importlib.machinery.PathFinder.find_spec(fullname, path)
    if spec is not None and hasattr(spec.loader, "exec_module"):
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            present_as_torch(finished=fullname)
        spec.loader.exec_module = exec_module
    return spec


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
    present_as_torch()


_PRESENTED = set()   # torchish modules whose classes already carry torch's module names


def present_as_torch(finished=None):
    """Where `torch` is torchish, its classes name themselves as PyTorch's do: `type(x)` prints
    `<class 'torch.Tensor'>`, `<class 'torch.nn.modules.linear.Linear'>`, and argument errors
    name `torch.nn.modules.linear.Linear`. Pickles then refer to `torch.*` names too, which
    resolve here through the alias and load in PyTorch. Classes of private modules that torch
    exports (Tensor, Size, dtype, device) take torch's top-level name."""
    top = sys.modules["torchish"]
    exported = {id(v) for v in vars(top).values() if isinstance(v, type)}
    for name, module in list(sys.modules.items()):
        if name in _PRESENTED or module is None or not (
                name == "torchish" or name.startswith("torchish.")):
            continue
        if name != finished and getattr(getattr(module, "__spec__", None), "_initializing",
                                        False):
            continue   # (a package whose import is under way: presented once it is done)
        _PRESENTED.add(name)
        private = any(part.startswith("_") for part in name.split("."))
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                value.__module__ = "torch" if private and id(value) in exported else \
                    "torch" + name[len("torchish"):]
