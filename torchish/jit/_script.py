"""The objects `torch.jit.script` and `torch.jit.trace` hand back, run eagerly.

PyTorch compiles a module into a `RecursiveScriptModule` (a trace into a
`TopLevelTracedModule`): a new nn.Module, not an instance of the user's class, whose children
are script modules too, which shares the original's Parameter and buffer tensors but keeps
its own training flags, and whose repr names only each module's original class. torchish has
no TorchScript compiler, so the wrapper runs the original class's Python `forward` (and the
methods it calls) with the wrapper itself as `self`: `self.fc` is then the wrapped child and
`self.training` the wrapper's flag, as the compiled code would read them. A function becomes a
`ScriptFunction` calling the function. TorchScript's IR (`.code`, `.graph`) does not exist
here: asking for it is a clear UnsupportedError.
"""
import inspect
import warnings

from .._unsupported import missing
from ..nn import Module

# TorchScript's compiled forms, which torchish cannot produce
_IR_NAMES = frozenset({"code", "graph", "inlined_graph", "code_with_constants", "_c",
                       "schema", "save_to_buffer"})
# the Module internals a wrapper copies (its own dicts, the same tensors in them)
_OWN_DICTS = ("_parameters", "_buffers", "_non_persistent_buffers_set", "_backward_pre_hooks",
              "_backward_hooks", "_forward_hooks", "_forward_hooks_with_kwargs",
              "_forward_hooks_always_called", "_forward_pre_hooks",
              "_forward_pre_hooks_with_kwargs", "_state_dict_hooks", "_state_dict_pre_hooks",
              "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


class ScriptModule(Module):
    """Base of scripted modules. `class M(torch.jit.ScriptModule)` is a plain nn.Module here
    (its `script_method`s run as written); what `script` and `trace` return are subclasses."""


class _Wrapper:
    """The methods of RecursiveScriptModule and TracedModule, copied into each (PyTorch's
    TracedModule is no RecursiveScriptModule, and neither has a base between it and
    ScriptModule)."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} is made by torch.jit.script or "
                           f"torch.jit.trace, not directly")

    @classmethod
    def _wrap(cls, module, wrap_child):
        self = object.__new__(cls)
        state = dict(module.__dict__)
        for name in _OWN_DICTS:
            if name in state:
                state[name] = type(state[name])(state[name])
        state["_modules"] = {name: None if child is None else wrap_child(child)
                             for name, child in module._modules.items()}
        state["_script_class"] = type(module)
        object.__getattribute__(self, "__dict__").update(state)
        return self

    @property
    def original_name(self):
        return self.__dict__["_script_class"].__name__

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def forward(self, *args, **kwargs):
        return self.__dict__["_script_class"].forward(self, *args, **kwargs)

    def __getattr__(self, name):
        try:
            return Module.__getattr__(self, name)
        except AttributeError:
            pass
        if name in _IR_NAMES:
            raise missing("torchish.jit.ScriptModule", name)
        cls = self.__dict__.get("_script_class")
        attr = inspect.getattr_static(cls, name, None) if cls is not None else None
        if attr is not None and not (name.startswith("__") and name.endswith("__")):
            # the original class's methods and properties, with this module as self
            if isinstance(attr, (staticmethod, classmethod, property)) or \
                    hasattr(attr, "__get__"):
                return attr.__get__(self, type(self))
            return attr
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _magic(self, name, *args):
        method = getattr(self.__dict__["_script_class"], name, None)
        if method is None or getattr(Module, name, None) is method:
            raise NotImplementedError()
        return method(self, *args)

    # containers (Sequential, ModuleList, ModuleDict) keep Python's protocols
    def __iter__(self):
        return self._magic("__iter__")

    def __len__(self):
        return self._magic("__len__")

    def __getitem__(self, idx):
        return self._magic("__getitem__", idx)

    def __contains__(self, key):
        return self._magic("__contains__", key)

    def __bool__(self):
        return not hasattr(self.__dict__["_script_class"], "__len__") or len(self) > 0

    def save(self, f, _extra_files=None):
        save(self, f, _extra_files)

    def __reduce_ex__(self, protocol):
        # (pickled as its class and state: `jit.load` rebuilds it without __init__)
        return (_rebuild, (type(self), self.__dict__))


def _rebuild(cls, state):
    self = object.__new__(cls)
    object.__getattribute__(self, "__dict__").update(state)
    return self


def _wrapper_class(cls):
    for name, value in vars(_Wrapper).items():
        if name not in ("__dict__", "__weakref__", "__module__", "__qualname__", "__doc__") \
                and name not in vars(cls):
            setattr(cls, name, value)
    return cls


@_wrapper_class
class RecursiveScriptModule(ScriptModule):
    """What `torch.jit.script(module)` returns (see the module docstring)."""


@_wrapper_class
class TracedModule(ScriptModule):
    """A traced submodule: its repr keeps its original class name."""

    def _get_name(self):
        return self.original_name


class TopLevelTracedModule(TracedModule):
    """What `torch.jit.trace(module, ...)` returns."""


def _script_child(module):
    return module if isinstance(module, ScriptModule) else \
        RecursiveScriptModule._wrap(module, _script_child)


def _trace_child(module):
    return module if isinstance(module, ScriptModule) else \
        TracedModule._wrap(module, _trace_child)


def script_module(module):
    return _script_child(module)


def trace_module(module):
    if isinstance(module, ScriptModule):
        return module
    return TopLevelTracedModule._wrap(module, _trace_child)


class ScriptFunction:
    """A scripted or traced function: calls the Python function."""

    def __init__(self, fn):
        self._fn = fn
        self.name = getattr(fn, "__name__", "fn")
        self.qualified_name = "__torch__." + self.name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __getattr__(self, name):
        if name in _IR_NAMES:
            raise missing("torchish.jit.ScriptFunction", name)
        raise AttributeError(f"'torch.jit.ScriptFunction' object has no attribute '{name}'")

    def save(self, f, _extra_files=None):
        raise missing("torchish.jit.ScriptFunction", "save")


# PyTorch's C++ class prints as "<torch.jit.torch.jit.ScriptFunction object at 0x...>"
ScriptFunction.__module__ = "torch.jit"
ScriptFunction.__qualname__ = "torch.jit.ScriptFunction"


def script_function(fn):
    return fn if isinstance(fn, ScriptFunction) else ScriptFunction(fn)


_FORMAT = "torchish.jit/1"


def save(m, f, _extra_files=None):
    """Write a script or traced module (its class by reference, its parameters and state)
    with torchish.save; only `torch.jit.load` of torchish reads it back."""
    if not isinstance(m, (RecursiveScriptModule, TracedModule)):
        raise missing("torchish.jit", "save")
    from ..serialization import save as _save
    _save({"format": _FORMAT, "module": m, "extra_files": dict(_extra_files or {})}, f)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    from ..serialization import load as _load
    try:
        with warnings.catch_warnings():   # (torchish.load's own, about its read-only buffers)
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            archive = _load(f, map_location=map_location, weights_only=False)
    except RuntimeError as exc:
        if "TorchScript" in str(exc):   # (a real TorchScript archive: its code is TorchScript)
            raise missing("torchish.jit", "load") from exc
        raise
    if not (isinstance(archive, dict) and archive.get("format") == _FORMAT):
        raise RuntimeError("torch.jit.load: the file is no module saved by torch.jit.save")
    if _extra_files is not None:
        for key in _extra_files:
            _extra_files[key] = archive["extra_files"].get(key, "")
    module = archive["module"]
    for sub in module.modules():   # (PyTorch loads every module as a RecursiveScriptModule)
        if isinstance(sub, TracedModule):
            sub.__class__ = RecursiveScriptModule
    return module


__all__ = ["ScriptModule", "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule",
           "ScriptFunction", "script_module", "trace_module", "script_function", "save",
           "load"]
