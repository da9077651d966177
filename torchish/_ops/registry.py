"""The op registry and the one dispatcher every op goes through.

Declare an op once::

    @op(promote=Promote.DEFAULT, grad_fn="AddBackward0", inplace=True,
        dunders=("__add__", "__radd__", "__iadd__"), saves=())
    def add(input, other, *, alpha=1):
        return input + other * alpha

The body is a pure JAX function. Parameters without a default (or those named in `tensors=`)
are *dynamic*: they may receive Tensors, Python scalars, None or lists of Tensors and are passed
to the compiled forward as JAX values. All other parameters are *static*: hashable values baked
into the compiled forward (a tuple, a dtype, a bool). From the declaration the registry builds
`torchish.add`, `Tensor.add`, `Tensor.add_` and the dunders, all calling `dispatch`, which

1. unwraps tensors, computes the result dtype from the promotion kind (PyTorch's rules, in
   `_dtype.result_dtype`) and caches a *plan* per (op, static args, operand dtypes/kinds);
2. runs the plan's jitted forward (casts included, so an op is one XLA dispatch);
3. wraps outputs (views share the input's storage, see `_storage.py`);
4. when grad mode is on and an input requires grad, records a `Node` whose backward is the
   plan's `jax.vjp` pullback, jitted and cached per (plan, which inputs need grads).

An operand that takes part in `__torch_function__` (a Tensor subclass, a tensor-like) or an
active TorchFunctionMode hands the call to `overrides.dispatch` first, with the binding the
user called as `func` (`_torch_function`); plain tensors pay one type test each.
"""
import enum
import functools
import inspect
import itertools
import sys

import jax
import jax.numpy as jnp

from .._eager_jit import eager_jit
from .. import _autocast, _meta, profiler
from .. import _dtype as dt
from .._device import CPU, has_accelerator
from .._tensor import Tensor, _alias, _new_tensor, _wrap
from .._storage import (InferenceStorage, Storage, apply_template, base_view, extend, read_view,
                       write_view)
from .. import overrides as _tf
from ..autograd import grad_mode, saved_tensors
from ..autograd.graph import Node, edge_of, saved_entry, torch_grad
from .errors import ArgumentTypeError, argument_error
from . import half_grad

__all__ = ["op", "Promote", "REGISTRY", "dispatch", "call_jax"]


class Promote(enum.Enum):
    NONE = 0              # operands keep their dtypes (shape ops, indexing)
    DEFAULT = 1           # promoted dtype in and out
    INT_TO_FLOAT = 2      # integer/bool results become the default float dtype (div, sqrt)
    ALWAYS_BOOL = 3       # compute in the promoted dtype, return bool (comparisons)
    COMPLEX_TO_FLOAT = 4  # complex inputs give real results (abs)
    INT_TO_LONG = 5       # bool/integer inputs accumulate in int64 (sum, cumsum, prod)
    INT_TO_FLOAT_REAL = 6  # integers give the default float, complex its real dtype (angle)


REGISTRY = {}

# Required parameters with these names are static (ints, shapes, strings) unless an op lists
# its dynamic parameters explicitly with `tensors=`.
STATIC_NAMES = frozenset({
    "dim", "dim0", "dim1", "dim2", "k", "n", "split_size_or_sections", "start", "length",
    "dimension", "size", "step", "shifts", "dims", "equation", "chunks", "reduce", "steps",
    "key", "shape", "stride", "dtype", "destination"})

# Dynamic parameters with these names take a list of Tensors (PyTorch's TensorList).
LIST_NAMES = frozenset({"tensors"})   # (cat, stack; take_along_dim's `indices` is one Tensor)

# Dynamic parameters with these names are non-differentiable operands (see `op`'s
# `non_differentiable`, which adds others: a loss's `target`, a class `weight`).
NON_DIFFERENTIABLE_NAMES = frozenset({"index", "indices", "mask", "condition", "offsets",
                                      "targets", "input_lengths", "target_lengths"})

# Static parameters holding a dimension (or dimensions): PyTorch's parser refuses other types.
DIM_NAMES = frozenset({"dim", "dim0", "dim1", "dim2"})


class OpDef:
    def __init__(self, name, body, tensors, statics, promote, promoted, grad_fn,
                 differentiable, saves, view, returns):
        self.name = name
        self.body = body
        self.tensors = tensors
        self.statics = statics
        self.promote = promote
        self.promoted = frozenset(promoted)
        self.grad_fn = grad_fn
        self.differentiable = differentiable
        self.saves = saves
        self.view = view
        self.returns = returns
        self.check = None
        self.kinds_check = None
        self.plans = {}

    def __repr__(self):
        return f"<op {self.name}>"


class Omitted:
    """The default of a static parameter whose mere presence picks PyTorch's overload:
    `x.sum()` is `sum` (SumBackward0) but `x.sum(None)` is `sum.dim_IntList` (SumBackward1);
    `sort(stable=False)` is SortBackward1. Declare `dim=omitted(None)`: the body, `view` and
    `check` receive the value, while `grad_fn` callables (and `given_with`) see the marker,
    so `given(statics["dim"])` tells the two calls apart. Prints as its value.
    `nullable=False`: PyTorch's overloads take the parameter only as a value (`prod`'s
    `int dim`): an explicit None is the parser's "invalid combination" TypeError."""
    __slots__ = ("value", "nullable")

    def __init__(self, value, nullable=True):
        self.value = value
        self.nullable = nullable

    def __repr__(self):
        return repr(self.value)


_OMITTED = {}


def omitted(value=None, *, nullable=True):
    """The marker default for `value` (one instance per value: plans are keyed on it)."""
    # (keyed by type too: False == 0)
    return _OMITTED.setdefault((type(value), value, nullable), Omitted(value, nullable))


def given(value):
    return not isinstance(value, Omitted)


def value_of(value):
    """What the body receives for a static argument (an `omitted` default's value)."""
    return value.value if isinstance(value, Omitted) else value


def in_overload(definition, statics, name):
    """Whether the overload PyTorch picked has static parameter `name` (and its node saves
    it): given, or not `omitted`, or going with a parameter that was given (`keepdim`)."""
    needs = definition.given_with.get(name)
    return given(statics[name]) or (needs is not None and given(statics[needs]))


def op(name=None, *, promote=Promote.DEFAULT, promoted=None, tensors=None, grad_fn=None,
       differentiable=True, saves="inputs", view=None, multi_view=False, returns=None,
       function=True, method=True, inplace=False, dunders=(), nn=False, aliases=(),
       inplace_grad_fn=None, check=None, kinds_check=None, opmath_scalars=False, opmath=False,
       scalar_operands=None, joint_scalars=False, casts_input=False, identity_if=None,
       given_with=None, non_differentiable=(), scalars_as_tensors=False, kernel=None,
       optional_tensors=None):
    """Declare an op; see the module docstring. Returns the generated public function.

    grad_fn:   the PyTorch node name, or a callable (kinds, statics) -> name where `kinds`
               is a tuple per dynamic parameter of "T" (tensor), "s" (scalar), None or "L".
    saves:     "inputs" | "result" | () | a tuple of parameter names and outputs | a dict
               {parameter: the parameters whose gradient needs it}: which values PyTorch
               saves for backward (modifying them in place makes backward raise; saved-tensor
               hooks pack them, inputs first). An output is "result" (the differentiable
               outputs), "result<n>" (output n) or a field of `returns` ("indices"), which
               wins over a parameter of the same name; `grad_fn._saved_<name>` reads it.
    view:      callable(*dynamic_args, **statics) -> view steps (or None: not a view this
               time); the view aliases the first tensor argument. View ops compute no value
               (the view reads its base lazily), so `view` must also validate the arguments.
    multi_view: the op returns several views (split, unbind): `view` gives a list of steps
               per output.
    method:    True binds Tensor.<name> with the first parameter as self; a parameter name
               binds with that parameter as self.
    check:     callable(compute_dtype, *dynamic_args, **statics) -> exception or None, asked
               about the operands as passed (Tensors, scalars) when no operand is a JAX
               tracer; what it returns is raised once the forward has run. For errors PyTorch
               raises from values (integer division by zero), which a compiled body cannot.
    kinds_check: callable(kinds) raising PyTorch's error for operand dtypes it refuses
               (kinds: a tensor's `(dtype, is 0-d, ...)`, a Python scalar's type); asked when
               a plan is made, so valid calls never pay for it.
    inplace_grad_fn: the node name of the in-place variant when PyTorch's differs
               (`elu_` records EluBackward1).
    opmath_scalars: for a half-precision (bfloat16, float16) result, a Python scalar or
               0-d `other` keeps float32, as PyTorch's CPU kernels take it (`x * 0.1`
               rounds once, not 0.1 first).
    scalar_operands: which dynamic parameters take a Python number where PyTorch's signature
               says Tensor: True (all: `add`, whose name PyTorch's parser lets numbers stand
               for tensors, or `isin`, with Scalar overloads for each), a tuple of names
               (those with a Scalar overload: `pow`'s, `eq`'s `other`), or False (none).
               Anything else in a Tensor parameter (a list, None where there is no default,
               a string) is PyTorch's TypeError "argument 'x' (position n) must be Tensor".
               Default None: False for public ops (a `torchish.X`, `Tensor.X` or
               `nn.functional.X` binding), unchecked for private ones, whose callers are
               torchish's own code. Parameters named in `LIST_NAMES` take lists.
    joint_scalars: the `scalar_operands` share one Scalar overload (clamp's min and max): a
               number beside a tensor of one or more dims is PyTorch's "invalid combination"
               TypeError; a 0-d tensor beside a number is read as a number.
    casts_input: a `dtype` argument converts `input` before the op runs (a ToCopyBackward0
               node of its own), as PyTorch's softmax and log_softmax do.
    identity_if: a predicate on the input Tensor; where it holds, the function and method
               return the input itself (PyTorch's conj, positive and real of a real tensor:
               the same object, no node).
    given_with: {parameter: the parameter it needs}: static parameters (defaults
               `omitted(...)`) that only an overload taking the other has, as `keepdim`
               only comes with `dim` (`x.sum(keepdim=True)` is PyTorch's "invalid
               combination" TypeError).
    opmath:    a half-precision (bfloat16, float16) compute dtype computes in float32 and
               rounds the result once, as PyTorch's CPU kernels do; JAX would round every
               intermediate (and constant) to the half type.
    non_differentiable: tensor parameters PyTorch's derivative formulas declare
               non-differentiable besides those named in `NON_DIFFERENTIABLE_NAMES` (indices,
               masks): the node has no edge for them (`next_functions` leaves them out), and
               one that requires grad is PyTorch's "not differentiable with respect to
               argument" error.
    scalars_as_tensors: a Python number in a tensor parameter counts as a (wrapped) tensor
               operand, with a `(None, 0)` edge, as PyTorch's parser wraps numbers for
               add/sub/mul/div; otherwise a number selects PyTorch's Scalar overload, whose
               node has no edge for it (`x.pow(2)`, `x.clamp(0, 1)`).
    optional_tensors: the parameters PyTorch types `Tensor?`: absent (None), its node still
               has an (undefined) edge for them, `(None, 0)` in `next_functions`. Default:
               the tensor parameters whose default is None.
    kernel:    PyTorch's kernel name in its messages (default: the op's name without a
               leading underscore), or a callable (kinds, statics) -> name.
    """
    def deco(body):
        opname = name or body.__name__
        sig = inspect.signature(body)
        params = list(sig.parameters.values())
        dyn = tuple(tensors) if tensors is not None else tuple(
            p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
            and p.name not in STATIC_NAMES)
        statics = tuple(p.name for p in params if p.name not in dyn)
        definition = OpDef(opname, body, dyn, statics, promote,
                           dyn if promoted is None else promoted, grad_fn, differentiable,
                           saves, view, returns)
        definition.inplace_grad_fn = inplace_grad_fn
        definition.saved_outputs = _saved_outputs(saves, returns)
        definition.check = check
        definition.kinds_check = kinds_check
        definition.opmath_scalars = opmath_scalars
        definition.opmath = opmath
        definition.scalar_operands = scalar_operands
        definition.bound = bool(function or method or nn or dunders or inplace)
        definition.argcheck = _argcheck(opname, params, dyn, statics, scalar_operands,
                                        definition.bound)
        definition.joint_scalars = joint_scalars
        definition.casts_input = casts_input
        definition.identity_if = identity_if
        definition.given_with = dict(given_with or {})
        definition.non_differentiable = tuple(
            n for n in dyn if n in NON_DIFFERENTIABLE_NAMES) + tuple(non_differentiable)
        definition.scalars_as_tensors = scalars_as_tensors
        definition.optional_tensors = frozenset(p.name for p in params if p.name in dyn and (
            p.default is None if optional_tensors is None else p.name in optional_tensors))
        definition.kernel = kernel
        definition.multi_view = multi_view
        definition.varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL),
                                  None)
        # parameters passed positionally (those before *varargs); the rest go by keyword
        definition.positional = tuple(p.name for p in params[:[q.kind for q in params].index(
            inspect.Parameter.VAR_POSITIONAL)]) if definition.varargs else ()
        REGISTRY[opname] = definition
        definition.sig = sig
        fn = _generate(definition, sig, "dispatch")
        _register(fn, definition, "torch." + opname)
        definition.function = fn
        definition.bindings = {"function": function, "method": method, "inplace": inplace,
                               "dunders": dunders, "nn": nn, "aliases": aliases}
        if inplace:
            definition.inplace_fn = _generate(definition, sig, "dispatch_inplace",
                                              opname + "_", self_param=next(iter(sig.parameters)))
            _register(definition.inplace_fn, definition, opname + "_", method=True)
        _bind(definition, sig)
        return fn
    return deco


def _generate(definition, sig, entry, fname=None, out=False, self_param=None, dunder=False):
    """A Python function with the body's exact signature that calls the dispatcher.

    Generated source (like namedtuple) keeps argument parsing at Python's native speed.
    `out=True` adds PyTorch's keyword-only `out=None` (see `dispatch_out`). An argument type
    error of this op passing through gets the binding's name and, for a method (`self_param`:
    the parameter bound as self), positions counted without self; a dunder returns
    NotImplemented instead, so Python raises its own operator TypeError (`t + [1]`) or
    compares by identity (`t == None`). (A try block costs nothing until it catches.)
    """
    params, defaults = [], {}
    star = False
    for p in sig.parameters.values():
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text = "*" + p.name
            star = True
        elif p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is not inspect.Parameter.empty:
            defaults[f"_d_{p.name}"] = p.default
            text += f"=_d_{p.name}"
        params.append(text)
    dyn = "".join(f"{n}, " for n in definition.tensors)
    stat = "".join(f"{n}, " for n in definition.statics)
    fname = fname or definition.name
    body = f"    return _entry(_op, ({dyn}), ({stat}))\n"
    if definition.identity_if is not None:
        first = next(iter(sig.parameters))
        body = (f"    if isinstance({first}, _Tensor) and _op.identity_if({first}):\n"
                f"        return {first}\n" + body)
    if definition.casts_input:
        body = ("    if dtype is not None and isinstance(input, _Tensor):\n"
                "        input, dtype = input.to(dtype), None\n" + body)
    if out:
        params += ["out=None"] if star else ["*", "out=None"]
        body = (f"    if out is not None:\n"
                f"        return _out(_op, ({dyn}), ({stat}), out, {fname!r})\n" + body)
    if definition.argcheck is not None:
        body = _catch_argument_errors(body, fname, self_param, dunder)
    src = f"def {fname}({', '.join(params)}):\n" + body
    namespace = dict(defaults, _entry=globals()[entry], _op=definition, _out=dispatch_out,
                     _ArgErr=ArgumentTypeError, _caller=_caller, _Tensor=Tensor)
    exec(src, namespace)
    fn = namespace[fname]
    fn.__doc__ = definition.body.__doc__
    fn.__module__ = "torchish"
    fn.__qualname__ = fname
    return fn


def _caller(depth):
    """The frame that called the generated binding `depth` + 1 frames up."""
    return sys._getframe(depth + 2)


def _catch_argument_errors(body, fname, self_param, dunder):
    body = "".join("    " + line + "\n" for line in body.splitlines())
    handler = ("        return NotImplemented\n" if dunder else
               f"        raise e.finish({fname!r}, {self_param!r}, locals(), _caller(0)) "
               "from None\n")
    return ("    try:\n" + body + "    except _ArgErr as e:\n"
            "        if e.op is not _op:\n            raise\n" + handler)


def _bind(definition, sig):
    b = definition.bindings
    method = b["method"]
    checked = definition.argcheck is not None
    names = (definition.name,) + tuple(b["aliases"])
    first = next(iter(sig.parameters))
    if method:
        self_param = method if isinstance(method, str) else first
        for name in names:
            meth = _generate(definition, sig, "dispatch", name, self_param=self_param) \
                if checked else definition.function
            if meth is not definition.function:
                _register(meth, definition, name, method=True, self_param=self_param)
            if self_param != first:
                meth = _reorder_method(meth, self_param, sig)
            setattr(Tensor, name, meth)
    if b["inplace"]:
        for name in names:
            if checked and name != definition.name:
                fn = _generate(definition, sig, "dispatch_inplace", name + "_", self_param=first)
                _register(fn, definition, name + "_", method=True)
            else:
                fn = definition.inplace_fn
            setattr(Tensor, name + "_", fn)
    for dunder in b["dunders"]:
        if dunder.startswith("__r") and dunder not in _SELF_FIRST_RDUNDERS and not (
                definition.name == "rsub" or definition.name.startswith("_r")):
            # (the operands come swapped: the subclass's routing `__rX__` dispatches it)
            setattr(Tensor, dunder, _swapped(definition, dunder) if checked else (
                lambda self, other, _f=definition.function: _f(other, self)))
            continue
        inplace = dunder in _INPLACE_DUNDERS
        fn = definition.inplace_fn if inplace else definition.function
        if checked:
            fn = _generate(definition, sig, "dispatch_inplace" if inplace else "dispatch",
                           dunder, dunder=True)
            _register(fn, definition, _REPORTED_AS.get(dunder, dunder), method=True,
                      dunder=dunder not in _UNARY_DUNDERS)
        setattr(Tensor, dunder, fn)


_UNARY_DUNDERS = frozenset({"__neg__", "__pos__", "__abs__", "__invert__"})

# ---- __torch_function__: which binding was called (see `overrides`) -------------------------

# id of a generated binding's code -> (op, the binding, the public object's name, whether it is
# a Tensor attribute, the parameter bound as self, whether it is an operator, the code)
_BINDINGS = {}

_REPORTED_AS = _tf.REPORTED_AS


def _register(fn, definition, name, method=False, self_param=None, dunder=False):
    # keyed by identity: code objects compare equal by value (same generated source)
    _BINDINGS[id(fn.__code__)] = (definition, fn, name, method, self_param, dunder,
                                  fn.__code__)


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


def _swapped(definition, dunder):
    """`Tensor.__radd__`: the op with the operands swapped; NotImplemented on a bad operand."""
    raw = _generate(definition, definition.sig, "dispatch", dunder, dunder=True)
    return lambda self, other: raw(other, self)


# reflected operators PyTorch binds to the op with the tensor first: `1 + x` is add(x, 1), so
# its node's edges are (x, the number)
_SELF_FIRST_RDUNDERS = frozenset({"__rshift__", "__radd__", "__rmul__"})

_INPLACE_DUNDERS = frozenset(f"__i{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
    "rshift", "matmul"))


def _reorder_method(fn, self_name, sig):
    names = list(sig.parameters)
    pos = names.index(self_name)

    def method(self, *args, **kwargs):
        args = list(args)
        args.insert(pos, self)
        return fn(*args, **kwargs)
    method.__name__ = fn.__name__
    return method


def public_functions():
    """name -> function for every op bound into the `torchish` namespace; those PyTorch
    gives `out=` (`out_arg.OUT_NAMES`) take it, under their own name (for its errors)."""
    from .out_arg import OUT_NAMES
    out = {}
    for d in REGISTRY.values():
        if d.bindings["function"]:
            for name in (d.name,) + tuple(d.bindings["aliases"]):
                # an alias gets its own binding where its errors name it
                if name in OUT_NAMES or (name != d.name and d.argcheck is not None):
                    out[name] = _generate(d, d.sig, "dispatch", name, out=name in OUT_NAMES)
                    _register(out[name], d, "torch." + name)
                else:
                    out[name] = d.function
    return out


def functional_ops():
    return {d.name: d.function for d in REGISTRY.values() if d.bindings["nn"]}


# ---- argument types (PyTorch's python argument parser) ------------------------------------

def _argcheck(opname, params, dyn, statics, scalar_operands, public):
    """What `_check_arguments` needs, from the declaration; None: the op is not checked."""
    if scalar_operands is None:
        if not public or opname.startswith("_"):
            return None
        scalar_operands = False
    numbers = frozenset(dyn if scalar_operands is True else scalar_operands or ())
    unknown = numbers - set(dyn)
    if unknown:
        raise ValueError(f"{opname}: scalar_operands names no dynamic parameter: {unknown}")
    required = {p.name for p in params if p.default is inspect.Parameter.empty}
    defaults = {p.name: p.default for p in params}
    # (position, required, whether None is a valid value)
    dims = tuple((i, p in required, p not in required and getattr(defaults[p], "nullable", True))
                 for i, p in enumerate(statics) if p in DIM_NAMES)
    return numbers, LIST_NAMES.intersection(dyn), required.intersection(dyn), dims


def _check_arguments(definition, statics, kinds):
    """Raise PyTorch's TypeError for an operand its signature refuses (see `op`'s
    `scalar_operands`); asked when a plan is made, so valid calls never pay for it."""
    numbers, lists, required, dims = definition.argcheck
    for pname, kind in zip(definition.tensors, kinds):
        if kind is None:
            if pname in required:
                raise argument_error(definition, pname, "Tensor", type(None))
        elif isinstance(kind, type):
            if pname not in numbers:
                raise argument_error(definition, pname, "Tensor", kind)
        elif kind[0] == "?":
            if len(kind) == 4 and pname in lists:   # (PyTorch counts arguments from 0 here)
                raise TypeError(f"expected Tensor as element {kind[2]} in argument "
                                f"{list(definition.sig.parameters).index(pname)}, but got "
                                f"{kind[3].__name__}")
            raise argument_error(definition, pname, "Tensor", kind[1])
        elif kind[0] == "L" and pname not in lists:
            raise argument_error(definition, pname, "Tensor", list)
    if definition.joint_scalars and any(isinstance(k, type) for k in kinds) and any(
            isinstance(k, tuple) and not k[1] for k in kinds[1:]):
        got = ["NoneType" if k is None else k.__name__ if isinstance(k, type) else "Tensor"
               for k in kinds]
        raise argument_error(definition, None, None, got, "mixed")
    for i, required_dim, nullable in dims:
        value = statics[i]
        if not ((value is None and nullable) or _is_index(value) or not given(value) or (
                isinstance(value, (list, tuple)) and all(map(_is_index, value)))):
            raise argument_error(definition, definition.statics[i], "int", type(value),
                                    "must" if required_dim else "combination")
    for name, needs in definition.given_with.items():
        value = statics[definition.statics.index(name)]
        if given(value) and not given(statics[definition.statics.index(needs)]):
            raise argument_error(definition, name, None, type(value), "combination")


def _is_index(value):
    return hasattr(type(value), "__index__")


# ---- plans: one compiled forward per (op, statics, operand kinds) ------------------------

def _kind_of(v):
    """The part of an operand that selects a plan (and the leaves it contributes)."""
    if isinstance(v, Tensor):
        return (v.dtype, v.ndim == 0)
    if v is None:
        return None
    kind = type(v)
    if kind in _SCALAR_TYPES:
        return kind
    if isinstance(v, _NP_SCALAR):   # as PyTorch's parser reads them (see dt.python_scalar)
        return int if isinstance(v, _NP_INTEGER) else float
    if isinstance(v, (bool, int, float, complex)):
        return kind
    if isinstance(v, (list, tuple)):
        return ("L", tuple(_kind_of(x) for x in v))
    return ("?", type(v))   # no operand: the plan raises the parser's TypeError


class Plan:
    __slots__ = ("op", "statics", "kinds", "compute", "result", "fwd", "jit", "bwd",
                 "records", "out_dtype", "_kw", "_var", "_templates", "jvps", "edgeless",
                 "shown")

    def __init__(self, definition, statics, kinds, out_dtype):
        if definition.argcheck is not None:   # (never cached: raised on every such call)
            _check_arguments(definition, statics, kinds)
        else:
            for kind in kinds:
                if isinstance(kind, tuple) and kind[0] == "?":
                    raise TypeError(f"expected Tensor as element {kind[2]} in argument, but "
                                    f"got {kind[3].__name__}" if len(kind) == 4 else
                                    f"unsupported operand of type {kind[1].__name__}")
        if definition.kinds_check is not None:
            definition.kinds_check(kinds)
        self.op = definition
        self.statics = dict(zip(definition.statics, statics))
        self.kinds = kinds
        self.out_dtype = out_dtype
        self.compute, self.result = _plan_dtypes(definition, self.statics, kinds)
        if definition.opmath and self.compute in _HALF:
            self.compute = dt.float32   # the result stays half: `_forward` rounds once
        if out_dtype is not None and self.result is not None and \
                not dt.can_cast(self.result, out_dtype):
            raise RuntimeError(f"result type {self.result._legacy} can't be cast to the "
                               f"desired output type {out_dtype._legacy}")
        self._kw = {k: value_of(v) for k, v in self.statics.items()}
        self._var = self._kw.pop(definition.varargs, ()) if definition.varargs else ()
        # leaf position -> view template, for operands read from their base (see `_collect`)
        self._templates = {i: k[2] for i, k in enumerate(_flat_kinds(kinds))
                           if isinstance(k, tuple) and len(k) == 3}
        self.fwd = self._forward
        # keep_unused: an op that ignores its operands (zero_, fill_) still runs, and puts its
        # result, on their device (pruned, they would leave it to JAX's default device)
        self.jit = eager_jit(self._forward, keep_unused=True)
        self.bwd = {}
        self.records = {}   # (mask, diff_out) -> what `_record` needs (see `_record_info`)
        self.jvps = {}      # operands with tangents -> compiled tangent map (forward AD)
        # operands PyTorch's node has no edge for: ((position, parameter or None), ...), and
        # the positions `next_functions` shows (None: all)
        self.edgeless, self.shown = _edgeless_operands(definition, kinds)

    def materialize(self, leaves):
        """The leaves with every fused view operand `(base, offsets)` read into its value."""
        if not self._templates:
            return leaves
        leaves = list(leaves)
        for i, template in self._templates.items():
            if isinstance(leaves[i], tuple):
                base, offsets = leaves[i]
                leaves[i] = apply_template(base, template, offsets)
        return leaves

    def _forward(self, *leaves):
        it = iter(self.materialize(leaves))
        args = []
        compute = self.compute
        promoted = self.op.promoted
        opmath = compute in _HALF and self.op.opmath_scalars and not all(map(_scalar_kind,
                                                                              self.kinds))
        for pname, kind in zip(self.op.tensors, self.kinds):
            value = _rebuild(kind, it)
            if compute is not None and pname in promoted and value is not None:
                # PyTorch's CPU kernels read a Python scalar, or a 0-d `other`, in float32
                if opmath and (isinstance(kind, type) or (args and kind[1])):
                    value = _cast_tree(value, kind, dt.float32)
                else:
                    value = _cast_tree(value, kind, compute)
            args.append(value)
        named = dict(zip(self.op.tensors, args), **self._kw)
        positional = [named.pop(n) for n in self.op.positional]
        out = self.op.body(*positional, *self._var, **named)
        target = self.out_dtype or self.result
        if target is not None:
            out = _cast_out(out, target, self.op.promote)
        return out


_HALF = (dt.bfloat16, dt.float16)


def _scalar_kind(kind):
    """A Python scalar or 0-d tensor operand (None counts: it is no tensor)."""
    return kind is None or isinstance(kind, type) or kind[1]


def _rebuild(kind, it):
    if kind is None:
        return None
    if isinstance(kind, tuple) and kind[0] == "L":
        return [_rebuild(k, it) for k in kind[1]]
    return next(it)


def _cast_tree(value, kind, dtype):
    if isinstance(value, list):
        return [_cast_tree(v, k, dtype) for v, k in zip(value, kind[1])]
    if isinstance(kind, type):  # a Python scalar
        return jnp.asarray(value, dtype.np)
    return value if value.dtype == dtype.np else value.astype(dtype.np)


def _cast_out(out, dtype, promote):
    if isinstance(out, (list, tuple)):
        return type(out)(_cast_out(o, dtype, promote) for o in out)
    if promote is Promote.ALWAYS_BOOL and dtype is not dt.bool:
        pass
    if out.dtype != dtype.np and (out.dtype.kind in "fciub"):
        if promote is Promote.ALWAYS_BOOL and out.dtype != bool and dtype is dt.bool:
            return out
        return out.astype(dtype.np)
    return out


def _flat_kinds(kinds):
    for k in kinds:
        if isinstance(k, tuple) and k[0] == "L":
            yield from _flat_kinds(k[1])
        elif k is not None:
            yield k


def _plan_dtypes(definition, statics, kinds):
    kind = definition.promote
    if not isinstance(kind, Promote):
        kind = kind(statics)
    if kind is Promote.NONE:
        return None, None
    tiers = ([], [], [])
    for pname, k in zip(definition.tensors, kinds):
        if pname not in definition.promoted:
            continue
        for leaf in _flat_kinds([k]):
            if isinstance(leaf, type):
                tiers[2].append(dt.scalar_dtype(leaf(0)))
            else:
                tiers[1 if leaf[1] else 0].append(leaf[0])
    common = dt.result_dtype(*tiers)
    if common is None:
        return None, None
    requested = statics.get("dtype")
    if requested is not None and isinstance(requested, dt.dtype):
        return requested, requested
    if kind in (Promote.INT_TO_FLOAT, Promote.INT_TO_FLOAT_REAL) and not (
            common.is_floating_point or common.is_complex):
        common = dt.get_default_dtype()
    elif kind is Promote.INT_TO_LONG and not (common.is_floating_point or common.is_complex):
        common = dt.int64
    if kind is Promote.ALWAYS_BOOL:
        return common, dt.bool
    if kind in (Promote.COMPLEX_TO_FLOAT, Promote.INT_TO_FLOAT_REAL):
        return common, common.to_real()
    return common, common


def _freeze(value):
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, Tensor):
        return value.item() if value.numel() == 1 else _freeze(value.tolist())
    if isinstance(value, dict):
        raise TypeError("dict is not a valid static argument")
    return value


def _get_plan(definition, sargs, kinds, out_dtype=None):
    # The default dtype decides int->float results and Python floats' dtype; the statics' types
    # tell `True` from `1` (equal as dict keys, different to some ops).
    key = (sargs, kinds, out_dtype, _DEFAULT_FLOAT[0], tuple(map(type, sargs)))
    try:
        return definition.plans[key]
    except KeyError:
        if any(isinstance(v, Tensor) for v in sargs):  # alpha=tensor(2.): use its value
            return _get_plan(definition, _freeze(sargs), kinds, out_dtype)
    except TypeError:  # an unhashable static argument (a list for a shape or dims)
        return _get_plan(definition, _freeze(sargs), kinds, out_dtype)
    plan = Plan(definition, sargs, kinds, out_dtype)
    definition.plans[key] = plan
    return plan


# ---- dispatch ---------------------------------------------------------------------------

_BY_NP = dt._BY_NP
_AUTOCAST_ACTIVE = _autocast.ACTIVE
_META = _meta.ACTIVE
_DEFAULT_FLOAT = dt._default_float
_SCALARS = (bool, int, float, complex)
_SCALAR_TYPES = frozenset(_SCALARS)
_NP_SCALAR, _NP_INTEGER = dt.np.generic, dt.np.integer


def _collect(targs, fuse_views=True):
    """(kinds, leaves, tensors, first tensor, whether any tensor requires grad).

    A view whose value is not at hand is passed as `(base array, offsets)` with its view
    template in the kind, so the plan reads it inside the op's own kernel: a transposed weight
    in `x @ w.t()` is never materialised, XLA folds the transpose into the dot.
    """
    kinds, leaves, tensors = [], [], []
    first = None
    needs_grad = False
    special = False   # an operand that may take part in __torch_function__
    for v in targs:
        if isinstance(v, Tensor):
            if type(v) is not Tensor and type(v) not in _PLAIN:
                special = True
            view = v._view
            if (fuse_views and view is not None and v._cache_base is not v._storage.data
                    and not v._stopgrad):
                base = v._storage.data
                template, offsets = view.split()
                kinds.append((_BY_NP[base.dtype], not view.size, template))
                leaves.append((base, offsets))
            else:
                data = v._data
                kinds.append((_BY_NP[data.dtype], data.ndim == 0))
                leaves.append(data)
            tensors.append(v)
            if first is None:
                first = v
            if v._grad_fn is not None or v._requires_grad:
                needs_grad = True
        elif isinstance(v, (list, tuple)):
            sub = []
            bad = None
            for x in v:
                if isinstance(x, Tensor):
                    if type(x) is not Tensor and type(x) not in _PLAIN:
                        special = True
                    data = x._data
                    sub.append((_BY_NP[data.dtype], data.ndim == 0))
                    leaves.append(data)
                    tensors.append(x)
                    if first is None:
                        first = x
                    if x._grad_fn is not None or x._requires_grad:
                        needs_grad = True
                elif isinstance(x, _SCALARS):
                    sub.append(type(x))
                    leaves.append(x)
                    tensors.append(None)
                else:   # the plan raises the parser's TypeError, naming the argument
                    if hasattr(type(x), "__torch_function__"):   # a tensor-like
                        special = True
                    bad = ("?", type(v), len(sub), type(x))
                    break
            kinds.append(bad or ("L", tuple(sub)))
        else:
            k = _kind_of(v)
            kinds.append(k)
            if isinstance(k, type):
                if isinstance(v, _NP_SCALAR):
                    v = dt.python_scalar(v)
                leaves.append(v)
                tensors.append(None)
            elif k is not None and hasattr(k[1], "__torch_function__"):   # a tensor-like
                special = True
    return tuple(kinds), leaves, tensors, first, needs_grad, special


def _run(plan, leaves):
    """Run the compiled forward; JAX's errors become PyTorch's."""
    if profiler.ACTIVE[0] is not None:
        event = profiler.op_event(plan.op.name, lambda: plan.materialize(leaves))
        try:
            return _run_plan(plan, leaves)
        finally:
            profiler.close(event)
    return _run_plan(plan, leaves)


def _run_plan(plan, leaves):
    try:
        return plan.jit(*leaves)
    except (TypeError, ValueError) as exc:
        from .errors import on_one_device, translate
        if "incompatible devices" in str(exc):
            return plan.jit(*on_one_device(leaves))
        raise translate(plan, plan.materialize(leaves), exc) from None


def _check(definition, plan, targs, leaves):
    """The error the op's `check` finds in concrete operands, or None (also when traced)."""
    if definition.check is None:
        return None
    for leaf in leaves:  # a fused view operand is `(base, offsets)`
        if isinstance(leaf, jax.core.Tracer) or (
                isinstance(leaf, tuple) and isinstance(leaf[0], jax.core.Tracer)):
            return None
    return definition.check(plan.compute, *targs, *plan._var, **plan._kw)


def dispatch(definition, targs, sargs):
    kinds, leaves, tensors, first, needs_grad, special = _collect(targs)
    if special or _TF_MODES:
        result = _torch_function(definition, targs, sargs)
        if result is not _PROCEED:
            return result
    if _AUTOCAST_ACTIVE[0] and definition.name in _autocast.NAMES:
        cast = _autocast_args(definition, targs, sargs)
        if cast is not None:   # the op runs on the cast arguments, autocast suspended
            return _autocast.suspended(dispatch, definition, *cast)
    plan = _get_plan(definition, sargs, kinds)
    record = needs_grad and definition.differentiable and grad_mode.GRAD_ENABLED[0]
    if definition.view is not None:
        # A view op computes no value: the view reads its base when (and where) it is used.
        steps = definition.view(*targs, *plan._var, **plan._kw)
        if steps is not None:
            if definition.multi_view:  # split/unbind/chunk: every output views the input
                outs = [_as_view(first, st) for st in steps]
                result = definition.returns(*outs) if definition.returns else tuple(outs)
            else:
                outs = None
                result = _as_view(first, steps)
            made = outs or [result]
            _finish_view(plan, leaves, tensors, kinds, made, record, result)
            if needs_grad or first._creation is not None:
                _view_creation(first, made, definition.multi_view, record)
            if FORWARD_AD[0]:
                _forward_tangents(plan, leaves, tensors, made)
            return result
    if _META[0] and _meta.involved(tensors):   # meta device: shapes only (see _meta.py)
        return _meta.dispatch(definition, plan, targs, leaves, tensors, kinds, record)
    error = _check(definition, plan, targs, leaves)
    out = _run(plan, leaves)
    if error is not None:  # raised after the forward: shape and dtype errors come first
        raise error
    device = first._storage.device if first is not None else None
    if device is CPU and has_accelerator() and first.ndim == 0:  # a CPU scalar, CUDA others?
        device = next((t._storage.device for t in tensors
                       if t is not None and t._storage.device is not CPU), CPU)
    outs, result = wrap_result(definition, out, device)
    if record:
        _record(plan, leaves, tensors, outs, kinds)
    if FORWARD_AD[0]:
        _forward_tangents(plan, leaves, tensors, outs)
    return result


# ---- forward AD: tangents through the op's forward (see autograd/forward_ad.py) -----------

FORWARD_AD = [False]   # inside a dual_level


def _forward_tangents(plan, leaves, tensors, outputs):
    """Give `outputs` the tangents the op maps its operands' tangents to."""
    from ..autograd.forward_ad import set_tangent, tangent_of
    tangents = [tangent_of(t) for t in tensors]
    mask = tuple(t is not None for t in tangents)
    if not any(mask):
        return
    jvp = plan.jvps.get(mask)
    if jvp is None:
        jvp = plan.jvps[mask] = _jvp_of(plan, mask)
    primals = plan.materialize(leaves)
    outs = jvp(primals, [t._data.astype(p.dtype)
                         for t, p in zip(tangents, primals) if t is not None])
    for out, tangent in zip(outputs, outs if isinstance(outs, (tuple, list)) else [outs]):
        if out.dtype.is_floating_point or out.dtype.is_complex:
            set_tangent(out, _wrap(tangent, out._storage.device))


def _jvp_of(plan, mask):
    where = [i for i, m in enumerate(mask) if m]

    def tangents(primals, tangents):
        def fwd(*moving):
            args = list(primals)
            for i, value in zip(where, moving):
                args[i] = value
            return plan.fwd(*args)
        return jax.jvp(fwd, [primals[i] for i in where], list(tangents))[1]
    return eager_jit(tangents)


def dispatch_out(definition, targs, sargs, out, name):
    """`torchish.<name>(..., out=out)`: the result, computed as without `out`, written into
    `out` in place (see `out_arg.write_out`); `out` (or the named tuple of outs) returned."""
    from . import out_arg
    if _tf.ARMED[0] and (_TF_MODES or _tf.overloaded(_tf._flat(targs + (out,)))):
        result = _torch_function(definition, targs, sargs)   # (before out's checks)
        if result is not _PROCEED:
            return result
    outs = out_arg.check_out(name, out, targs, multi=definition.returns is not None or None)
    if name in out_arg.DTYPE_FROM_OUT:
        if name in ("sum", "prod") and not given(sargs[definition.statics.index("dim")]):
            # only their `dim` overloads take out= in PyTorch
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            "(Tensor, out=Tensor)")
        i = definition.statics.index("dtype")
        if sargs[i] is None:  # PyTorch accumulates in out's dtype (inputs cast first)
            sargs = sargs[:i] + (outs[0].dtype,) + sargs[i + 1:]
        elif sargs[i] is not outs[0].dtype:
            raise RuntimeError(out_arg.expected_dtype(sargs[i], outs[0].dtype))
    return out_arg.write_out(name, outs, dispatch(definition, targs, sargs))


def _autocast_args(definition, targs, sargs):
    """(targs, sargs) as the active autocast region casts them, or None: no cast applies."""
    device_type = _autocast.device_type_of(targs)
    if device_type is None or not _autocast.enabled.get(device_type):
        return None
    policy = _autocast.policy_of(definition.name, device_type)
    if policy is None:
        return None
    if policy == _autocast.FP32_SET_OPT_DTYPE:
        i = definition.statics.index("dtype")
        if sargs[i] is None and _autocast.wants_fp32(targs, device_type):
            sargs = sargs[:i] + (dt.float32,) + sargs[i + 1:]
        return targs, sargs
    return tuple(_autocast.cast_values(policy, targs, device_type)), sargs


def _finish_view(plan, leaves, tensors, kinds, made, record, result):
    if record:
        node = _record(plan, leaves, tensors, made, kinds)
        if node is not None:
            node._is_view = True
        for o in made:
            o._view_vc = o._vc[0]
    return result


def _view_creation(src, made, multi, record):
    """Mark views whose in-place modification PyTorch forbids (its view "creation meta")."""
    if not grad_mode.GRAD_ENABLED[0]:
        meta = ("no_grad",)
        for o in made:
            o._creation = meta
    elif multi and record:
        for i, o in enumerate(made):
            if o._grad_fn is not None:
                o._creation = ("multi", o._grad_fn._name, i)
    elif src._creation is not None:  # a view of such a view inherits its meta, under its
        for i, o in enumerate(made):   # own grad_fn's name
            meta = src._creation
            if meta[0] == "multi" and o._grad_fn is not None:
                meta = ("multi", o._grad_fn._name, i)
            o._creation = meta


def _creation_error(t, action):
    meta = t._creation
    if meta[0] == "no_grad":
        return RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")
    from ..autograd.graph import _op_name_of
    return RuntimeError(
        f"Output {meta[2]} of {_op_name_of(meta[1])} is a view and {action}. This view is the "
        "output of a function that returns multiple views. Such functions do not allow the "
        "output views to be modified inplace. You should replace the inplace operation by an "
        "out-of-place one.")


def _as_view(src, steps):
    view = src._view
    if view is None:
        view = base_view(src._storage.data.shape)
    for step in steps:
        view = extend(view, step)
    t = _alias(src, view)
    t._cache, t._cache_base = None, None
    t._stopgrad = src._stopgrad   # a view of a detached tensor is detached too (when traced)
    return t


def _grad_name(definition, kinds, statics):
    g = definition.grad_fn
    if g is None:
        return definition.name.capitalize() + "Backward0"
    return g if isinstance(g, str) else g(kinds, statics)


def wrap_result(definition, out, device):
    """Tensors for an op's computed output(s) on `device`: (the list of outputs, what the op
    returns: the single tensor, a tuple, or its `returns` structure)."""
    if isinstance(out, (tuple, list)):
        outs = [_wrap(o, device) for o in out]
        return outs, definition.returns(*outs) if definition.returns else tuple(outs)
    result = _wrap(out, device)
    return [result], result


def _record(plan, leaves, tensors, outs, kinds):
    avals = tuple([(o.shape, o.dtype) for o in outs])
    diff_out = tuple([_DIFFERENTIABLE[d] for _, d in avals])
    if True not in diff_out:
        return None
    edges = op_edges(plan, tensors) if plan.edgeless else [
        None if t is None else edge_of(t) for t in tensors]
    mask = tuple([e is not None for e in edges])
    if True not in mask:
        return None
    name, vjp, saved_at, saved_outs = _record_info(plan, mask, diff_out)
    saved = None if saved_at is None else _saved_of(tensors, saved_at)
    node = Node(name, edges, leaves, tensors, vjp, avals, saved, plan.fwd)
    node._shown = plan.shown
    for i, o in enumerate(outs):
        if diff_out[i]:
            o._grad_fn = node
            o._output_nr = i
    if saved_outs:
        node._saved = (saved or []) + [saved_entry(outs[i], (node, i)) for i in saved_outs]
    if saved_tensors.active():
        _pack_saved(node, leaves, tensors, saved_at)
    return node


def _pack_saved(node, leaves, tensors, positions):
    """Hand the node's saved operands (at `positions`) and saved outputs to the active
    saved-tensor pack hook."""
    inputs = [(i, tensors[i]) for i in positions or () if tensors[i] is not None]
    outputs = [(None, t) for t, _, p in node._saved or () if p and p[0] is node]
    if inputs or outputs:
        saved_tensors.pack_into(node, leaves, inputs + outputs)


_DIFFERENTIABLE = {d: d.is_floating_point or d.is_complex for d in dt._BY_NP.values()}


def _record_info(plan, mask, diff_out):
    """(grad_fn name, pullback, positions of the saved inputs, positions of the saved
    outputs): what recording this plan with these inputs needing grads takes, worked out
    once."""
    info = plan.records.get((mask, diff_out))
    if info is None:
        name = _grad_name(plan.op, plan.kinds, plan.statics)
        info = plan.records[(mask, diff_out)] = (
            name, _refuse(plan) if name == NOT_IMPLEMENTED else _plan_vjp(plan, mask, diff_out),
            saved_positions(plan.op, plan.kinds, mask),
            saved_output_positions(plan.op, diff_out))
    return info


# The grad_fn of an overload PyTorch records without a derivative (`remainder(2, x)`): its
# backward raises.
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def _refuse(plan):
    def refuse(leaves, cts):
        raise RuntimeError(f"derivative for aten::{kernel_name(plan)} is not implemented")
    return refuse


def _saved_outputs(saves, returns):
    """The outputs named in `saves`, in order: "result", or an output's index."""
    names = ("result",) if saves == "result" else saves if isinstance(saves, tuple) else ()
    slots = [_output_slot(n, returns) for n in names]
    return tuple(slot for slot in slots if slot is not None)


def _output_slot(name, returns):
    """"result", the index of the output `name` names, or None (not an output's name)."""
    fields = getattr(returns, "_fields", ())
    if name in fields:
        return fields.index(name)
    if name.startswith("result") and name[6:].isdigit():
        return int(name[6:])
    return "result" if name == "result" else None


def saved_output_positions(definition, diff_out, only=None):
    """Positions of the outputs PyTorch saves for this op's backward (`diff_out`: which
    outputs are differentiable, the ones "result" names); `only`: just that name's."""
    at = []
    for n in definition.saved_outputs:
        if only is not None and n != _output_slot(only, definition.returns):
            continue
        at += [i for i, d in enumerate(diff_out) if d] if n == "result" else [n]
    # (an output this call does not return, as max_pool2d's indices without return_indices)
    return tuple(i for i in dict.fromkeys(at) if i < len(diff_out))


def operand_positions(definition, kinds):
    """{parameter: range of its positions in the flattened operands} (a list operand has one
    position per element, an absent one none)."""
    at = {}
    pos = 0
    for pname, kind in zip(definition.tensors, kinds):
        count = 0 if kind is None else (len(kind[1]) if isinstance(kind, tuple) and
                                        kind and kind[0] == "L" else 1)
        at[pname] = range(pos, pos + count)
        pos += count
    return at


def saved_positions(definition, kinds, mask, only=None):
    """Positions (in the flattened operands) of the inputs PyTorch saves for this op's
    backward, or None when it saves none; `mask` tells which operands need grads. `only`:
    just those of that parameter."""
    saves = definition.saves
    if saves == () or saves is None:
        return None
    if saves == "result":
        return ()
    at = operand_positions(definition, kinds)   # parameter -> its positions
    if isinstance(saves, dict):  # {input: the inputs whose gradient needs it}
        needs = {n: any(mask[i] for i in r) for n, r in at.items()}
        # in the order PyTorch's formulas save them: by the first gradient that uses each
        names = [n for g in definition.tensors if needs.get(g)
                 for n, users in saves.items() if g in users]
        names = [n for n in dict.fromkeys(names) if n in at]
    elif saves == "inputs":
        names = [n for n in definition.tensors if n in at]
    else:   # (a name of an output is not an input's)
        names = [n for n in saves if n in at and _output_slot(n, definition.returns) is None]
    return tuple(i for n in names if only in (None, n) for i in at[n])


def _edgeless_operands(definition, kinds):
    """(((position, parameter), ...), shown): the operands PyTorch's node has no edge for
    (parameter None: a Python number that selected a Scalar overload), and what
    `next_functions` lists: operand positions, None for an absent optional tensor (PyTorch's
    undefined edge), or None when that is every operand as it is."""
    nondiff = definition.non_differentiable
    at = operand_positions(definition, kinds)
    scalar_overload = not definition.scalars_as_tensors and any(
        isinstance(k, type) for k in kinds)
    edgeless, shown = [], []
    for pname, kind in zip(definition.tensors, kinds):
        if pname in nondiff:
            edgeless += [(i, pname) for i in at[pname]]
        elif isinstance(kind, type) and scalar_overload:
            edgeless.append((at[pname][0], None))
        elif kind is None:
            numbers = definition.scalar_operands
            in_scalar_overload = scalar_overload and (numbers is True or pname in (numbers or ()))
            if pname in definition.optional_tensors and not in_scalar_overload:
                shown.append(None)
        else:
            shown += at[pname]
    if not edgeless and None not in shown:
        return (), None
    return tuple(edgeless), tuple(shown)


def op_edges(plan, tensors):
    """The node's edges for these operands (None where PyTorch's node has none); a tensor
    that requires grad in a non-differentiable parameter is PyTorch's error."""
    edges = [None if t is None else edge_of(t) for t in tensors]
    for i, pname in plan.edgeless:
        if edges[i] is not None:
            if pname is not None:
                raise RuntimeError(
                    f"The function '{kernel_name(plan)}' is not differentiable with respect "
                    f"to argument '{pname}'. This input cannot have requires_grad True.")
            edges[i] = None
    return edges


def kernel_name(plan):
    k = plan.op.kernel
    if k is None:
        return plan.op.name.lstrip("_")
    return k if isinstance(k, str) else k(plan.kinds, plan.statics)


def _saved_of(tensors, positions):
    # (a scalar operand has None at its position: nothing to save)
    saved = [t for t in map(tensors.__getitem__, positions) if t is not None]
    for t in saved:
        if type(t._storage) is InferenceStorage:
            raise RuntimeError(INFERENCE_SAVED_MSG)
    return [saved_entry(t) for t in saved]


INFERENCE_SAVED_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


def _plan_vjp(plan, mask, diff_out):
    key = (mask, diff_out)
    fn = plan.bwd.get(key)
    if fn is None:
        fn = eager_jit(_make_vjp(plan.fwd, mask, diff_out, plan.materialize))
        plan.bwd[key] = fn
    return fn


def _make_vjp(fwd, mask, diff_out, materialize=None):
    """The pullback of `fwd` for the leaves in `mask`; fused view operands (see `_collect`) are
    read first, so their gradients come out in the view's shape, as the graph edges expect."""
    positions = [i for i, m in enumerate(mask) if m]

    def vjp(leaves, cts):
        if materialize is not None:
            leaves = materialize(leaves)

        def f(*diff):
            full = list(leaves)
            for i, v in zip(positions, diff):
                full[i] = v
            out = fwd(*full)
            if isinstance(out, (tuple, list)):
                return [o for o, d in zip(out, diff_out) if d]
            return [out]
        primal_out, pullback = jax.vjp(f, *[leaves[i] for i in positions])
        diff_cts = [c for c, d in zip(cts, diff_out) if d]
        diff_cts = [jnp.zeros_like(p) if c is None else torch_grad(c.astype(p.dtype))
                    for c, p in zip(diff_cts, primal_out)]
        if any(c.dtype in half_grad.HALF for c in diff_cts):
            pullback = half_grad.float32_sums(pullback)   # PyTorch sums half grads in float32
        grads = pullback(diff_cts)
        result = [None] * len(leaves)
        for i, g in zip(positions, grads):
            result[i] = torch_grad(g)
        return result
    return vjp


# ---- in-place ops ----------------------------------------------------------------------

_LEAF_MSG = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_MSG = ("a view of a leaf Variable that requires grad is being used in an in-place "
                  "operation.")


_OVERLAP_MSG = ("unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.")


# PyTorch's fill_/zero_ write one value everywhere and do not check for internal overlap
_OVERLAP_OK = frozenset(("_fill", "_zero"))


def check_inplace(self):
    if type(self._storage) is InferenceStorage and not grad_mode._INFERENCE[0]:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if grad_mode.GRAD_ENABLED[0]:
        if self._creation is not None and self._base is not None and \
                self._base.requires_grad:
            raise _creation_error(self, "is being modified inplace")
        if self._grad_fn is None and self._requires_grad:
            raise RuntimeError(_LEAF_MSG)
        base = self._base
        if base is not None and base._grad_fn is None and base._requires_grad:
            raise RuntimeError(_VIEW_LEAF_MSG)


def dispatch_inplace(definition, targs, sargs):
    kinds, leaves, tensors, _, needs_grad, special = _collect(targs, fuse_views=False)
    if special or _TF_MODES:
        result = _torch_function(definition, targs, sargs)
        if result is not _PROCEED:
            return result
    self = targs[0]
    check_inplace(self)
    view = self._view
    if view is not None and 0 in view.stride and definition.name not in _OVERLAP_OK and any(
            st == 0 and n > 1 for n, st in zip(view.size, view.stride)):
        raise RuntimeError(_OVERLAP_MSG)
    plan = _get_plan(definition, sargs, kinds, self.dtype)
    if _META[0] and _meta.involved(tensors):   # meta device: shapes only (see _meta.py)
        return _meta.dispatch_inplace(definition, plan, targs, leaves, tensors, kinds,
                                      needs_grad and grad_mode.GRAD_ENABLED[0]
                                      and definition.differentiable)
    error = _check(definition, plan, targs, leaves)
    out = _run(plan, leaves)
    if error is not None:
        raise error
    if isinstance(out, (tuple, list)):
        out = out[0]
    if out.shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(out.shape)}")
    record = (needs_grad and grad_mode.GRAD_ENABLED[0] and definition.differentiable
              and (self.dtype.is_floating_point or self.dtype.is_complex))
    write_inplace(self, out, plan if record else None, leaves, tensors, kinds)
    if FORWARD_AD[0]:
        _forward_tangents(plan, leaves, tensors, [self])
    return self


def write_inplace(self, value, plan, leaves, tensors, kinds):
    """Write `value` into `self` and, when `plan` is given, record the in-place op."""
    if plan is None:
        self._set_data(value)
        return
    base = self._base
    if base is None:
        edges = op_edges(plan, tensors)
        mask = tuple(e is not None for e in edges)
        # `self` is overwritten: not saved (what its gradient needs of the others is)
        positions = saved_positions(plan.op, kinds, mask)
        saved = None if positions is None else _saved_of([None] + list(tensors[1:]), positions)
        self._set_data(value)
        name = plan.op.inplace_grad_fn or _grad_name(plan.op, kinds, plan.statics)
        node = Node(name, edges, leaves, tensors, _plan_vjp(plan, mask, (True,)),
                    [(self.shape, self.dtype)], saved, plan.fwd)
        node._shown = plan.shown
        self._grad_fn = node
        self._output_nr = 0
        if plan.op.saved_outputs:  # (tanh_ saves its result: a later in-place change to it
            node._saved = (saved or []) + [saved_entry(self, (node, 0))]  # is caught then)
        if saved_tensors.active():   # (`self` as it was: PyTorch saves a clone of it)
            _pack_saved(node, leaves, [_wrap(leaves[0])] + list(tensors[1:]), positions)
        return
    # In-place on a view: the base gets CopySlices, the view AsStridedBackward0 (as PyTorch).
    view = self._view
    base_old = base._data
    fwd = plan.fwd
    to_storage, from_storage = _storage_of(base)

    def copy_slices(base_value, *rest):
        storage = to_storage(base_value)
        args = list(rest)
        args.insert(0, read_view(storage, view.steps))
        return from_storage(write_view(storage, view, fwd(*args)))

    base_edge = edge_of(base)
    edges = op_edges(plan, tensors)
    # what the op saves of its other operands, at their versions before the write (which
    # changes one that views the same storage: `h[:, 1:] *= h[:, :-1]` fails at backward)
    positions = saved_positions(plan.op, kinds, tuple(e is not None for e in edges))
    saved = None if positions is None else _saved_of([None] + list(tensors[1:]), positions)
    self._set_data(value)
    node = call_jax_record("torch::autograd::CopySlices", copy_slices, [base_old] + leaves[1:],
                           [base] + list(tensors[1:]), [base_edge] + edges[1:],
                           [(base.shape, base.dtype)], key=("copyslices", id(plan), view.steps,
                                                            view.size, view.stride,
                                                            view.offset, _root_key(base)))
    node._saved = saved
    node._shown = plan.shown   # (PyTorch's CopySlices lists the base, then the op's others)
    base._grad_fn = node
    base._output_nr = 0
    refresh_view_grad_fn(self)


def _storage_of(base):
    """(base value -> storage array, storage array -> base value) as JAX functions. A view's
    steps start from its base's storage, which is the base's value unless the base is laid out
    over it (a clone keeping a transposed input's strides, see `_tensor.lay_out`)."""
    root = base._view
    if root is None:
        return (lambda b: b), (lambda s: s)
    shape = base._storage.data.shape
    # such a layout covers its whole storage, so writing through it rebuilds every element
    return (lambda b: write_view(jnp.zeros(shape, b.dtype), root, b),
            lambda s: read_view(s, root.steps))


def _root_key(base):
    root = base._view
    return None if root is None else (root.steps, base._storage.data.shape)


def refresh_view_grad_fn(view_tensor):
    base = view_tensor._base
    if view_tensor._creation is not None and view_tensor._creation[0] == "multi":
        raise _creation_error(view_tensor, "its base or another view of its base has been "
                                           "modified inplace")
    steps = view_tensor._view.steps
    to_storage, _ = _storage_of(base)
    name = "AsStridedBackward0"
    if len(steps) == 1 and steps[0][0] == "dtype":   # PyTorch replays a lone dtype view
        name = "ViewAsRealBackward0" if base.dtype.is_complex else "ViewAsComplexBackward0"
    node = call_jax_record(name, lambda b: read_view(to_storage(b), steps),
                           [base._data],
                           [base], [edge_of(base)], [(view_tensor.shape, view_tensor.dtype)],
                           key=("view", steps, _root_key(base)))
    view_tensor._grad_fn = node
    view_tensor._output_nr = 0
    view_tensor._view_vc = view_tensor._vc[0]


# ---- ad-hoc JAX functions with autograd ------------------------------------------------

_FN_VJP = {}


def call_jax_record(name, fn, leaves, inputs, edges, out_avals, key=None):
    """Record a node for `fn(*leaves)` (already computed by the caller)."""
    mask = tuple(e is not None for e in edges)
    diff_out = tuple(True for _ in out_avals)
    vjp = None
    if key is not None:
        vjp = _FN_VJP.get((key, mask))
    if vjp is None:
        vjp = eager_jit(_make_vjp(fn, mask, diff_out)) if key is not None else \
            _make_vjp(fn, mask, diff_out)
        if key is not None:
            _FN_VJP[(key, mask)] = vjp
    return Node(name, edges, leaves, inputs, vjp, out_avals, None, fn)


def record_not_implemented(name, error, inputs, outputs):
    """For an op PyTorch records but cannot differentiate (`unique`: Unique2Backward0): when
    an input requires grad and grad mode is on, the floating `outputs` get a node `name` whose
    backward raises `error` (an exception instance)."""
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    if not (grad_mode.GRAD_ENABLED[0] and any(t.requires_grad for t in tensors)):
        return
    outs = [o for o in outputs if o.dtype.is_floating_point or o.dtype.is_complex]

    def refuse(leaves, cts):
        raise error

    edges = [edge_of(t) for t in tensors]
    node = Node(name, edges, [t._data for t in tensors], tensors, refuse,
                [(tuple(o.shape), o.dtype) for o in outs], None)
    for i, o in enumerate(outs):
        o._grad_fn, o._output_nr = node, i


def call_jax(name, fn, inputs, key=None):
    """Apply a JAX function to tensors (and constants), recording it for autograd.

    For code outside the registry that needs a one-off differentiable computation: device
    moves, `create_graph` backward passes. `key` (hashable) enables caching of the backward.
    """
    leaves = [t._data if isinstance(t, Tensor) else t for t in inputs]
    out = fn(*leaves)
    multi = isinstance(out, (tuple, list))
    outs_raw = list(out) if multi else [out]
    tensors = [t if isinstance(t, Tensor) else None for t in inputs]
    device = next((t.device for t in tensors if t is not None), None)
    outs = [None if o is None else _wrap(o, device) for o in outs_raw]
    if grad_mode.GRAD_ENABLED[0] and any(t is not None and t.requires_grad for t in tensors):
        live = [i for i, o in enumerate(outs) if o is not None and
                (o.dtype.is_floating_point or o.dtype.is_complex)]
        if live:
            def live_fn(*a):
                r = fn(*a)
                r = list(r) if multi else [r]
                return [r[i] for i in live]
            edges = [edge_of(t) if t is not None else None for t in tensors]
            node = call_jax_record(name, live_fn, leaves, tensors, edges,
                                   [(outs[i].shape, outs[i].dtype) for i in live],
                                   key=None if key is None else (key, tuple(live)))
            for j, i in enumerate(live):
                outs[i]._grad_fn = node
                outs[i]._output_nr = j
    return outs if multi else outs[0]


def record_backward(node, cts):
    """Run `node`'s backward on Tensors, itself recorded (for create_graph=True)."""
    from ..autograd.double_backward import record_backward as record
    return record(node, cts)
