"""`torchish.compile`: what the trace cannot hold, and PyTorch's captured scalar outputs.

The errors where PyTorch breaks the graph (`CompileError`; `_SilentBreak` where it does so
without a warning), `print()` while tracing (constants recorded and replayed on every call),
`.item()`/`.tolist()` with scalar capture, and the message naming the user's line when a traced
value is turned into a Python value.
"""
import builtins
import contextlib
import functools
import os
import sys
import traceback
import warnings

import jax

from ._tensor import Tensor
from .autograd import grad_mode


class CompileError(RuntimeError):
    user_stack = ()   # [traceback.FrameSummary] of the user's line that could not be traced
    of_item = False   # a `.item()` (or `float(t)`, `int(t)`) that PyTorch breaks the graph at


class _SilentBreak(CompileError):
    """Where PyTorch breaks the graph without a warning (eager fallback, no warning)."""


class _PrintOfTensor(_SilentBreak):
    """print() of a tensor while tracing."""


class _GuardOnData(CompileError):
    """Python control flow on a captured scalar (PyTorch's `UserError` with fullgraph)."""


_GUARD_MESSAGE = ("Consider annotating your code using torch._check*(). Could not guard on "
                  "data-dependent expression of a captured scalar.\n")


def call_user(entry, fn, fullgraph, args, kwargs, breaks=None, constants=False):
    """Run the user's function while tracing: `print()` recorded (replayed per call; of a
    tensor, a silent graph break), `.item()`/`.tolist()` captured when asked, and JAX's
    data-dependence errors turned into a `CompileError` naming the user's line. `breaks`: the
    `_Breaks` of a `torch._dynamo.explain` trace, which records where PyTorch breaks the graph
    and carries on where it can (constant prints, `.item()`, `graph_break()`). `constants`:
    the step's backward is one `jax.vjp` of the trace, so `_COMPILE_LEVEL` makes what the
    tape would leave out of its graph (no_grad results) reverse-mode constants there."""
    real_print = builtins.print

    def recorded_print(*a, **kw):
        of_tensor = any(isinstance(v, (Tensor, jax.core.Tracer)) for v in a + tuple(kw.values()))
        if breaks is not None:
            breaks.add(_print_reason(a, kw), _user_stack())
            if of_tensor:   # traced on to count the rest; then the function runs eagerly
                breaks.rerun = True
                return
        elif of_tensor:
            raise _PrintOfTensor("torchish.compile: print() of a tensor inside compiled "
                                 "code needs its value.")
        entry.prints.append((a, kw))
    builtins.print = recorded_print   # printing constants replays; a tensor breaks
    from ._dynamo import config
    capture = fullgraph or config.capture_scalar_outputs
    if capture:
        methods = Tensor.item, Tensor.tolist
        noted = None if config.capture_scalar_outputs else breaks
        Tensor.item = _captured_item(entry, methods[0], noted)
        Tensor.tolist = _captured_tolist(entry, methods[1], noted)
    from . import autograd
    real_grad, real_backward = autograd.grad, autograd.backward
    if not config.trace_autograd_ops:
        autograd.grad = _autograd_grad_break
    levels = grad_mode.FUNC_LEVELS
    depth = len(levels)
    if constants:
        autograd.backward = functools.partial(_backward_below_level, real_backward)
        levels.append(_COMPILE_LEVEL)
    _EXPLAIN[0], outer = breaks, _EXPLAIN[0]
    try:
        result = fn(*args, **kwargs)
        if breaks is not None:
            breaks.end = _traced_ops()
            if breaks.rerun:
                breaks.eqns = _traced_eqns()
                raise _PrintOfTensor("print() of a tensor")
        return result
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
            jax.errors.TracerIntegerConversionError,
            jax.errors.TracerArrayConversionError) as exc:
        frames = _user_frames(exc.__traceback__)
        reason = _value_reason(exc.__traceback__)
        # a value made of `.item()` results only: in PyTorch a Python number (the graph broke
        # at the `.item()` already), or with scalar capture a symbolic one it cannot guard on
        of_captured = _of_captured_only(exc.__traceback__, entry.scalars)
        if of_captured and breaks is None:
            err = _GuardOnData(_GUARD_MESSAGE + _data_dependent_message(frames))
        else:
            err = CompileError(_data_dependent_message(frames, reason))
        err.user_stack = frames[-1:]
        err.of_item = reason == _ITEM_REASON
        if breaks is not None:
            if not of_captured:
                breaks.add(reason or str(err), err.user_stack)
            breaks.stop(_traced_eqns())
        raise err from None
    except CompileError as exc:
        if not exc.user_stack:
            exc.user_stack = _user_frames(exc.__traceback__)[-1:]
        if breaks is not None and not breaks.rerun:
            breaks.add(str(exc), exc.user_stack)
            breaks.stop(_traced_eqns())
        raise
    finally:
        _EXPLAIN[0] = outer
        builtins.print = real_print
        autograd.grad, autograd.backward = real_grad, real_backward
        del levels[depth:]
        if capture:
            Tensor.item, Tensor.tolist = methods


class _CompileLevel:
    """What `call_user` pushes on `grad_mode.FUNC_LEVELS` while tracing a step: as inside a
    reverse-mode `torch.func` transform, results made under no_grad (or inference_mode) are
    reverse-mode constants and an in-place write under no_grad keeps the old gradient, so
    the step's `jax.vjp` sees the graph PyTorch's tape records."""
    jvp = False


_COMPILE_LEVEL = _CompileLevel()


def _backward_below_level(backward, *args, **kwargs):
    """`torch.autograd.backward` (and `Tensor.backward`) inside a traced step: the tape's own
    backward, run without `_COMPILE_LEVEL` (not a transform, which refuses a backward)."""
    from .autograd import graph
    levels = grad_mode.FUNC_LEVELS
    try:
        if not (levels and levels[-1] is _COMPILE_LEVEL):
            return backward(*args, **kwargs)
        levels.pop()
        try:
            return backward(*args, **kwargs)
        finally:
            levels.append(_COMPILE_LEVEL)
    finally:
        LAST_BACKWARD[0] = next(graph._SEQ)   # (nodes recorded later are newer)


LAST_BACKWARD = [-1]   # the node sequence number at the traced step's last backward


_AUTOGRAD_GRAD_BREAK = (
    "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`\n"
    "  Explanation: Attempted to call `torch.autograd.grad` with config "
    "`torch._dynamo.config.trace_autograd_ops` set to `False`.\n"
    "  Hint: Change `torch._dynamo.config.trace_autograd_ops` to `True`.\n")


def _autograd_grad_break(*args, **kwargs):
    """`torch.autograd.grad` while tracing: PyTorch breaks the graph there (the compiled
    backward of the results could not see the gradients it computes as its own graph)."""
    raise _SilentBreak(_AUTOGRAD_GRAD_BREAK)


# ---- torch._dynamo.explain: where PyTorch would break the graph ----------------------------

_EXPLAIN = [None]   # the `_Breaks` of the explain trace under way, if any


class _Breaks:
    """Where an explain trace found PyTorch breaking the graph: per break its reason, the
    user's frame and how many ops the trace held there. PyTorch compiles the code between two
    breaks as a graph only when it holds ops, and a graph that ends at a break gives one
    break reason (`torch._dynamo.explain` counts those graphs, and one break fewer)."""

    def __init__(self):
        self.found = []       # (reason, user_stack, ops traced before it or None)
        self.stopped = False  # the last break ended the trace (PyTorch goes on past it)
        self.rerun = False    # traced to the end, but must run eagerly (a tensor printed)
        self.end = None       # ops traced in all, once the function returned
        self.eqns = None      # the equations traced when the trace stopped or ended

    def stop(self, eqns):
        self.stopped = True
        self.eqns = eqns

    def add(self, reason, stack):
        self.found.append((reason, list(stack), _traced_ops()))

    def graphs(self):
        """The op count at each graph's end, and the (reason, user_stack) of each graph
        ended by a break. Unknown counts (None) are taken as segments holding ops; so is what
        follows a break that ended the trace."""
        ends, reasons, before = [], [], 0
        for reason, stack, ops in self.found:
            if ops is None or before is None or ops > before:
                ends.append(ops)
                reasons.append((reason, stack))
            before = ops
        end = None if self.stopped else self.end
        if end is None or before is None or end > before:
            ends.append(end)
        return ends, reasons


def _value_reason(tb):
    """PyTorch's reason for a traced value turned into a Python one, by the Tensor method that
    did it: a jump on its truth value, or `int()`/`float()` (PyTorch's `.item()`)."""
    names = set()
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(_HERE):
            names.add(code.co_name)
        tb = tb.tb_next
    if "__bool__" in names:
        return "generic_jump TensorVariable()"
    if names & _ITEM_METHODS:
        return _ITEM_REASON
    return None


_ITEM_METHODS = frozenset({"item", "__int__", "__float__", "__index__", "__complex__"})


def _of_captured_only(tb, scalars):
    """Whether the tensor a conversion failed on (the `self` of the Tensor method in `tb`)
    is computed from captured scalars and constants only, not from the trace's inputs."""
    tensor = None
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.startswith(_HERE) and (
                frame.f_code.co_name in _ITEM_METHODS or frame.f_code.co_name == "__bool__"):
            tensor = frame.f_locals.get("self", tensor)
        tb = tb.tb_next
    if not isinstance(tensor, Tensor) or not scalars:
        return False
    try:   # (JAX's internals: the equations traced so far; if they change, not known)
        from jax._src import core
        frame = core.trace_ctx.trace.frame
        roots = {s._data.val for s in scalars}
        active = {tensor._data.val}
        for eqn in reversed(frame.get_eqns()):
            produced = active.intersection(eqn.outvars)
            if produced:
                active.difference_update(produced)
                active.update(v for v in eqn.invars if type(v) is core.Var and v not in roots)
        return not active.intersection(frame.invars)
    except Exception:
        return False


def _traced_ops():
    """How many operations the JAX trace under way holds (JAX's internals: None if they
    change)."""
    try:
        from jax._src import core
        return len(core.trace_ctx.trace.frame.tracing_eqns)
    except Exception:
        return None


def _traced_eqns():
    """The equations of the JAX trace under way (JAX's internals: None if they change)."""
    try:
        from jax._src import core
        return list(core.trace_ctx.trace.frame.get_eqns())
    except Exception:
        return None


def _user_stack():
    """The innermost frame of the user's code calling now (as `_user_frames` picks)."""
    return _user_frames_of(traceback.extract_stack(sys._getframe(1)))[-1:]


def _print_reason(a, kw):
    names = ["Tensor" if isinstance(v, (Tensor, jax.core.Tracer)) else type(v).__name__
             for v in a]
    return ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to "
            f"trace builtin operator `print` with argument types {names} (has_kwargs "
            f"{bool(kw)})")


_ITEM_REASON = ("Unsupported Tensor.item() call with capture_scalar_outputs=False\n  "
                "Explanation: Dynamo does not support tracing `Tensor.item()` with "
                "config.capture_scalar_outputs=False.")
_TOLIST_REASON = ("Data dependent operator\n  Explanation: Operator "
                  "`aten._local_scalar_dense.default` has a non-Tensor output whose value is "
                  "dependent on the data of Tensor inputs.")


# ---- scalars out of traced tensors (PyTorch's captured scalar outputs) ----------------------

def _traced_by_us(t):
    """Whether `t` holds a value of the trace being recorded (not a vmap/grad transform's),
    and the caller is user code (torchish's own `.item()` calls want a number or an error)."""
    return (type(t._data).__name__ == "DynamicJaxprTracer"
            and not sys._getframe(2).f_code.co_filename.startswith(_HERE))


def _captured_item(entry, item, breaks=None):
    """`Tensor.item` while tracing with scalar capture (PyTorch 2.13 with `fullgraph=True` or
    `capture_scalar_outputs`): the scalar stays traced, as a 0-d tensor of the dtype the
    Python number stands for in arithmetic (the default float dtype or wider, int64, bool),
    so later tensor math uses it; Python control flow on it still cannot be traced. Returned
    from the compiled function it becomes a Python number again."""
    def captured(self):
        if self.numel() != 1 or not _traced_by_us(self):
            return item(self)
        if breaks is not None:
            breaks.add(_ITEM_REASON, _user_stack())
        return _capture_scalar(entry, self)
    return captured


def _captured_tolist(entry, tolist, breaks=None):
    """`Tensor.tolist` while tracing with scalar capture: PyTorch captures integer tensors
    only."""
    def captured(self):
        if not _traced_by_us(self):
            return tolist(self)
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise CompileError("Tensor.tolist() with non-integer tensor\n  Explanation: Dynamo "
                               "currently does not support tracing `tolist()` on non-integer "
                               "tensors.")
        if breaks is not None:
            breaks.add(_TOLIST_REASON, _user_stack())
        return _nested_scalars(entry, self)
    return captured


def _nested_scalars(entry, t):
    if t.ndim == 0:
        return _capture_scalar(entry, t)
    return [_nested_scalars(entry, r) for r in t.unbind(0)]


def _capture_scalar(entry, t):
    from . import _dtype as dt
    d = t.dtype
    if d.is_floating_point or d.is_complex:
        target = dt.promote_types(d, dt.get_default_dtype())
    else:
        target = d if d is dt.bool else dt.int64
    with grad_mode.no_grad():
        # (detach last: a view of a detached tensor loses its stop-gradient in a trace)
        s = t.reshape(()).detach().to(target).clone()   # (its own storage: see `pending`)
    # already a constant: no reverse-mode constant read over it (`_COMPILE_LEVEL`), so that
    # every use reads the one traced value `_of_captured_only` looks for
    s._stopgrad = False
    entry.scalars.append(s)
    return s


def _user_frames(tb):
    """The frames of a traceback in the user's code (not torchish's or JAX's)."""
    return _user_frames_of(traceback.extract_tb(tb))


def _user_frames_of(frames):
    jax_dir = os.path.dirname(jax.__file__)
    return [f for f in frames
            if not f.filename.startswith(_HERE) and not f.filename.startswith(jax_dir)]


_HERE = os.path.dirname(__file__) + os.sep


def _data_dependent_message(frames, reason=None):
    where = f"{frames[-1].filename}:{frames[-1].lineno} (`{frames[-1].line}`)" if frames \
        else "unknown location"
    head = _BRANCH_HEAD if reason and reason.startswith("generic_jump") else ""
    return (f"{head}torchish.compile: the compiled code at {where} converts a tensor value "
            "to a Python value (e.g. `if x > 0`, `.item()`, `.tolist()`, `int(x)`), which "
            "depends on data and cannot be traced. Move it out of the compiled function, or "
            "use tensor ops such as torch.where.")


_BRANCH_HEAD = ("Data-dependent branching\n  Explanation: Detected data-dependent branching "
                "(e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic "
                "control flow.\n  ")


# ---- `float(t)`/`int(t)` with fullgraph: PyTorch's symbolic numbers -------------------------

@contextlib.contextmanager
def symbolic_numbers(namespaces):
    """While tracing again (see `_Compiled._guard_on_number`): `float`/`int` in the user's
    modules' `namespaces` give a symbolic stand-in for a traced one-element tensor (Python's
    own `float()` would make any number returned by `__float__` a plain float)."""
    saved = []
    for ns in namespaces:
        for name, kind in (("float", _SymFloat), ("int", _SymInt)):
            saved.append((ns, name, ns.get(name, _ABSENT)))
            ns[name] = _symbolic_type(kind)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for ns, name, old in reversed(saved):
            if old is _ABSENT:
                ns.pop(name, None)
            else:
                ns[name] = old


_ABSENT = object()


class _NumberMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.__mro__[1])

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.__mro__[1])


def _symbolic_type(kind):
    real = kind.__mro__[1]

    class Number(real, metaclass=_NumberMeta):
        def __new__(cls, *a, **kw):
            if len(a) == 1 and not kw and isinstance(a[0], Tensor) and a[0].numel() == 1 \
                    and _traced_by_us(a[0]):
                return kind(1)
            return real(*a, **kw)
    Number.__name__ = Number.__qualname__ = real.__name__
    return Number


def _guard(name, kind):
    """A comparison (or truth value) of a symbolic number: an error in the user's code; the
    plain number's answer in torchish's and JAX's (dtype and range checks)."""
    base = getattr(kind.__mro__[1], name)

    def op(self, *other):
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(_HERE) or caller.startswith(_JAX_DIR):
            return base(self, *other)
        raise _GuardOnData(_GUARD_MESSAGE + _data_dependent_message(_user_stack()))
    return op


_JAX_DIR = os.path.dirname(jax.__file__)


def _sym_op(name, kind):
    base = getattr(kind.__mro__[1], name)

    def op(self, *other):
        out = base(self, *other)
        if out is NotImplemented or not isinstance(out, (int, float)):
            return out
        return (_SymFloat if isinstance(out, float) else _SymInt)(out)
    return op


class _SymFloat(float):
    """What PyTorch's `float(t)` gives with `fullgraph=True`: a symbolic number. Arithmetic
    keeps it symbolic; comparing it or taking its truth value is Python control flow on data
    (PyTorch's `UserError` "Could not guard on data-dependent expression")."""
    __slots__ = ()


class _SymInt(int):
    """PyTorch's symbolic `int(t)` (see `_SymFloat`)."""
    __slots__ = ()


for _kind in (_SymFloat, _SymInt):
    for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__bool__"):
        setattr(_kind, _name, _guard(_name, _kind))
    _kind.__hash__ = _kind.__mro__[1].__hash__
    for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow"):
        for _n in (f"__{_name}__", f"__r{_name}__"):
            setattr(_kind, _n, _sym_op(_n, _kind))
    for _n in ("__neg__", "__pos__", "__abs__"):
        setattr(_kind, _n, _sym_op(_n, _kind))
