"""Pointwise ops: arithmetic, comparison, logical, bitwise, math and activations."""
import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .registry import Promote, op
from .return_types import RETURN_TYPES

P = Promote


def _is_int(x):
    return not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating))


def _is_bool(x):
    return x.dtype == jnp.bool_


def legacy_name(x):
    """PyTorch's scalar type name of an array ("Float", "Long") for error messages."""
    from .._dtype import from_np
    return from_np(x.dtype)._legacy


def not_implemented(kernel, x):
    """PyTorch's error for a kernel without an implementation for x's dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{legacy_name(x)}\'')


def _reject(kernel, x, kinds):
    """Raise PyTorch's NotImplementedError when x's dtype kind (b, i/u, c) is in `kinds`."""
    k = x.dtype.kind
    if ("b" in kinds and k == "b") or ("i" in kinds and k in "iu") or (
            "c" in kinds and k == "c") or ("f" in kinds and k == "f"):
        raise not_implemented(kernel, x)


# ---- unary math: one table, one declaration each ------------------------------------------

def _abs(x):
    # x * sign(x) has PyTorch's gradient sgn(x) (0 at 0); jnp.abs' is 1 at 0
    return jnp.abs(x) if jnp.iscomplexobj(x) else x * jnp.sign(x)


def _i0(x):
    # i0 is even: exp(x * sign(x)) avoids abs, whose JAX derivative at 0 is 1 (i0'(0) = 0)
    return jnp.exp(x * jnp.sign(x)) * jsp.i0e(x)


@jax.custom_jvp
def _trigamma(x):
    """PyTorch's `calc_trigamma` (JAX's zeta-based polygamma(1, x) is wrong for x < 0)."""
    reflect = x < 0.5
    sin_pi_x = jnp.sin(math.pi * x)
    result = jnp.where(reflect, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
    x = jnp.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(reflect, -result, result)


_trigamma.defjvp(lambda primals, tangents: (_trigamma(primals[0]),
                                            _polygamma(2, primals[0]) * tangents[0]))


@jax.custom_jvp
def _digamma(x):
    # PyTorch: digamma(+-0) = -+inf, negative integers give nan
    return jnp.where(x == 0, jnp.copysign(jnp.inf, -x), jsp.digamma(x))


# digamma' is trigamma: JAX's own rule uses the zeta form, wrong for x < 0
_digamma.defjvp(lambda primals, tangents: (_digamma(primals[0]),
                                           _trigamma(primals[0]) * tangents[0]))


def _sign(x):
    return x if _is_bool(x) else jnp.sign(x)


def _neg(x):
    if _is_bool(x):
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return jnp.negative(x)


def _positive(x):
    if _is_bool(x):
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return x


def _relu(x):
    if _is_bool(x):
        raise RuntimeError("Boolean inputs not supported for relu")
    return jax.nn.relu(x)


def _rounding(fn):
    return lambda x: x if _is_int(x) else fn(x)


# name: (jax function, promotion kind, what PyTorch saves for backward)
_UNARY = {
    "exp": (jnp.exp, P.INT_TO_FLOAT, "result"),
    "exp2": (jnp.exp2, P.INT_TO_FLOAT, "result"),
    "expm1": (jnp.expm1, P.INT_TO_FLOAT, "result"),
    "log": (jnp.log, P.INT_TO_FLOAT, "inputs"),
    "log2": (jnp.log2, P.INT_TO_FLOAT, "inputs"),
    "log10": (jnp.log10, P.INT_TO_FLOAT, "inputs"),
    "log1p": (jnp.log1p, P.INT_TO_FLOAT, "inputs"),
    "sqrt": (jnp.sqrt, P.INT_TO_FLOAT, "result"),
    "rsqrt": (jax.lax.rsqrt, P.INT_TO_FLOAT, "result"),
    "sin": (jnp.sin, P.INT_TO_FLOAT, "inputs"),
    "cos": (jnp.cos, P.INT_TO_FLOAT, "inputs"),
    "tan": (jnp.tan, P.INT_TO_FLOAT, "result"),
    "asin": (jnp.arcsin, P.INT_TO_FLOAT, "inputs"),
    "acos": (jnp.arccos, P.INT_TO_FLOAT, "inputs"),
    "atan": (jnp.arctan, P.INT_TO_FLOAT, "inputs"),
    "sinh": (jnp.sinh, P.INT_TO_FLOAT, "inputs"),
    "cosh": (jnp.cosh, P.INT_TO_FLOAT, "inputs"),
    "tanh": (jnp.tanh, P.INT_TO_FLOAT, "result"),
    "asinh": (jnp.arcsinh, P.INT_TO_FLOAT, "inputs"),
    "acosh": (jnp.arccosh, P.INT_TO_FLOAT, "inputs"),
    "atanh": (jnp.arctanh, P.INT_TO_FLOAT, "inputs"),
    "sigmoid": (jax.nn.sigmoid, P.INT_TO_FLOAT, "result"),
    "erf": (jsp.erf, P.INT_TO_FLOAT, "inputs"),
    "erfc": (jsp.erfc, P.INT_TO_FLOAT, "inputs"),
    "erfinv": (jsp.erfinv, P.INT_TO_FLOAT, "inputs"),
    "lgamma": (jsp.gammaln, P.INT_TO_FLOAT, "inputs"),
    "digamma": (_digamma, P.INT_TO_FLOAT, "inputs"),
    "reciprocal": (lambda x: 1 / x, P.INT_TO_FLOAT, "result"),
    "sinc": (jnp.sinc, P.INT_TO_FLOAT, "inputs"),
    "deg2rad": (jnp.deg2rad, P.INT_TO_FLOAT, ()),
    "rad2deg": (jnp.rad2deg, P.INT_TO_FLOAT, ()),
    "i0": (_i0, P.INT_TO_FLOAT, "inputs"),
    "neg": (_neg, P.DEFAULT, ()),
    "sign": (_sign, P.DEFAULT, ()),
    "sgn": (_sign, P.DEFAULT, ()),
    "abs": (_abs, P.COMPLEX_TO_FLOAT, "inputs"),
    "floor": (_rounding(jnp.floor), P.DEFAULT, ()),
    "ceil": (_rounding(jnp.ceil), P.DEFAULT, ()),
    "trunc": (_rounding(jnp.trunc), P.DEFAULT, ()),
    "frac": (lambda x: x - jnp.trunc(x), P.DEFAULT, ()),
    "positive": (_positive, P.NONE, ()),
    "conj": (jnp.conj, P.NONE, ()),
    "angle": (jnp.angle, P.INT_TO_FLOAT, "inputs"),
    "relu": (_relu, P.DEFAULT, "result"),
}
# CPU kernels PyTorch lacks for some dtypes: name -> (kernel name, rejected kinds)
_KERNELS = {"abs": ("abs_cpu", "b"), "floor": ("floor_vml_cpu", "b"),
            "ceil": ("ceil_vml_cpu", "b"), "trunc": ("trunc_vml_cpu", "b"),
            "frac": ("frac_cpu", "bi")}
_GRAD_NAMES = {"sgn": "SgnBackward0", "positive": None, "fix": "TruncBackward0"}
_ALIASES = {"neg": ("negative",), "abs": ("absolute",), "asin": ("arcsin",),
            "acos": ("arccos",), "atan": ("arctan",), "asinh": ("arcsinh",),
            "acosh": ("arccosh",), "atanh": ("arctanh",), "trunc": ("fix",)}
_NN_UNARY = {"relu", "sigmoid", "tanh"}


def _declare_unary(name, fn, kind, saves):
    kernel = _KERNELS.get(name)

    def body(input):
        if kernel is not None:
            _reject(kernel[0], input, kernel[1])
        return fn(input)
    body.__name__ = name
    body.__doc__ = f"torch.{name}: elementwise {name}."
    op(name, promote=kind, grad_fn=_GRAD_NAMES.get(name, name.capitalize() + "Backward0"),
       saves=saves, inplace=name not in ("positive",), nn=name in _NN_UNARY,
       aliases=_ALIASES.get(name, ()),
       dunders={"neg": ("__neg__",), "abs": ("__abs__",), "positive": ("__pos__",)}.get(
           name, ()))(body)


for _name, (_fn, _kind, _saves) in _UNARY.items():
    _declare_unary(_name, _fn, _kind, _saves)

_PREDICATES = {"isnan": jnp.isnan, "isinf": jnp.isinf, "isfinite": jnp.isfinite,
               "isposinf": jnp.isposinf, "isneginf": jnp.isneginf, "signbit": jnp.signbit,
               "isreal": jnp.isreal}
for _name, _fn in _PREDICATES.items():
    op(_name, promote=P.NONE, differentiable=False, inplace=False)(
        (lambda f: lambda input: f(input))(_fn))


@op(grad_fn="PowBackward0", inplace=True, tensors=("input", "_exponent"),
    promoted=("input", "_exponent"))
def square(input, _exponent=2):
    """torch.square: `pow(input, 2)`, with pow's promotion (bool -> int64)."""
    return input * input


@op(promote=P.DEFAULT, grad_fn="RoundBackward0", inplace=True, saves=())
def round(input, *, decimals=0):
    _reject("round_vml_cpu", input, "b")
    if _is_int(input):
        return input
    if decimals == 0:
        return jnp.round(input)
    return jnp.round(input, decimals)


# ---- binary arithmetic -------------------------------------------------------------------

def _scaled(other, alpha):
    if _is_int(other) and isinstance(alpha, float) and not _is_bool(other):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return other if alpha == 1 else other * alpha


def _check_bool_sub(x):
    if _is_bool(x):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")


@op(grad_fn="AddBackward0", inplace=True, saves=(), dunders=("__add__", "__radd__", "__iadd__"))
def add(input, other, *, alpha=1):
    return input + _scaled(other, alpha)


@op(grad_fn="SubBackward0", inplace=True, saves=(), dunders=("__sub__", "__isub__"),
    aliases=("subtract",))
def sub(input, other, *, alpha=1):
    _check_bool_sub(input)
    return input - _scaled(other, alpha)


@op(grad_fn="RsubBackward1", saves=(), dunders=("__rsub__",))
def rsub(input, other, *, alpha=1):
    _check_bool_sub(input)
    return other - _scaled(input, alpha)


@op(grad_fn="MulBackward0", inplace=True, dunders=("__mul__", "__rmul__", "__imul__"),
    aliases=("multiply",))
def mul(input, other):
    return input * other


def _div_kind(statics):
    return P.INT_TO_FLOAT if statics.get("rounding_mode") is None else P.DEFAULT


def _div(input, other, rounding_mode):
    if rounding_mode is None:
        return input / other
    if rounding_mode == "trunc":
        return jnp.trunc(input / other) if not _is_int(input) else \
            jnp.sign(input) * jnp.sign(other) * (jnp.abs(input) // jnp.abs(other))
    if rounding_mode == "floor":
        return jnp.floor_divide(input, other)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


@op(promote=_div_kind, grad_fn="DivBackward0", inplace=True,
    dunders=("__truediv__", "__itruediv__"), aliases=("divide", "true_divide"))
def div(input, other, *, rounding_mode=None):
    return _div(input, other, rounding_mode)


@op(promote=P.INT_TO_FLOAT, grad_fn="MulBackward0", method=False, function=False,
    dunders=("__rtruediv__",))
def _rdiv(input, other):
    # `2 / x` is computed by PyTorch as `x.reciprocal() * 2`
    return other / input


@op(grad_fn="FloorDivideBackward0", inplace=True, differentiable=False,
    dunders=("__floordiv__", "__rfloordiv__", "__ifloordiv__"))
def floor_divide(input, other):
    _reject("div_floor_cpu", input, "bc")
    return jnp.floor_divide(input, other)


@op(grad_fn="RemainderBackward0", inplace=True, dunders=("__mod__", "__rmod__", "__imod__"))
def remainder(input, other):
    _reject("remainder_cpu", input, "bc")
    return jnp.remainder(input, other)


@op(grad_fn="FmodBackward0", inplace=True)
def fmod(input, other):
    _reject("fmod_cpu", input, "bc")
    return jnp.fmod(input, other)


def _pow_name(kinds, statics):
    base, exp = kinds
    if isinstance(base, type):
        return "PowBackward2"
    return "PowBackward0" if isinstance(exp, type) else "PowBackward1"


@op(grad_fn=_pow_name, inplace=True, dunders=("__pow__", "__ipow__"))
def pow(input, exponent):
    if _is_bool(input):
        if jnp.ndim(exponent):
            raise not_implemented("pow", input)
        return input | ~exponent  # x ** True is x, x ** False is True
    return jnp.power(input, exponent)


@op(grad_fn="PowBackward2", method=False, function=False, dunders=("__rpow__",))
def _rpow(input, other):
    return jnp.power(other, input)


@op(promote=P.INT_TO_FLOAT, grad_fn="Atan2Backward0", inplace=True, aliases=("arctan2",))
def atan2(input, other):
    _reject("atan2_cpu", input, "c")
    return jnp.arctan2(input, other)


def _no_complex(name, x):
    if jnp.iscomplexobj(x):
        raise RuntimeError(f"{name} not implemented for complex tensors.")


@op(grad_fn="MaximumBackward0")
def maximum(input, other):
    _no_complex("maximum", input)
    return jnp.maximum(input, other)


@op(grad_fn="MinimumBackward0")
def minimum(input, other):
    _no_complex("minimum", input)
    return jnp.minimum(input, other)


@op(grad_fn="FmaxBackward0")
def fmax(input, other):
    return jnp.fmax(input, other)


@op(grad_fn="FminBackward0")
def fmin(input, other):
    return jnp.fmin(input, other)


@op(grad_fn="HypotBackward0", inplace=True)
def hypot(input, other):
    _reject("hypot_cpu", input, "bic")
    return jnp.hypot(input, other)


@op(promote=P.INT_TO_FLOAT, grad_fn="CopysignBackward0", inplace=True)
def copysign(input, other):
    return jnp.copysign(input, other)


@op(grad_fn="LogaddexpBackward0")
def logaddexp(input, other):
    _reject("logaddexp_cpu", input, "bi")
    return jnp.logaddexp(input, other)


@op(grad_fn="Logaddexp2Backward0")
def logaddexp2(input, other):
    _reject("logaddexp2_cpu", input, "bi")
    return jnp.logaddexp2(input, other)


@op(grad_fn="HeavisideBackward0", differentiable=False, inplace=True)
def heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    _no_complex("heaviside is not yet implemented for", input)
    return jnp.where(input == 0, values, (input > 0).astype(input.dtype))


@op(promote=P.INT_TO_FLOAT, grad_fn="MulBackward0", method=True)
def ldexp(input, other):
    return input * jnp.exp2(other)


@op(promote=P.NONE, grad_fn="FrexpBackward0", returns=RETURN_TYPES["frexp"])
def frexp(input):
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = jnp.frexp(input)
    return mantissa, exponent.astype(jnp.int32)


@op(promote=P.ALWAYS_BOOL, differentiable=False, promoted=())
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    if input.dtype != other.dtype:
        from .._dtype import from_np
        raise RuntimeError(f"{from_np(input.dtype)._legacy} did not match "
                           f"{from_np(other.dtype)._legacy}")
    if _is_bool(input):
        return input == other
    close = input == other
    if jnp.issubdtype(input.dtype, jnp.inexact):
        finite = jnp.isfinite(input) & jnp.isfinite(other)
        diff = jnp.abs(input - other)
        close = close | (finite & (diff <= atol + rtol * jnp.abs(other)))
        if equal_nan:
            close = close | (jnp.isnan(input) & jnp.isnan(other))
    else:  # integers: PyTorch's `rtol * other` is a float32 tensor
        allowed = atol + jnp.abs(rtol * other.astype(jnp.float32))
        close = close | (jnp.abs(input - other).astype(jnp.float32) <= allowed)
    return close


@op(promote=P.INT_TO_FLOAT, grad_fn="XlogyBackward0", inplace=True)
def xlogy(input, other):
    return jsp.xlogy(input, other)


@op(grad_fn="LerpBackward0", inplace=True)
def lerp(input, end, weight):
    # PyTorch switches formula at |weight| >= 0.5 for accuracy near the end point
    return jnp.where(jnp.abs(weight) < 0.5, input + weight * (end - input),
                     end - (end - input) * (1 - weight))


@op(grad_fn="AddcmulBackward0", inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    _reject("addcmul_cpu_out", input, "b")
    return input + value * tensor1 * tensor2


@op(grad_fn="AddcdivBackward0", inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    if _is_int(input):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return input + value * (tensor1 / tensor2)


# ---- comparison, logical, bitwise ---------------------------------------------------------
_COMPARE = {"eq": (jnp.equal, "__eq__"), "ne": (jnp.not_equal, "__ne__"),
            "lt": (jnp.less, "__lt__"), "le": (jnp.less_equal, "__le__"),
            "gt": (jnp.greater, "__gt__"), "ge": (jnp.greater_equal, "__ge__")}
_COMPARE_ALIASES = {"ne": ("not_equal",), "lt": ("less",), "le": ("less_equal",),
                    "gt": ("greater",), "ge": ("greater_equal",)}


def _compare(name, fn):
    kernel = name + "_cpu"
    ordered = name not in ("eq", "ne")

    def body(input, other):
        if ordered:
            _reject(kernel, input, "c")
        return fn(input, other)
    return body


for _name, (_fn, _dunder) in _COMPARE.items():
    op(_name, promote=P.ALWAYS_BOOL, differentiable=False, inplace=True, dunders=(_dunder,),
       aliases=_COMPARE_ALIASES.get(_name, ()))(_compare(_name, _fn))

for _name, _fn in {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or,
                   "logical_xor": jnp.logical_xor}.items():
    op(_name, promote=P.ALWAYS_BOOL, differentiable=False, inplace=True)(
        (lambda f: lambda input, other: f(input, other))(_fn))


@op(promote=P.ALWAYS_BOOL, differentiable=False, inplace=True)
def logical_not(input):
    return jnp.logical_not(input)


_BITWISE = {"bitwise_and": (jnp.bitwise_and, ("__and__", "__rand__", "__iand__")),
            "bitwise_or": (jnp.bitwise_or, ("__or__", "__ror__", "__ior__")),
            "bitwise_xor": (jnp.bitwise_xor, ("__xor__", "__rxor__", "__ixor__")),
            "bitwise_left_shift": (jnp.left_shift, ("__lshift__", "__ilshift__")),
            "bitwise_right_shift": (jnp.right_shift, ("__rshift__", "__irshift__"))}
_BITWISE_KERNELS = {"bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}


def _bitwise(name, fn):
    kernel = _BITWISE_KERNELS.get(name, name + "_cpu")

    def body(input, other):
        _reject(kernel, input, "fc")
        return fn(input, other)
    return body


for _name, (_fn, _dunders) in _BITWISE.items():
    op(_name, differentiable=False, inplace=True, dunders=_dunders)(_bitwise(_name, _fn))


@op(differentiable=False, inplace=True, dunders=("__invert__",))
def bitwise_not(input):
    _reject("bitwise_not_cpu", input, "fc")
    return jnp.logical_not(input) if input.dtype == jnp.bool_ else jnp.bitwise_not(input)


# ---- clamp, where, masked_fill, nan_to_num --------------------------------------------------

def _clamp_name(kinds, statics):
    return "ClampBackward0" if any(isinstance(k, tuple) for k in kinds[1:]) else "ClampBackward1"


@op(grad_fn=_clamp_name, inplace=True, tensors=("input", "min", "max"), aliases=("clip",))
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if jnp.iscomplexobj(input):
        raise NotImplementedError("clamp is not supported for complex types")
    out = input
    # PyTorch's gradient passes where min <= x <= max (inclusive), unlike jnp.clip's ties;
    # a NaN bound gives NaN
    if min is not None:
        out = jnp.where((out < min) | (min != min), min, out)
    if max is not None:
        out = jnp.where((out > max) | (max != max), max, out)
    return out


@op(grad_fn="ClampMinBackward0", inplace=True)
def clamp_min(input, min):
    return jnp.where((input < min) | (min != min), min, input)


@op(grad_fn="ClampMaxBackward0", inplace=True)
def clamp_max(input, max):
    return jnp.where((input > max) | (max != max), max, input)


@op(grad_fn="WhereBackward0", method="input", promoted=("input", "other"), saves=("condition",))
def where(condition, input, other):
    return jnp.where(condition, input, other)


CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def cpp_name(x):
    """The C++ type name PyTorch prints for an array's dtype ("float", "long int")."""
    from .._dtype import from_np
    return CPP_NAMES[from_np(x.dtype).name]


@op(promote=P.NONE, grad_fn="MaskedFillBackward0", inplace=True, saves=("mask",))
def masked_fill(input, mask, value):
    if not _is_bool(mask):
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_name(mask)}")
    if jnp.ndim(value):
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {jnp.ndim(value)} dimension(s).")
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(input):
        raise RuntimeError(f"value cannot be converted to type {cpp_name(input)} without "
                           "overflow")
    from .errors import broadcast_error
    msg = broadcast_error([mask.shape, input.shape])
    if msg:
        raise RuntimeError(msg)
    # the value is a Scalar in PyTorch: converted to the tensor's dtype (2.7 -> 2 for ints)
    return jnp.where(mask, jnp.asarray(value).astype(input.dtype), input)


@op(promote=P.NONE, grad_fn="NanToNumBackward0", inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# ---- activations (also torch.nn.functional) -----------------------------------------------

def _no_bool_clamp(x):
    if _is_bool(x):
        raise RuntimeError("Bool inputs not supported for hardtanh")


@op(grad_fn="HardtanhBackward0", inplace=True, nn=True)
def relu6(input):
    _no_bool_clamp(input)
    return jnp.clip(input, 0, 6)


@op(grad_fn="HardtanhBackward0", inplace=True, nn=True)
def hardtanh(input, min_val=-1.0, max_val=1.0):
    _no_bool_clamp(input)
    return jnp.where(input < min_val, min_val, jnp.where(input > max_val, max_val, input))


@op(grad_fn="LeakyReluBackward0", inplace=True, nn=True, inplace_grad_fn="LeakyReluBackward1")
def leaky_relu(input, negative_slope=0.01):
    _reject("leaky_relu_cpu", input, "bi")
    return jnp.where(input > 0, input, input * negative_slope)


@op(grad_fn="EluBackward0", inplace=True, nn=True, inplace_grad_fn="EluBackward1")
def elu(input, alpha=1.0):
    _reject("elu_cpu", input, "bi")
    return jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0)))


@op(grad_fn="EluBackward0", inplace=True, nn=True, inplace_grad_fn="EluBackward1")
def selu(input):
    _reject("elu_cpu", input, "bi")
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0)))


@op(grad_fn="CeluBackward0", inplace=True, nn=True, inplace_grad_fn="CeluBackward1")
def celu(input, alpha=1.0):
    _reject("elu_cpu", input, "bi")
    return jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0) / alpha))


@op(grad_fn="GeluBackward0", nn=True, function=False, method=False)
def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _reject("GeluKernelImpl", input, "bi")
    return jax.nn.gelu(input, approximate=approximate == "tanh")


@op(grad_fn="SiluBackward0", nn=True, function=False, method=False)
def silu(input):
    _reject("silu_cpu", input, "bi")
    return input * jax.nn.sigmoid(input)


@op(grad_fn="MishBackward0", nn=True, function=False, method=False)
def mish(input):
    _reject("mish_cpu", input, "bi")
    return input * jnp.tanh(jax.nn.softplus(input))


@op(grad_fn="SoftplusBackward0", nn=True, function=False, method=False)
def softplus(input, beta=1.0, threshold=20.0):
    _reject("softplus_cpu", input, "bi")
    scaled = input * beta
    return jnp.where(scaled > threshold, input, jnp.log1p(jnp.exp(scaled)) / beta)


@op(promote=P.INT_TO_FLOAT, grad_fn="DivBackward0", nn=True, function=False, method=False)
def softsign(input):
    _reject("abs_cpu", input, "b")
    return input / (1 + jnp.abs(input))


@op(grad_fn="HardswishBackward0", nn=True, function=False, method=False)
def hardswish(input):
    _reject("hardswish_cpu", input, "bi")
    return input * jnp.clip(input + 3, 0, 6) / 6


@op(grad_fn="HardsigmoidBackward0", nn=True, function=False, method=False)
def hardsigmoid(input):
    _reject("hardsigmoid_cpu", input, "bi")
    return jnp.clip(input + 3, 0, 6) / 6


@op(grad_fn="LogSigmoidBackward0", nn=True, function=False, method=False)
def logsigmoid(input):
    _reject("log_sigmoid_cpu", input, "bi")
    return jax.nn.log_sigmoid(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="SubBackward0", nn=True, function=False, method=False)
def tanhshrink(input):
    _check_bool_sub(input)
    return input - jnp.tanh(input)


@op(grad_fn="SoftshrinkBackward0", nn=True, function=False, method=False)
def softshrink(input, lambd=0.5):
    _reject("softshrink_check", input, "bi")
    if lambd < 0:
        big = float(jnp.finfo(input.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {big:g}] for input dtype "
                           f"{legacy_name(input)}, but found {lambd:g}")
    return jnp.where(input > lambd, input - lambd, jnp.where(input < -lambd, input + lambd, 0))


@op(grad_fn="HardshrinkBackward0", nn=True, function=False, method=False)
def hardshrink(input, lambd=0.5):
    _reject("hardshrink_cpu", input, "bi")
    return jnp.where(jnp.abs(input) > lambd, input, 0)


@op(grad_fn="ThresholdBackward0", nn=True, inplace=True, inplace_grad_fn="ThresholdBackward1")
def threshold(input, threshold, value):
    _reject("threshold_cpu", input, "b")
    return jnp.where(input > threshold, input, value)


@op(promote=P.INT_TO_FLOAT, grad_fn="LogitBackward0", inplace=True)
def logit(input, eps=None):
    x = input if eps is None else jnp.clip(input, eps, 1 - eps)
    return jnp.log(x / (1 - x))


@op(promote=P.INT_TO_FLOAT, grad_fn="PolygammaBackward0", method=False)
def polygamma(n, input):
    if n == 0:
        return _digamma(input)
    if n == 1:
        return _trigamma(input)
    return _polygamma(n, input)


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta(x, q):
    """PyTorch's (Cephes) Hurwitz zeta for integer x > 1: a direct sum until q + i > 9, then
    Euler-Maclaurin. Unlike jax.scipy.special.zeta it is right for negative non-integer q."""
    def cond(c):
        i, a, _, _ = c
        return jnp.any((i < 9) | (a <= 9.0))

    def step(c):
        i, a, b, total = c
        more = (i < 9) | (a <= 9.0)
        a2 = a + 1
        b2 = a2 ** -x
        return (i + 1, jnp.where(more, a2, a), jnp.where(more, b2, b),
                jnp.where(more, total + b2, total))
    zero = jnp.zeros(jnp.shape(q), jnp.int32)
    _, a, b, total = jax.lax.while_loop(cond, step, (zero, q, q ** -x, q ** -x))
    w = a
    total = total + b * w / (x - 1) - 0.5 * b
    fac, k = 1.0, 0.0
    for coef in _ZETA_A:
        fac = fac * (x + k)
        b = b / w
        total = total + fac * b / coef
        k += 1
        fac = fac * (x + k)
        b = b / w
        k += 1
    pole = (q <= 0) & (q == jnp.floor(q))
    return jnp.where(pole, jnp.inf, total)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _polygamma(n, x):
    return (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0)) * _zeta(n + 1.0, x)


_polygamma.defjvp(lambda n, primals, tangents: (_polygamma(n, primals[0]),
                                                _polygamma(n + 1, primals[0]) * tangents[0]))


del _name, _fn, _kind, _saves, _dunder, _dunders
math = math
