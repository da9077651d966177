"""`__torch_function__` for op calls: which generated binding a call came through
(`_BINDINGS`, filled as `declare` generates them), and the call `overrides.dispatch` gets,
with that binding as `func`."""
import inspect
import sys

from .._tensor import Tensor
from .. import overrides as _tf


# id of a generated binding's code -> (op, the binding, the public object's name, whether it is
# a Tensor attribute, the parameter bound as self, whether it is an operator, the code)
_BINDINGS = {}

_REPORTED_AS = _tf.REPORTED_AS


def _register(fn, definition, name, method=False, self_param=None, dunder=False):
    # keyed by identity: code objects compare equal by value (same generated source)
    _BINDINGS[id(fn.__code__)] = (definition, fn, name, method, self_param, dunder,
                                  fn.__code__)


def report_as(fn, public):
    """`__torch_function__` handlers see calls of the generated binding `fn` as calls of
    `public`, a wrapper of it that the `torchish` namespace holds instead (`func is
    torch.add`)."""
    info = _BINDINGS.get(id(fn.__code__))
    if info is not None and info[6] is fn.__code__:
        _BINDINGS[id(fn.__code__)] = (info[0], public) + info[2:]


def routes_itself(fn):
    """Whether `fn` is a generated binding that dispatches `__torch_function__` itself (in
    the dispatcher, before anything else runs)."""
    info = _BINDINGS.get(id(getattr(fn, "__code__", None)))
    return info is not None and info[6] is fn.__code__ and info[0].identity_if is None \
        and not info[0].casts_input


_PROCEED = object()
_PLAIN = _tf.PLAIN
_TF_MODES = _tf.MODES


def _torch_function(definition, targs, sargs):
    """What `__torch_function__` (a mode's, or an operand's) makes of this call, or _PROCEED:
    nothing takes part after all (switched off, an opted-out subclass)."""
    if _tf.STATE[0] == 2:
        return _PROCEED
    found = _tf.overloaded(_tf._flat(targs))
    if not found and not _TF_MODES:
        return _PROCEED
    info = None
    frame = sys._getframe(2)   # the binding (or dispatch_out, autocast) that called dispatch
    for _ in range(3):
        if frame is None:
            break
        info = _BINDINGS.get(id(frame.f_code))
        if info is not None and info[0] is definition and info[6] is frame.f_code:
            break
        info, frame = None, frame.f_back
    if info is None:
        public, label, self_param, dunder = definition.function, "torch." + definition.name, \
            None, False
    else:
        _, fn, name, method, self_param, dunder, _ = info
        public = vars(Tensor).get(name, fn) if method else fn
        label = ("torch.Tensor." if method else "") + name
    args, kwargs = _call_args(definition, targs, sargs, self_param)
    if info is not None and "out" in frame.f_code.co_varnames:   # (via dispatch_out)
        out = frame.f_locals.get("out")
        if out is not None:
            kwargs["out"] = out
    return _tf.dispatch(public, found, args, kwargs, label, dunder=dunder)


_SIMPLE = (bool, int, float, complex, str, type(None), tuple)


def _call_args(definition, targs, sargs, self_param):
    """(args, kwargs) that call the op's public binding as this call did: parameters at their
    defaults left out, the others by position up to the first one left out."""
    values = dict(zip(definition.tensors, targs))
    values.update(zip(definition.statics, sargs))
    args, kwargs = [], {}
    positional = True
    empty = inspect.Parameter.empty
    for p in definition.sig.parameters.values():
        v = values[p.name]
        if p.kind is p.VAR_POSITIONAL:
            args.extend(v)
            continue
        default = p.default is not empty and (v is p.default or (
            type(v) is type(p.default) and isinstance(v, _SIMPLE) and v == p.default))
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and positional:
            if not default:
                args.append(v)
                continue
            positional = False
        if not default:
            kwargs[p.name] = v
    if self_param is not None and args and self_param in values:
        i = next(i for i, a in enumerate(args) if a is values[self_param])
        args.insert(0, args.pop(i))
    return tuple(args), kwargs
