"""`torch.compiler`: the public helpers around `torchish.compile`.

torchish compiles by tracing with JAX (see `_compile.py`), so there are no graph breaks to
allow or disallow: `disable` runs a function eagerly when called outside compiled code (inside
a trace it is traced like any other Python), and `reset` only forgets cached executables of
nothing (each compiled function owns its cache, freed with it).
"""
import functools

from ._unsupported import module_getattr

__all__ = ["compile", "reset", "is_compiling", "is_dynamo_compiling", "disable",
           "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin"]


def compile(*args, **kwargs):
    from ._compile import compile as _compile
    return _compile(*args, **kwargs)


def reset():
    """Nothing global to clear: each compiled function holds its own cache."""


def is_compiling():
    """True while torchish traces a compiled function (its Python runs once per signature)."""
    from ._compile import _TRACING
    return _TRACING[0] > 0


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def cudagraph_mark_step_begin():
    """No CUDA graphs in torchish: XLA executables need no step marker."""


__getattr__ = module_getattr(__name__)
