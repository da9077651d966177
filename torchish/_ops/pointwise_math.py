"""Pointwise math: the unary functions (one table, relu among them) and special functions with
PyTorch's algorithms where JAX's differ (trigamma, Hurwitz zeta). The other activations are in
activations.py."""
import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .. import _dtype as dt
from .pointwise import _is_bool, _is_int, _reject, _scalar_variant, _true_div
from .half_grad import pytorch_grad
from .registry import Promote, op

P = Promote


# ---- unary math: one table, one declaration each ------------------------------------------

@jax.custom_jvp
def _real_abs(x):
    return jnp.abs(x)


def _sgn_jvp(primals, tangents):
    # PyTorch's abs' is sgn(x) = (x > 0) - (x < 0): +0 at -0 and at nan (JAX's is 1 at 0;
    # x * sign(x) would give -0 at -0 and nan at nan)
    x, = primals
    sgn = (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)
    return jnp.abs(x), tangents[0] * sgn


_real_abs.defjvp(_sgn_jvp)


def _abs(x):
    return jnp.abs(x) if jnp.iscomplexobj(x) else _real_abs(x)


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


def _lgamma(x):
    # JAX's float32 gammaln is off by up to 1e-2 relative near its zeros (lgamma(1) = 4.8e-7,
    # not 0); evaluated in float64 and rounded it is within an ulp of PyTorch's lgammaf
    if x.dtype in (jnp.float32, jnp.float16, jnp.bfloat16):
        return jsp.gammaln(x.astype(jnp.float64)).astype(x.dtype)
    return jsp.gammaln(x)


@jax.custom_jvp
def _complex_sgn(z):
    return jnp.sign(z)


@_complex_sgn.defjvp
def _complex_sgn_jvp(primals, tangents):
    # JAX differentiates sign as a step function (zero); z / |z| has PyTorch's
    # sgn_backward, (g - sgn^2 conj(g)) / (2 |z|), and zero at z = 0
    (z,), (dz,) = primals, tangents
    s, r = _complex_sgn(z), jnp.abs(z)   # (differentiable again: a create_graph backward)
    d = (dz - s * s * jnp.conj(dz)) / (2 * jnp.where(r == 0, 1, r))
    return s, jnp.where(r == 0, 0, d)


def _sign(x):
    if _is_bool(x):
        return x
    if jnp.iscomplexobj(x):
        return _complex_sgn(x)
    if _is_int(x):
        return jnp.sign(x)
    # PyTorch's (0 < x) - (x < 0): 0 (not nan, not -0) for nan and -0
    return jnp.where(x > 0, 1, jnp.where(x < 0, -1, jnp.zeros_like(x)))


def _sign_real(x):
    if jnp.iscomplexobj(x):
        raise RuntimeError("Unlike NumPy, torch.sign is not intended to support complex "
                           "numbers. Please use torch.sgn instead.")
    return _sign(x)


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


@jax.custom_jvp
def _angle(x):
    # PyTorch: pi where x < 0, else 0 (and nan for nan), so angle(-0.0) is 0 (atan2 gives pi)
    if jnp.iscomplexobj(x):
        return jnp.angle(x)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, math.pi, jnp.zeros_like(x)))


@_angle.defjvp
def _angle_jvp(primals, tangents):
    # PyTorch: zero for real inputs and at z = 0 (atan2's derivative there is 0/0)
    (z,), (dz,) = primals, tangents
    if not jnp.iscomplexobj(z):
        return _angle(z), jnp.zeros_like(dz)
    zero = z == 0
    norm2 = jnp.where(zero, 1, jnp.real(z) ** 2 + jnp.imag(z) ** 2)
    d = (jnp.real(z) * jnp.imag(dz) - jnp.imag(z) * jnp.real(dz)) / norm2
    return _angle(z), jnp.where(zero, 0, d)


# PyTorch's clamp_min(x, 0): -0.0 and nan pass through; its gradient reads the result
_relu_kernel = pytorch_grad(lambda x: jnp.where(x < 0, 0, x),
                            lambda t, x, y, r: jnp.where(y <= 0, 0, t), name="relu")


_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"


def _relu(x):
    if _is_bool(x):
        raise RuntimeError("Boolean inputs not supported for relu")
    if jnp.iscomplexobj(x):
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    return _relu_kernel(x)


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
    "lgamma": (_lgamma, P.INT_TO_FLOAT, "inputs"),
    "digamma": (_digamma, P.INT_TO_FLOAT, "inputs"),
    "reciprocal": (lambda x: 1 / x, P.INT_TO_FLOAT, "result"),
    "sinc": (jnp.sinc, P.INT_TO_FLOAT, "inputs"),
    "deg2rad": (jnp.deg2rad, P.INT_TO_FLOAT, ()),
    "rad2deg": (jnp.rad2deg, P.INT_TO_FLOAT, ()),
    "i0": (_i0, P.INT_TO_FLOAT, "inputs"),
    "neg": (_neg, P.DEFAULT, ()),
    "sign": (_sign_real, P.DEFAULT, ()),
    "sgn": (_sign, P.DEFAULT, ()),
    "abs": (_abs, P.COMPLEX_TO_FLOAT, "inputs"),
    "floor": (_rounding(jnp.floor), P.DEFAULT, ()),
    "ceil": (_rounding(jnp.ceil), P.DEFAULT, ()),
    "trunc": (_rounding(jnp.trunc), P.DEFAULT, ()),
    "frac": (lambda x: x - jnp.trunc(x), P.DEFAULT, ()),
    "positive": (_positive, P.NONE, ()),
    "conj_physical": (jnp.conj, P.NONE, ()),
    "angle": (_angle, P.INT_TO_FLOAT_REAL, "inputs"),
    "relu": (_relu, P.DEFAULT, "result"),
}
# CPU kernels PyTorch lacks for some dtypes: name -> (kernel name, rejected kinds)
_KERNELS = {"abs": ("abs_cpu", "b"), "floor": ("floor_vml_cpu", "b"),
            "ceil": ("ceil_vml_cpu", "b"), "trunc": ("trunc_vml_cpu", "b"),
            "frac": ("frac_cpu", "bi")}
_GRAD_NAMES = {"sgn": "SgnBackward0", "positive": None, "fix": "TruncBackward0",
               "log1p": "Log1PBackward0", "deg2rad": "Deg2RadBackward0",
               "rad2deg": "Rad2DegBackward0", "conj_physical": "ConjPhysicalBackward0"}
_ALIASES = {"neg": ("negative",), "abs": ("absolute",), "asin": ("arcsin",),
            "acos": ("arccos",), "atan": ("arctan",), "asinh": ("arcsinh",),
            "acosh": ("arccosh",), "atanh": ("arctanh",), "trunc": ("fix",)}
_NN_UNARY = {"relu", "sigmoid", "tanh"}


# PyTorch returns the input itself (no node) when the op would not change it
_RETURNS_INPUT_IF = {"conj_physical": lambda t: not t.dtype.is_complex,
                     "positive": lambda t: t.dtype is not dt.bool}


# PyTorch's derivatives of these for a half-precision input, as maps t -> tangent in float32
# from the input `x` and the result `y` (both half values): each ATen op of PyTorch's formula
# computes in float32 and rounds to the half type (`r`, whose `half` is the type); its fused
# kernels (tanh_backward, bfloat16's sigmoid_backward) round once. (JAX's pullback of the
# float32 forward would round only the gradient, from an unrounded result.) A pullback runs a
# map's linear steps in reverse order: the map t -> r(t * a) * b computes r(g * b) * a, so
# each map is written with PyTorch's steps reversed.
_LN2, _LN10 = math.log(2.0), math.log(10.0)
_HALF_GRADS = {
    "tanh": lambda t, x, y, r: t * (1 - y * y),
    "sigmoid": lambda t, x, y, r: t * ((1 - y) * y) if r.half == jnp.bfloat16 else
    r(r(t * y) * r(1 - y)),                      # Half's kernel: r(r(g * r(1 - y)) * y)
    "exp": lambda t, x, y, r: t * y,             # grad * result
    "exp2": lambda t, x, y, r: r(t * _LN2) * y,  # grad * result * ln2
    "expm1": lambda t, x, y, r: t * r(y + 1),    # grad * (result + 1)
    "sqrt": lambda t, x, y, r: t / (2 * y),      # grad / (2 * result)
    # -0.5 * grad * result^3 (bfloat16's pow rounds its square)
    "rsqrt": lambda t, x, y, r: r(t * (r(r(y * y) * y) if r.half == jnp.bfloat16 else
                                       r(y * y * y))) * -0.5,
    "reciprocal": lambda t, x, y, r: -t * r(y * y),           # -grad * (result * result)
    "log2": lambda t, x, y, r: t / r(x * _LN2),  # grad / (self * ln2)
    "log10": lambda t, x, y, r: t / r(x * _LN10),
    "log1p": lambda t, x, y, r: t / r(x + 1),    # grad / (self + 1)
    "sin": lambda t, x, y, r: t * r(jnp.cos(x)),
    "cos": lambda t, x, y, r: t * -r(jnp.sin(x)),
    "tan": lambda t, x, y, r: t * r(1 + r(y * y)),            # grad * (1 + result^2)
    "asin": lambda t, x, y, r: t * _rsqrt(r(r(-x * x) + 1), r),   # grad * (1 - self^2).rsqrt()
    "acos": lambda t, x, y, r: t * -_rsqrt(r(r(-x * x) + 1), r),
    "atan": lambda t, x, y, r: t / r(r(x * x) + 1),           # grad / (self * self + 1)
    "sinh": lambda t, x, y, r: t * r(jnp.cosh(x)),
    "cosh": lambda t, x, y, r: t * r(jnp.sinh(x)),
    "asinh": lambda t, x, y, r: t * _rsqrt(r(r(x * x) + 1), r),
    "acosh": lambda t, x, y, r: t * _rsqrt(r(r(x * x) - 1), r),
    "atanh": lambda t, x, y, r: t / r(1 - r(x * x)),          # grad * 1 / (1 - self^2)
    # 2 / sqrt(pi) * exp(-self^2) * grad, and erfinv's 0.5 * sqrt(pi) * exp(result^2) * grad
    "erf": lambda t, x, y, r: t * r(_TWO_BY_SQRT_PI * r(jnp.exp(r(-(x * x))))),
    "erfc": lambda t, x, y, r: t * r(-_TWO_BY_SQRT_PI * r(jnp.exp(r(-(x * x))))),
    "erfinv": lambda t, x, y, r: t * r(_HALF_SQRT_PI * r(jnp.exp(r(y * y)))),
    "sinc": lambda t, x, y, r: _sinc_grad(t, x, r),
}
_TWO_BY_SQRT_PI, _HALF_SQRT_PI = 2 / math.sqrt(math.pi), 0.5 * math.sqrt(math.pi)
# ... and for every dtype: from the result, a saturated tanh's gradient is grad * 0 (-0.0 for a
# negative grad, as PyTorch's), where JAX's own rule gives +0.0
_ALL_DTYPES_GRADS = {"tanh", "sigmoid"}


def _sinc_grad(t, x, r):
    # grad * ((pi x cos(pi x) - sin(pi x)) / (x * x * pi)), 0 where that divisor is 0
    sp, s = r(x * math.pi), r(r(x * x) * math.pi)
    b = r(r(sp * r(jnp.cos(sp))) - r(jnp.sin(sp)))
    return jnp.where(s == 0, 0, t * r(b / jnp.where(s == 0, 1, s)))


def _rsqrt(v, r):
    # (PyTorch's vectorized half rsqrt differs from a rounded float32 one on a few elements)
    return r(jax.lax.rsqrt(v))


def _declare_unary(name, fn, kind, saves):
    kernel = _KERNELS.get(name)
    half_grad = _HALF_GRADS.get(name)
    if half_grad is not None:   # (then `fn` itself computes a half input in float32)
        fn = pytorch_grad(fn, half_grad, half_only=name not in _ALL_DTYPES_GRADS)

    def body(input):
        if kernel is not None:
            _reject(kernel[0], input, kernel[1])
        return fn(input)
    body.__name__ = name
    body.__doc__ = f"torch.{name}: elementwise {name}."
    op(name, promote=kind, grad_fn=_GRAD_NAMES.get(name, name.capitalize() + "Backward0"),
       saves=saves, inplace=name not in ("positive",), nn=name in _NN_UNARY,
       opmath=half_grad is None,
       aliases=_ALIASES.get(name, ()), identity_if=_RETURNS_INPUT_IF.get(name),
       dunders={"neg": ("__neg__",), "abs": ("__abs__",), "positive": ("__pos__",)}.get(
           name, ()))(body)


for _name, (_fn, _kind, _saves) in _UNARY.items():
    _declare_unary(_name, _fn, _kind, _saves)
from . import conj_views  # noqa: E402  (declares conj, a view op, with _conj, _neg_view)
del conj_views

def _isfinite(x):
    # (PyTorch's float8_e8m0fnu kernel has no NaN test: every element is finite)
    if x.dtype == jnp.float8_e8m0fnu:
        return jnp.ones(x.shape, bool)
    return jnp.isfinite(x)


def _isreal(x):
    # (a real dtype is real everywhere: JAX's test reads float8 types as not)
    return jnp.isreal(x) if jnp.iscomplexobj(x) else jnp.ones(x.shape, bool)


_PREDICATES = {"isnan": jnp.isnan, "isinf": jnp.isinf, "isfinite": _isfinite,
               "isposinf": jnp.isposinf, "isneginf": jnp.isneginf, "signbit": jnp.signbit,
               "isreal": _isreal}
for _name, _fn in _PREDICATES.items():
    op(_name, promote=P.NONE, differentiable=False, inplace=False)(
        (lambda f: lambda input: f(input))(_fn))


@op(grad_fn="PowBackward0", inplace=True, tensors=("input", "_exponent"),
    promoted=("input", "_exponent"), scalar_operands=("_exponent",))
def square(input, _exponent=2):
    """torch.square: `pow(input, 2)`, with pow's promotion (bool -> int64)."""
    return input * input


@op(promote=P.DEFAULT, inplace=True, saves=(), grad_fn=lambda kinds, statics:
    "RoundBackward0" if statics["decimals"] is None else "RoundBackward1")
def round(input, *, decimals=None):   # (None: PyTorch's overload without `decimals`)
    if decimals is not None:
        # the `decimals` overload has no integer/bool kernel (decimals=0 takes the plain
        # kernel's path, hence the other name); only the overload without it passes ints through
        _reject("round_cpu" if decimals else "round_vml_cpu", input, "bic")
    _reject("round_vml_cpu", input, "bc")
    if _is_int(input):
        return input
    if not decimals:
        return jnp.round(input)
    return _round_decimals(input, decimals)


def _round_decimals(x, decimals):
    """PyTorch's CPU `round(decimals=d)`: in the opmath type (float32 for half types),
    `nearbyint(x * 10**d) / 10**d`, or `nearbyint(x / 10**-d) * 10**-d` for d < 0. jnp.round
    multiplies by 10**d then divides, which XLA turns into a product by the reciprocal (an ulp
    off), and computes half types in themselves."""
    dtype = x.dtype
    if dtype in (jnp.float16, jnp.bfloat16):
        x = x.astype(jnp.float32)
    factor = jnp.asarray(10.0 ** abs(decimals), x.dtype)
    if decimals > 0:
        out = _true_div(jnp.round(x * factor), factor)
    else:
        out = jnp.round(_true_div(x, factor)) * factor
    return out.astype(dtype)


@jax.custom_jvp
def _logit(x):
    return jnp.log(x / (1 - x))


# PyTorch's derivative 1 / (x (1 - x)) is inf at 0 and 1, where JAX's chain rule gives nan
_logit.defjvp(lambda primals, tangents: (_logit(primals[0]),
                                         tangents[0] / (primals[0] * (1 - primals[0]))))


@op(promote=P.INT_TO_FLOAT, grad_fn="LogitBackward0", inplace=True)
def logit(input, eps=None):
    return _logit(input if eps is None else jnp.clip(input, eps, 1 - eps))


@op(promote=P.INT_TO_FLOAT, grad_fn="PolygammaBackward0", method="input",
    inplace_grad_fn="PolygammaBackward1")
def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    # (the kernel PyTorch dispatches to depends on n, so this is no `complex_refusals` entry)
    _reject({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), input, "c")
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


del _name, _fn, _kind, _saves


# ---- torch.special: the functions torchish had no op for (torchish/special.py) -------------

@jax.custom_jvp
def _entr(x):
    safe = jnp.where(x > 0, x, 1)
    return jnp.where(x > 0, -x * jnp.log(safe),
                     jnp.where(x == 0, 0, jnp.where(x < 0, -jnp.inf, x)))


# PyTorch's derivative -(1 + log x) everywhere: +inf at 0, nan below
_entr.defjvp(lambda primals, tangents: (_entr(primals[0]),
                                        -(1 + jnp.log(primals[0])) * tangents[0]))


@op("special_entr", promote=P.INT_TO_FLOAT, grad_fn="SpecialEntrBackward0", function=False,
    method=False)
def _special_entr(input):
    """torch.special.entr: -x * log(x); 0 at 0, -inf below 0."""
    return _entr(input)


@op("special_erfcx", promote=P.INT_TO_FLOAT, grad_fn="SpecialErfcxBackward0", function=False,
    method=False, saves=("input", "result"))
def _special_erfcx(input):
    """torch.special.erfcx: the scaled complementary error function exp(x**2) * erfc(x)."""
    return jsp.erfcx(input)


@op("special_i0e", promote=P.INT_TO_FLOAT, grad_fn="SpecialI0EBackward0", function=False,
    method=False, saves=("input", "result"))
def _special_i0e(input):
    """torch.special.i0e: exp(-|x|) * i0(x)."""
    return jsp.i0e(input)


@op("special_i1", promote=P.INT_TO_FLOAT, grad_fn="SpecialI1Backward0", function=False,
    method=False, saves=("input", "result"))
def _special_i1(input):
    """torch.special.i1: the modified Bessel function of the first kind, order 1."""
    return jsp.i1(input)


@op("special_i1e", promote=P.INT_TO_FLOAT, grad_fn="SpecialI1EBackward0", function=False,
    method=False, saves=("input", "result"))
def _special_i1e(input):
    """torch.special.i1e: exp(-|x|) * i1(x)."""
    return jsp.i1e(input)


# PyTorch's ndtr is a composite ending in a multiply by a scalar: its node is MulBackward1
@op("special_ndtr", promote=P.INT_TO_FLOAT, grad_fn="MulBackward1", function=False,
    method=False)
def _special_ndtr(input):
    """torch.special.ndtr: the standard normal CDF, (1 + erf(x / sqrt(2))) / 2."""
    return (1 + jsp.erf(input * 0.70710678118654752440)) * 0.5


@op("special_ndtri", promote=P.INT_TO_FLOAT, grad_fn="SpecialNdtriBackward0", function=False,
    method=False, saves=("result",))
def _special_ndtri(input):
    """torch.special.ndtri: the inverse of ndtr."""
    return _ndtri(input)


@jax.custom_jvp
def _ndtri(p):
    return jsp.ndtri(p)


# sqrt(2 pi) * exp(ndtri(p)**2 / 2), as PyTorch: infinite (not 0) at p = 0 and 1
_ndtri.defjvp(lambda primals, tangents: (
    _ndtri(primals[0]),
    math.sqrt(2 * math.pi) * jnp.exp(_ndtri(primals[0]) ** 2 / 2) * tangents[0]))


@op("special_log_ndtr", promote=P.INT_TO_FLOAT, grad_fn="SpecialLogNdtrBackward0",
    function=False, method=False, saves=("input", "result"))
def _special_log_ndtr(input):
    """torch.special.log_ndtr: log of the standard normal CDF, accurate in the far tail."""
    return jsp.log_ndtr(input)


@op("special_xlog1py", promote=P.INT_TO_FLOAT, grad_fn=_scalar_variant("SpecialXlog1PyBackward"),
    function=False, method=False)
def _special_xlog1py(input, other):
    """torch.special.xlog1py: x * log1p(y), 0 where x == 0 (unless y is nan)."""
    return jsp.xlog1py(input, other)


@jax.custom_jvp
def _hurwitz_zeta(x, q):
    total = _zeta(x, q)
    # Cephes: zeta(1, q) is the pole, x < 1 is outside the domain
    return jnp.where(x == 1, jnp.inf, jnp.where(x < 1, jnp.nan, total))


# d/dq zeta(x, q) = -x * zeta(x + 1, q); `_zeta`'s while_loop has no reverse-mode rule.
# PyTorch implements no derivative at all; the one in x is taken as zero here.
_hurwitz_zeta.defjvp(lambda primals, tangents: (
    _hurwitz_zeta(*primals),
    -primals[0] * _hurwitz_zeta(primals[0] + 1, primals[1]) * tangents[1]))


@op("special_zeta", promote=P.INT_TO_FLOAT, grad_fn=_scalar_variant("SpecialZetaBackward"),
    function=False, method=False)
def _special_zeta(input, other):
    """torch.special.zeta: the Hurwitz zeta function sum_k (k + q) ** -x."""
    return _hurwitz_zeta(input, other)


@op("special_round", promote=P.DEFAULT, grad_fn="RoundBackward1", function=False,
    method=False, saves=())
def _special_round(input, *, decimals=0):
    """torch.special.round: round half to even (PyTorch records its `decimals` overload)."""
    # the `decimals` overload PyTorch calls has no integer kernel
    _reject("round_vml_cpu", input, "bi")
    return _round_decimals(input, decimals) if decimals else jnp.round(input)


def _mvlgamma_check(compute, input, p):
    if p < 1:
        return RuntimeError("p has to be greater than or equal to 1")
    return None


@op(promote=P.INT_TO_FLOAT, grad_fn="MvlgammaBackward0", tensors=("input",), inplace=True,
    check=_mvlgamma_check)
def mvlgamma(input, p):
    """torch.mvlgamma: the log of the multivariate gamma function of dimension p."""
    js = jnp.arange(p, dtype=input.dtype) * -0.5
    return (jnp.sum(_lgamma(input[..., None] + js), axis=-1)
            + p * (p - 1) / 4 * math.log(math.pi))


@op(promote=P.INT_TO_FLOAT, grad_fn="IgammaBackward0", inplace=True,
    scalar_operands=False)
def igamma(input, other):
    """torch.igamma: the regularized lower incomplete gamma function P(a, x)."""
    return jsp.gammainc(input, other)


@op(promote=P.INT_TO_FLOAT, grad_fn="IgammacBackward0", inplace=True,
    scalar_operands=False)
def igammac(input, other):
    """torch.igammac: the regularized upper incomplete gamma function Q(a, x)."""
    return jsp.gammaincc(input, other)


# PyTorch records no gradient for these (no derivative formula)
@op("special_modified_bessel_i0", promote=P.INT_TO_FLOAT, differentiable=False,
    function=False, method=False)
def _special_modified_bessel_i0(input):
    """torch.special.modified_bessel_i0."""
    return _i0(input)


@op("special_modified_bessel_i1", promote=P.INT_TO_FLOAT, differentiable=False,
    function=False, method=False)
def _special_modified_bessel_i1(input):
    """torch.special.modified_bessel_i1."""
    return jsp.i1(input)


@op("special_spherical_bessel_j0", promote=P.INT_TO_FLOAT, differentiable=False,
    function=False, method=False)
def _special_spherical_bessel_j0(input):
    """torch.special.spherical_bessel_j0: sin(x) / x (1 at 0)."""
    safe = jnp.where(input == 0, 1, input)
    return jnp.where(input == 0, 1, jnp.sin(safe) / safe)


# ---- integer and float-bit functions: gcd, lcm, nextafter, float_power -------------------

@op(differentiable=False, inplace=True, scalar_operands=False)
def gcd(input, other):
    _reject("gcd_cpu", input, "bfc")
    return jnp.gcd(input, other)


@op(differentiable=False, inplace=True, scalar_operands=False)
def lcm(input, other):
    _reject("lcm_cpu", input, "bfc")
    return jnp.lcm(input, other)


@jax.custom_jvp
def _nextafter(a, b):
    return jnp.nextafter(a, b)


@_nextafter.defjvp
def _nextafter_jvp(primals, tangents):
    # PyTorch's derivative: 1 with respect to `input`, 0 with respect to `other`
    out = _nextafter(*primals)
    return out, jnp.broadcast_to(tangents[0], out.shape).astype(out.dtype)


@op(grad_fn="NextafterBackward0", inplace=True, scalar_operands=False)
def nextafter(input, other):
    _reject("nextafter_cpu", input, "bic")
    return _nextafter(input, other)


def _float_power_dtype(*operands):
    from .. import _dtype as dt
    from .._tensor import Tensor
    cplx = any(o.is_complex() if isinstance(o, Tensor) else isinstance(o, complex)
               for o in operands)
    return dt.complex128 if cplx else dt.float64


def float_power(input, exponent):
    """pow computed in double precision (complex128 when an operand is complex)."""
    from .._tensor import Tensor
    from .pointwise import _rpow, pow as pow_
    target = _float_power_dtype(input, exponent)
    base, exp = [o.to(target) if isinstance(o, Tensor) else o for o in (input, exponent)]
    if not isinstance(input, Tensor):  # a Scalar base: PowBackward2, as `2 ** t`
        return _rpow(exp, base)
    return pow_(base, exp)


def float_power_(self, exponent):
    target = _float_power_dtype(self, exponent)
    if self.dtype is not target:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._legacy} but "
                           f"the operation's result requires dtype {target._legacy}")
    from .._tensor import Tensor
    return self.pow_(exponent.to(target) if isinstance(exponent, Tensor) else exponent)


def _bind_plain():
    from .._tensor import Tensor
    Tensor.float_power = float_power
    Tensor.float_power_ = float_power_


_bind_plain()

# In-place ops PyTorch also publishes as `torch.<name>_` functions
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "celu_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "i0_", "log10_",
    "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_", "selu_", "sigmoid_", "sin_",
    "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "threshold_", "trunc_", "xlogy_",
    "zero_", "gcd_", "lcm_")
PLAIN = ["float_power"]
