"""`torch._dynamo`: the few names training scripts touch (reset, config, disable, ...).

torchish has no bytecode-level compiler; `config` accepts PyTorch's settings (scripts commonly set
`torch._dynamo.config.suppress_errors` or `cache_size_limit`) and nothing reads them.
"""
import contextlib
import sys
import types

from .._unsupported import module_getattr

from . import exc  # noqa: F401  (loaded with torchish: its classes present as torch's)
from . import eval_frame  # noqa: F401
from .eval_frame import OptimizedModule  # noqa: F401
from ..compiler import (reset, is_compiling, disable, allow_in_graph,  # noqa: F401
                        assume_constant_result)


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


def list_backends(exclude_tags=("debug", "experimental")):
    """PyTorch's backend names (torchish compiles with XLA whichever is named)."""
    return sorted(_BACKENDS if exclude_tags else _ALL_BACKENDS)


_BACKENDS = ("cudagraphs", "inductor", "openxla", "tvm")
_ALL_BACKENDS = _BACKENDS + (
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug",
    "eager_noexcept", "invoke_subgraph", "openxla_eval", "pre_dispatch_eager", "ts")


def mark_dynamic(t, index, **kwargs):
    """Shapes retrace in torchish (one executable per shape), so this is only a hint."""


def mark_static(t, index=None):
    pass


def maybe_mark_dynamic(t, index):
    pass


__getattr__ = module_getattr(__name__)
