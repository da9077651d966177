"""`torch._dynamo`: the few names training scripts touch (reset, config, disable, ...).

torchish has no bytecode-level compiler; `config` accepts any setting (scripts commonly set
`torch._dynamo.config.suppress_errors` or `cache_size_limit`) and nothing reads it.
"""
import types

from .._unsupported import module_getattr

from ..compiler import (reset, is_compiling, disable, allow_in_graph,  # noqa: F401
                        assume_constant_result)


class _Config(types.SimpleNamespace):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return None


config = _Config(suppress_errors=False, cache_size_limit=8, recompile_limit=8, verbose=False,
                 capture_scalar_outputs=False, optimize_ddp=True, automatic_dynamic_shapes=True,
                 assume_static_by_default=True)


def mark_dynamic(t, index, **kwargs):
    """Shapes retrace in torchish (one executable per shape), so this is only a hint."""


def mark_static(t, index=None):
    pass


def maybe_mark_dynamic(t, index):
    pass


__getattr__ = module_getattr(__name__)
