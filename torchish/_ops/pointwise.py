"""Pointwise ops: arithmetic, comparison, logical, bitwise, math and activations."""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .registry import Promote, op

P = Promote


def _is_int(x):
    return not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating))


# ---- unary math: one table, one declaration each ------------------------------------------
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
    "digamma": (jsp.digamma, P.INT_TO_FLOAT, "inputs"),
    "reciprocal": (lambda x: 1 / x, P.INT_TO_FLOAT, "result"),
    "sinc": (jnp.sinc, P.INT_TO_FLOAT, "inputs"),
    "deg2rad": (jnp.deg2rad, P.INT_TO_FLOAT, ()),
    "rad2deg": (jnp.rad2deg, P.INT_TO_FLOAT, ()),
    "i0": (jsp.i0, P.INT_TO_FLOAT, "inputs"),
    "neg": (jnp.negative, P.DEFAULT, ()),
    "sign": (jnp.sign, P.DEFAULT, ()),
    "sgn": (jnp.sign, P.DEFAULT, ()),
    "abs": (jnp.abs, P.COMPLEX_TO_FLOAT, "inputs"),
    "square": (jnp.square, P.DEFAULT, "inputs"),
    "floor": (lambda x: x if _is_int(x) else jnp.floor(x), P.DEFAULT, ()),
    "ceil": (lambda x: x if _is_int(x) else jnp.ceil(x), P.DEFAULT, ()),
    "trunc": (lambda x: x if _is_int(x) else jnp.trunc(x), P.DEFAULT, ()),
    "frac": (lambda x: x - jnp.trunc(x), P.DEFAULT, ()),
    "positive": (lambda x: x, P.NONE, ()),
    "conj": (jnp.conj, P.NONE, ()),
    "angle": (jnp.angle, P.INT_TO_FLOAT, "inputs"),
    "relu": (jax.nn.relu, P.DEFAULT, "result"),
}
_GRAD_NAMES = {"square": "PowBackward0", "sgn": "SgnBackward0", "positive": None,
               "fix": "TruncBackward0"}
_ALIASES = {"neg": ("negative",), "abs": ("absolute",), "asin": ("arcsin",),
            "acos": ("arccos",), "atan": ("arctan",), "asinh": ("arcsinh",),
            "acosh": ("arccosh",), "atanh": ("arctanh",), "trunc": ("fix",)}
_NN_UNARY = {"relu", "sigmoid", "tanh"}


def _declare_unary(name, fn, kind, saves):
    def body(input):
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


@op(promote=P.DEFAULT, grad_fn="RoundBackward0", inplace=True, saves=())
def round(input, *, decimals=0):
    if _is_int(input):
        return input
    if decimals == 0:
        return jnp.round(input)
    return jnp.round(input, decimals)


# ---- binary arithmetic -------------------------------------------------------------------

def _scaled(other, alpha):
    return other if alpha == 1 else other * alpha


@op(grad_fn="AddBackward0", inplace=True, saves=(), dunders=("__add__", "__radd__", "__iadd__"))
def add(input, other, *, alpha=1):
    return input + _scaled(other, alpha)


@op(grad_fn="SubBackward0", inplace=True, saves=(), dunders=("__sub__", "__isub__"),
    aliases=("subtract",))
def sub(input, other, *, alpha=1):
    return input - _scaled(other, alpha)


@op(grad_fn="RsubBackward1", saves=(), dunders=("__rsub__",))
def rsub(input, other, *, alpha=1):
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
    return jnp.floor_divide(input, other)


@op(grad_fn="RemainderBackward0", inplace=True, dunders=("__mod__", "__rmod__", "__imod__"))
def remainder(input, other):
    return jnp.remainder(input, other)


@op(grad_fn="FmodBackward0", inplace=True)
def fmod(input, other):
    return jnp.fmod(input, other)


def _pow_name(kinds, statics):
    base, exp = kinds
    if isinstance(base, type):
        return "PowBackward2"
    return "PowBackward0" if isinstance(exp, type) else "PowBackward1"


@op(grad_fn=_pow_name, inplace=True, dunders=("__pow__", "__ipow__"))
def pow(input, exponent):
    return jnp.power(input, exponent)


@op(grad_fn="PowBackward2", method=False, function=False, dunders=("__rpow__",))
def _rpow(input, other):
    return jnp.power(other, input)


@op(promote=P.INT_TO_FLOAT, grad_fn="Atan2Backward0", inplace=True, aliases=("arctan2",))
def atan2(input, other):
    return jnp.arctan2(input, other)


@op(grad_fn="MaximumBackward0")
def maximum(input, other):
    return jnp.maximum(input, other)


@op(grad_fn="MinimumBackward0")
def minimum(input, other):
    return jnp.minimum(input, other)


@op(grad_fn="FmaxBackward0")
def fmax(input, other):
    return jnp.fmax(input, other)


@op(grad_fn="FminBackward0")
def fmin(input, other):
    return jnp.fmin(input, other)


@op(promote=P.INT_TO_FLOAT, grad_fn="HypotBackward0", inplace=True)
def hypot(input, other):
    return jnp.hypot(input, other)


@op(promote=P.INT_TO_FLOAT, grad_fn="CopysignBackward0", inplace=True)
def copysign(input, other):
    return jnp.copysign(input, other)


@op(promote=P.INT_TO_FLOAT, grad_fn="LogaddexpBackward0")
def logaddexp(input, other):
    return jnp.logaddexp(input, other)


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
    return input + value * tensor1 * tensor2


@op(grad_fn="AddcdivBackward0", inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 / tensor2)


# ---- comparison, logical, bitwise ---------------------------------------------------------
_COMPARE = {"eq": (jnp.equal, "__eq__"), "ne": (jnp.not_equal, "__ne__"),
            "lt": (jnp.less, "__lt__"), "le": (jnp.less_equal, "__le__"),
            "gt": (jnp.greater, "__gt__"), "ge": (jnp.greater_equal, "__ge__")}
_COMPARE_ALIASES = {"ne": ("not_equal",), "lt": ("less",), "le": ("less_equal",),
                    "gt": ("greater",), "ge": ("greater_equal",)}
for _name, (_fn, _dunder) in _COMPARE.items():
    op(_name, promote=P.ALWAYS_BOOL, differentiable=False, inplace=True, dunders=(_dunder,),
       aliases=_COMPARE_ALIASES.get(_name, ()))((lambda f: lambda input, other: f(input, other))(_fn))

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
for _name, (_fn, _dunders) in _BITWISE.items():
    op(_name, differentiable=False, inplace=True, dunders=_dunders)(
        (lambda f: lambda input, other: f(input, other))(_fn))


@op(differentiable=False, inplace=True, dunders=("__invert__",))
def bitwise_not(input):
    return jnp.logical_not(input) if input.dtype == jnp.bool_ else jnp.bitwise_not(input)


# ---- clamp, where, masked_fill, nan_to_num --------------------------------------------------

def _clamp_name(kinds, statics):
    return "ClampBackward0" if any(isinstance(k, tuple) for k in kinds[1:]) else "ClampBackward1"


@op(grad_fn=_clamp_name, inplace=True, tensors=("input", "min", "max"), aliases=("clip",))
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = input
    # PyTorch's gradient passes where min <= x <= max (inclusive), unlike jnp.clip's ties
    if min is not None:
        out = jnp.where(out < min, min, out)
    if max is not None:
        out = jnp.where(out > max, max, out)
    return out


@op(grad_fn="ClampMinBackward0", inplace=True)
def clamp_min(input, min):
    return jnp.where(input < min, min, input)


@op(grad_fn="ClampMaxBackward0", inplace=True)
def clamp_max(input, max):
    return jnp.where(input > max, max, input)


@op(grad_fn="WhereBackward0", method="input", promoted=("input", "other"), saves=("condition",))
def where(condition, input, other):
    return jnp.where(condition, input, other)


@op(promote=P.NONE, grad_fn="MaskedFillBackward0", inplace=True, saves=("mask",))
def masked_fill(input, mask, value):
    return jnp.where(mask, jnp.asarray(value).astype(input.dtype), input)


@op(promote=P.NONE, grad_fn="NanToNumBackward0", inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


# ---- activations (also torch.nn.functional) -----------------------------------------------

@op(grad_fn="HardtanhBackward0", inplace=True, nn=True)
def relu6(input):
    return jnp.clip(input, 0, 6)


@op(grad_fn="HardtanhBackward0", inplace=True, nn=True)
def hardtanh(input, min_val=-1.0, max_val=1.0):
    return jnp.where(input < min_val, min_val, jnp.where(input > max_val, max_val, input))


@op(grad_fn="LeakyReluBackward0", inplace=True, nn=True)
def leaky_relu(input, negative_slope=0.01):
    return jnp.where(input > 0, input, input * negative_slope)


@op(grad_fn="EluBackward0", inplace=True, nn=True)
def elu(input, alpha=1.0):
    return jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0)))


@op(grad_fn="EluBackward0", inplace=True, nn=True)
def selu(input):
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0)))


@op(grad_fn="EluBackward0", inplace=True, nn=True)
def celu(input, alpha=1.0):
    return jnp.where(input > 0, input, alpha * jnp.expm1(jnp.minimum(input, 0) / alpha))


@op(grad_fn="GeluBackward0", nn=True, function=False, method=False)
def gelu(input, approximate="none"):
    return jax.nn.gelu(input, approximate=approximate == "tanh")


@op(grad_fn="SiluBackward0", nn=True, function=False, method=False)
def silu(input):
    return input * jax.nn.sigmoid(input)


@op(grad_fn="MishBackward0", nn=True, function=False, method=False)
def mish(input):
    return input * jnp.tanh(jax.nn.softplus(input))


@op(grad_fn="SoftplusBackward0", nn=True, function=False, method=False)
def softplus(input, beta=1.0, threshold=20.0):
    scaled = input * beta
    return jnp.where(scaled > threshold, input, jnp.log1p(jnp.exp(scaled)) / beta)


@op(grad_fn="DivBackward0", nn=True, function=False, method=False)
def softsign(input):
    return input / (1 + jnp.abs(input))


@op(grad_fn="HardswishBackward0", nn=True, function=False, method=False)
def hardswish(input):
    return input * jnp.clip(input + 3, 0, 6) / 6


@op(grad_fn="HardsigmoidBackward0", nn=True, function=False, method=False)
def hardsigmoid(input):
    return jnp.clip(input + 3, 0, 6) / 6


@op(grad_fn="LogSigmoidBackward0", nn=True, function=False, method=False)
def logsigmoid(input):
    return jax.nn.log_sigmoid(input)


@op(grad_fn="SubBackward0", nn=True, function=False, method=False)
def tanhshrink(input):
    return input - jnp.tanh(input)


@op(grad_fn="SoftshrinkBackward0", nn=True, function=False, method=False)
def softshrink(input, lambd=0.5):
    return jnp.where(input > lambd, input - lambd, jnp.where(input < -lambd, input + lambd, 0))


@op(grad_fn="HardshrinkBackward0", nn=True, function=False, method=False)
def hardshrink(input, lambd=0.5):
    return jnp.where(jnp.abs(input) > lambd, input, 0)


@op(grad_fn="ThresholdBackward0", nn=True, inplace=True)
def threshold(input, threshold, value):
    return jnp.where(input > threshold, input, value)


@op(promote=P.INT_TO_FLOAT, grad_fn="LogitBackward0", inplace=True)
def logit(input, eps=None):
    x = input if eps is None else jnp.clip(input, eps, 1 - eps)
    return jnp.log(x / (1 - x))


@op(promote=P.INT_TO_FLOAT, grad_fn="PolygammaBackward0", method=False)
def polygamma(n, input):
    return jsp.polygamma(n, input)


del _name, _fn, _kind, _saves, _dunder, _dunders
math = math
