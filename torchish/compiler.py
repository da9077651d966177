"""`torch.compiler`: the public helpers around `torchish.compile`.

torchish compiles by tracing with JAX (see `_compile.py`), so there are no graph breaks to
allow or disallow: `disable` runs a function eagerly when called outside compiled code (inside
a trace it is traced like any other Python), and `reset` only forgets cached executables of
nothing (each compiled function owns its cache, freed with it).
"""
import functools

from ._unsupported import module_getattr

__all__ = ["compile", "reset", "is_compiling", "is_dynamo_compiling", "disable",
           "allow_in_graph", "assume_constant_result", "list_backends", "cudagraph_mark_step_begin"]


def compile(*args, **kwargs):
    from ._compile import compile as _compile
    return _compile(*args, **kwargs)


def reset():
    """Nothing global to clear: each compiled function holds its own cache."""


def is_compiling():
    """True while torchish traces a compiled function (its Python runs once per signature)."""
    from ._compile import _TRACING
    return _TRACING[0] > 0 and not _IN_DISABLED[0]


_IN_DISABLED = [0]   # how many `disable`d functions are running inside a trace


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """The function runs as plain Python: traced as part of a compiled caller (torchish has
    no graph breaks), but `is_compiling()` is False inside it, as in PyTorch, where it runs
    eagerly."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if isinstance(fn, type) or not callable(fn) or hasattr(fn, "_parameters"):
        return fn   # (a Module: its forward is what a compiled caller traces)

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        _IN_DISABLED[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _IN_DISABLED[0] -= 1
    return disabled


def list_backends(exclude_tags=("debug", "experimental")):
    from ._dynamo import list_backends as _list_backends
    return _list_backends(exclude_tags)


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def cudagraph_mark_step_begin():
    """No CUDA graphs in torchish: XLA executables need no step marker."""


__getattr__ = module_getattr(__name__)
