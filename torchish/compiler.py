"""`torch.compiler`: the public helpers around `torchish.compile`.

torchish compiles by tracing with JAX (see `_compile.py`): where PyTorch breaks the graph the
traced signature runs eagerly instead. A `disable`d function called from compiled code is such
a break (so it runs, with its Python side effects, on every call; `fullgraph=True`:
`Unsupported`), and `reset` makes every compiled function trace again on its next call.
"""
import functools

from ._unsupported import module_getattr

__all__ = ["compile", "reset", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable",
           "allow_in_graph", "assume_constant_result", "list_backends", "cudagraph_mark_step_begin",
           "set_default_backend", "get_default_backend", "set_stance"]


def compile(*args, **kwargs):
    from ._compile import compile as _compile
    return _compile(*args, **kwargs)


def reset():
    """Forget every compiled signature (the next calls trace again, calling custom backends
    again), as PyTorch clears its compiled code."""
    from ._compile import reset as _reset
    _reset()


_DEFAULT_BACKEND = ["inductor"]


def set_default_backend(backend):
    """The backend `torch.compile` uses when given none (a name is checked as PyTorch does)."""
    if backend is None:
        backend = "inductor"
    if isinstance(backend, str):
        from ._dynamo.backends import lookup_backend
        lookup_backend(backend)   # InvalidBackend for an unknown name
    _DEFAULT_BACKEND[0] = backend


def get_default_backend():
    return _DEFAULT_BACKEND[0]


def is_exporting():
    return False


STANCE = ["default"]   # read by every compiled call (see `_Compiled.__call__`)
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")


class set_stance:
    """`torch.compiler.set_stance(stance)`: a function, context manager or decorator that sets
    how compiled functions behave. "force_eager": they run eagerly; "eager_on_recompile": a new
    signature runs eagerly instead of compiling; "fail_on_recompile": compiling a new
    signature raises. The `*_then_compile` stances compile at once (their first eager call
    only saves PyTorch compile time)."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        from ._compile import _TRACING
        if _TRACING[0]:
            raise RuntimeError("attempted to set_stance in a torch.compile region")
        self.stance = stance
        self.prev = STANCE[0]
        STANCE[0] = stance

    def __enter__(self):
        STANCE[0] = self.stance

    def __exit__(self, *exc):
        STANCE[0] = self.prev

    def __call__(self, fn):
        STANCE[0] = self.prev   # as a decorator, the stance holds only while `fn` runs

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            saved = STANCE[0]
            STANCE[0] = self.stance
            try:
                return fn(*args, **kwargs)
            finally:
                STANCE[0] = saved
        return with_stance


def is_compiling():
    """True while torchish traces a compiled function (its Python runs once per signature),
    or runs one eagerly at a graph break (PyTorch compiles the code around it)."""
    from ._compile import _TRACING
    return (_TRACING[0] > 0 or _IN_BROKEN[0] > 0) and not _IN_DISABLED[0]


_IN_DISABLED = [0]   # how many `disable`d functions are running inside a trace
_IN_BROKEN = [0]     # how many compiled functions run eagerly at a graph break


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """The function runs as plain Python. Called while a compiled caller is traced it breaks
    the graph as PyTorch's does: that signature of the caller runs eagerly, so the function
    runs on every call (`torch._dynamo.explain` notes the break and traces on, with
    `is_compiling()` False inside)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if isinstance(fn, type) or not callable(fn) or hasattr(fn, "_parameters"):
        return fn   # (a Module: its forward is what a compiled caller traces)

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        from ._compile import _TRACING, _EXPLAIN, _SilentBreak, _user_stack
        if _TRACING[0]:
            msg = (f"Skip calling `torch.compiler.disable()`d function\n  Explanation: Skip "
                   f"calling function `{fn}` since it was wrapped with `torch.compiler.disable` "
                   f"(reason: {reason})\n  Hint: Remove the `torch.compiler.disable` call\n\n"
                   f"  Developer debug context: {fn}\n")
            if _EXPLAIN[0] is None:
                raise _SilentBreak(msg)
            _EXPLAIN[0].add(msg, _user_stack())
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
