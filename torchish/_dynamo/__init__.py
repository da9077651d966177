"""`torch._dynamo`: the names training scripts touch (reset, config, disable, explain, backends).

torchish has no bytecode-level compiler; `config` accepts PyTorch's settings by name. Those
`torchish.compile` reads: `capture_scalar_outputs` (`.item()` stays traced, as with
`fullgraph=True`), `suppress_errors` (a failing compile runs eagerly) and `recompile_limit`
/ `cache_size_limit` (with `dynamic=False`); the others are accepted and ignored.
`utils.counters` counts graph breaks and compiled graphs, under PyTorch's keys.
"""
import contextlib
import sys
import types
import warnings

from .._unsupported import module_getattr

from . import exc  # noqa: F401  (loaded with torchish: its classes present as torch's)
from . import eval_frame  # noqa: F401
from . import utils  # noqa: F401  (`torch._dynamo.utils.counters` after `import torch`)
from .eval_frame import OptimizedModule  # noqa: F401
from ..compiler import (reset, is_compiling, disable, allow_in_graph,  # noqa: F401
                        assume_constant_result, set_stance)
from .backends import register_backend, lookup_backend, list_backends  # noqa: F401
from .._compile import graph_break  # noqa: F401


class _Config(types.ModuleType):
    """PyTorch's settings by name (accepted and ignored); an unknown name is an
    AttributeError, as in PyTorch. `cache_size_limit` is PyTorch's alias of
    `recompile_limit`."""
    _ALIASES = {"cache_size_limit": "recompile_limit",
                "accumulated_cache_size_limit": "accumulated_recompile_limit"}

    def __init__(self):
        super().__init__("torch._dynamo.config")
        from ._config_defaults import DEFAULTS
        object.__setattr__(self, "_values", dict(DEFAULTS))

    def __getattr__(self, name):
        values = self.__dict__["_values"]
        key = self._ALIASES.get(name, name)
        if key in values:
            return values[key]
        raise AttributeError(f"torch._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        values = self.__dict__["_values"]
        key = self._ALIASES.get(name, name)
        if key not in values:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist")
        values[key] = value

    def __dir__(self):
        return sorted(self.__dict__["_values"])

    def patch(self, arg1=None, arg2=None, **kwargs):
        """`config.patch(name, value)` / `config.patch(name=value)`: a context manager and
        decorator that sets the settings and restores them after."""
        changes = dict(kwargs)
        if isinstance(arg1, dict):
            changes.update(arg1)
        elif arg1 is not None:
            changes[arg1] = arg2
        return _Patch(self, changes)

    def get_config_copy(self):
        return dict(self.__dict__["_values"])


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes = config, changes

    def __enter__(self):
        self.saved = {k: getattr(self.config, k) for k in self.changes}
        for k, v in self.changes.items():
            setattr(self.config, k, v)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            setattr(self.config, k, v)


config = _Config()
sys.modules[__name__ + ".config"] = config   # `import torch._dynamo.config`


def explain(f, *extra_args, **extra_kwargs):
    """`explain(fn)(*args, **kwargs)`: an `ExplainOutput` saying whether `fn` traces as one
    graph for these arguments, or why not (see `backends.ExplainOutput`)."""
    from .backends import explain as _explain

    def inner(*args, **kwargs):
        return _explain(f, args, kwargs)
    if extra_args or extra_kwargs:
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, "
                      "**kwargs) instead.  If you don't migrate, we may break your explain "
                      "call in the future if your user defined kwargs conflict with future "
                      "kwargs added to explain(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner


def _mark(attr, t, index):
    # recorded where PyTorch records it (torchish traces one executable per shape, so the
    # marks change nothing)
    if index is None:
        index = range(t.dim())
    elif isinstance(index, int):
        index = (index,)
    marks = t.__dict__.get(attr)
    if marks is None:
        marks = set()
        setattr(t, attr, marks)
    marks.update(index)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """A hint only: torchish retraces per shape (one executable each)."""
    _mark("_dynamo_dynamic_indices", t, index)


def maybe_mark_dynamic(t, index):
    _mark("_dynamo_weak_dynamic_indices", t, index)


def mark_static(t, index=None):
    if isinstance(t, type):   # a Module class: PyTorch treats its instances' ints as static
        t._dynamo_marked_static = True
        return t
    _mark("_dynamo_static_indices", t, index)


def mark_static_address(t, guard=False):
    pass


def is_dynamo_supported():
    return True


is_inductor_supported = is_dynamo_supported


__getattr__ = module_getattr(__name__)
