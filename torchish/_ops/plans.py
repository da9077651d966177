"""Plans: one compiled forward per (op, static arguments, operand kinds), computing in the
dtype PyTorch's promotion gives (`_plan_dtypes`), casts included, so an op is one XLA
dispatch."""
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit
from .. import _dtype as dt
from .._tensor import Tensor
from .._views import apply_template
from .argcheck import _check_arguments, bools_as_ints
from .errors import tensor_element_error
from .float8 import to_float8
from .float8_refusals import IN_FLOAT as FLOAT8_IN_FLOAT, OWN_CHECK as FLOAT8_OWN_CHECK
from .opdef import Promote, value_of
from .recording import _edgeless_operands
from .dtype_refusals import check as refusals_check

_DEFAULT_FLOAT = dt._default_float
_SCALARS = (bool, int, float, complex)
_SCALAR_TYPES = frozenset(_SCALARS)
_NP_SCALAR, _NP_INTEGER = np.generic, np.integer


class UInt64Int(int):
    """The kind of a Python int in [2**63, 2**64) as an operand: PyTorch's parser reads it as
    an unsigned 64-bit Scalar, a wrapped number of dtype uint64 (2**64 - 1 acts as -1 in a
    signed integer result, keeps its value in a floating one). Its leaf is a NumPy uint64:
    JAX cannot parse such a Python int as a jit argument."""


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def big_int(v):
    """(kind, leaf) for a Python int outside int64, or PyTorch's OverflowError."""
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 2 ** 64:
        raise OverflowError("int too big to convert")
    return UInt64Int, np.uint64(v)


def number_arg(v):
    """A Number argument as PyTorch's parser reads it: a NumPy scalar as a Python number
    (`dt.python_scalar`), a Python int outside int64 as an unsigned 64-bit Scalar, or the
    parser's error (`big_int`)."""
    if isinstance(v, _NP_SCALAR):
        return dt.python_scalar(v)
    if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX:
        big_int(v)
    return v


# keyword-only Scalar parameters (`alpha=1` of add/sub/addmm..., `value=1` of addcmul/addcdiv):
# parsed as Numbers, then converted to the op's computation type with c10's range check
_SCALAR_STATICS = ("alpha", "beta", "value")


def _scalar_statics(definition):
    names = definition.__dict__.get("_scalar_statics")
    if names is None:
        import inspect
        try:
            params = inspect.signature(definition.body).parameters
        except (TypeError, ValueError):
            params = {}
        names = tuple(p for p in _SCALAR_STATICS if p in definition.statics and p in params
                      and params[p].kind is inspect.Parameter.KEYWORD_ONLY)
        definition.__dict__["_scalar_statics"] = names
    return names


# ops whose kernel adds `-alpha` (sub, rsub): c10 negates an unsigned Scalar as an int64
_NEGATED_ALPHA = frozenset({"sub", "rsub"})


def _convert_scalars(kw, names, compute, opname):
    """Raise c10's overflow error for a Scalar static that `compute` cannot hold; pass a
    Python int beyond int64 (an unsigned Scalar, which JAX cannot take) as the number the
    conversion gives."""
    from .errors import scalar_overflow
    for name in names:
        v = kw.get(name)
        if compute is None or isinstance(v, (complex, Tensor)) or v is None:
            continue   # (complex: the op's own check words that error)
        error = scalar_overflow(v, compute)
        if error is not None:
            raise error
        if type(v) is int and v > _INT64_MAX:
            if opname in _NEGATED_ALPHA and name == "alpha" and v > 2 ** 63:
                v -= 2 ** 64   # (-(2**64 - 1) is 1 there: sub(x, y, alpha=2**64-1) is x + y)
            kw[name] = bool(v) if compute is dt.bool else float(v)


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
                    raise tensor_element_error(kind[2], None, kind[3]) if len(kind) == 4 \
                        else TypeError(f"unsupported operand of type {kind[1].__name__}")
        if definition.kinds_check is not None:
            definition.kinds_check(kinds)
        self.op = definition
        self.statics = dict(zip(definition.statics, statics))
        self.kinds = kinds
        self.out_dtype = out_dtype
        scalars = _scalar_statics(definition)
        for name in scalars:   # (the parser's errors come before any other)
            number_arg(value_of(self.statics[name]))
        self.compute, self.result = _plan_dtypes(definition, self.statics, kinds)
        # (ops PyTorch has no kernel for: complex, uint16/32/64, float8 operands)
        refusals_check(definition, self.statics, kinds, self.compute)
        if definition.opmath and self.compute in _HALF:
            self.compute = dt.float32   # the result stays half: `_forward` rounds once
        elif self.compute in dt.FLOAT8 and definition.name not in FLOAT8_OWN_CHECK:
            # PyTorch's few float8 kernels compute in float and round once, by its own
            # conversion (`_cast_out`); XLA's float8 arithmetic rounds differently
            self.compute = dt.float32
        elif self.compute is None and definition.name in FLOAT8_IN_FLOAT:
            same = {k[0] for k in kinds if type(k) is tuple and k and isinstance(k[0], dt.dtype)}
            if len(same) == 1 and same <= dt.FLOAT8:
                self.compute, self.result = dt.float32, same.pop()
        if out_dtype is not None and self.result is not None and \
                not dt.can_cast(self.result, out_dtype):
            raise RuntimeError(f"result type {self.result._legacy} can't be cast to the "
                               f"desired output type {_out_name(definition, kinds, out_dtype)}")
        self._kw = {k: value_of(v) for k, v in self.statics.items()}
        self._var = self._kw.pop(definition.varargs, ()) if definition.varargs else ()
        if definition.argcheck is not None:
            self._var, self._kw = bools_as_ints(definition, self._var, self._kw)
        if scalars:
            for name in scalars:
                if isinstance(self._kw[name], _NP_SCALAR):
                    self._kw[name] = dt.python_scalar(self._kw[name])
            # (an op without promotion converts them to its input's type: index_add)
            first = kinds[0] if kinds and isinstance(kinds[0], tuple) else None
            _convert_scalars(self._kw, scalars, self.compute or (
                first[0] if first is not None and isinstance(first[0], dt.dtype) else None),
                definition.name)
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


def _out_name(definition, kinds, dtype):
    """The output dtype as a failed cast names it: its C++ name where the op says so."""
    cpp_named = getattr(definition, "cpp_out_name", None)   # (OpDefs made directly)
    if cpp_named is not None and cpp_named(kinds):
        from .pointwise import CPP_NAMES
        return CPP_NAMES[dtype.name]
    return dtype._legacy


def _scalar_kind(kind):
    """A Python scalar or 0-d tensor operand (None counts: it is no tensor)."""
    return kind is None or isinstance(kind, type) or kind[1]


def _rebuild(kind, it):
    if kind is None:
        return None
    if isinstance(kind, tuple) and kind[0] == "L":
        return [_rebuild(k, it) for k in kind[1]]
    return next(it)


def bool_to(value, np_dtype):
    """A bool array converted to a number type. XLA's simplifier turns `convert(mask) * x` into
    `select(mask, x, 0)`, which gives 0 where PyTorch's 0.0 * inf or 0.0 * nan gives nan; the
    barrier hides the convert from it."""
    return jax.lax.optimization_barrier(value.astype(np_dtype))


def _cast_tree(value, kind, dtype):
    if isinstance(value, list):
        return [_cast_tree(v, k, dtype) for v, k in zip(value, kind[1])]
    if type(value) is complex and not dtype.is_complex:
        value = value.real
    elif jnp.iscomplexobj(value) and not dtype.is_complex:
        # (an operand left out of the promotion, checked to have no imaginary part: clamp's
        # complex number bound of a real tensor; JAX refuses or deprecates the direct cast)
        value = jnp.real(value)
    if isinstance(kind, type):  # a Python scalar
        return jnp.asarray(value, dtype.np)
    if value.dtype == dtype.np:
        return value
    return bool_to(value, dtype.np) if value.dtype == bool else value.astype(dtype.np)


def _cast_out(out, dtype, promote):
    if isinstance(out, (list, tuple)):
        return type(out)(_cast_out(o, dtype, promote) for o in out)
    if promote is Promote.ALWAYS_BOOL and dtype is not dt.bool:
        pass
    if out.dtype != dtype.np and (out.dtype.kind in "fciub"):
        if promote is Promote.ALWAYS_BOOL and out.dtype != bool and dtype is dt.bool:
            return out
        if dtype in dt.FLOAT8:
            return to_float8(out, dtype.np)
        return out.astype(dtype.np)
    return out


def _flat_kinds(kinds):
    for k in kinds:
        if isinstance(k, tuple) and k[0] == "L":
            yield from _flat_kinds(k[1])
        elif k is not None:
            yield k


def _promote_rule(rule, statics, kinds):
    """An op's promotion callable: `rule(statics)` (`div`'s rounding_mode), or
    `rule(statics, kinds)` where the operands pick it. It gives a `Promote` kind, or a pair
    (kind, the operand kinds the promotion reads instead): None leaves an operand out, a type
    counts it as a number; every promoted operand is still cast to the dtype found (clamp's
    Scalar overload keeps a floating input's type, and reads a 0-d tensor bound as a number)."""
    takes_kinds = _RULE_ARITY.get(rule)
    if takes_kinds is None:
        takes_kinds = _RULE_ARITY[rule] = len(inspect.signature(rule).parameters) > 1
    kind = rule(statics, kinds) if takes_kinds else rule(statics)
    return kind if type(kind) is tuple else (kind, None)


_RULE_ARITY = {}


def _plan_dtypes(definition, statics, kinds):
    kind = definition.promote
    if not isinstance(kind, Promote):
        kind, read = _promote_rule(kind, statics, kinds)
        kinds = kinds if read is None else read
    if kind is Promote.NONE:
        return None, None
    tiers = ([], [], [])
    for pname, k in zip(definition.tensors, kinds):
        if pname not in definition.promoted:
            continue
        for leaf in _flat_kinds([k]):
            if isinstance(leaf, type):
                tiers[2].append(dt.uint64 if leaf is UInt64Int else dt.scalar_dtype(leaf(0)))
            else:
                tiers[1 if leaf[1] else 0].append(leaf[0])
    common = dt.result_dtype(*tiers)
    if common is None:
        return None, None
    requested = statics.get("dtype")
    if requested is not None and isinstance(requested, dt.dtype):
        if kind is Promote.COMPLEX_TO_FLOAT and requested.is_complex:   # (a norm: real)
            return requested, requested.to_real()
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


def _negative_zeros(sargs):
    """Where the statics hold -0.0: equal to 0.0 as a key, it gives other signed zeros
    (`hardtanh(x, -0.0)`, `add(x, y, alpha=-0.0)`)."""
    return tuple([i for i, v in enumerate(sargs)
                  if type(v) is float and v == 0.0 and math.copysign(1.0, v) < 0])


def _get_plan(definition, sargs, kinds, out_dtype=None):
    # The default dtype decides int->float results and Python floats' dtype; the statics' types
    # tell `True` from `1` (equal as dict keys, different to some ops).
    types = tuple(map(type, sargs))
    key = (sargs, kinds, out_dtype, _DEFAULT_FLOAT[0], types,
           _negative_zeros(sargs) if float in types else None)
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
