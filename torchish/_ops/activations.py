"""The activations (also `torch.nn.functional`). Each differentiates by PyTorch's backward
kernel (see half_grad.py): its side at the branch points, its signed zeros (`grad * 0`) and, for
a half input computed in float32 (`opmath`), its float32 steps before the one rounding. (relu
is with the unary math, in pointwise_math.py.)"""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .elu_result import (ELU_SAVED, SELU_ALPHA as _SELU_ALPHA, SELU_SAVED,
                         SELU_SCALE as _SELU_SCALE, celu_input_scale, celu_inplace_backward,
                         elu_inplace_backward, leaky_relu_inplace_backward,
                         selu_inplace_backward)
from .errors import scalar_overflow
from .half_grad import pytorch_grad, unfolded
from .pointwise import _is_bool, _no_bool_subtraction, _reject, legacy_name
from .pointwise_math import _NO_COMPLEX_CLAMP
from .registry import Promote, op

P = Promote


def _no_bool_clamp(x):
    if _is_bool(x):
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if jnp.iscomplexobj(x):
        raise NotImplementedError(_NO_COMPLEX_CLAMP)


def _hardtanh_fn(x, min_val, max_val):
    # (not `clip`: a -0.0 at a bound of 0 stays -0.0, as PyTorch's kernel leaves it)
    return jnp.where(x < min_val, min_val, jnp.where(x > max_val, max_val, x))


def _hardtanh_grad(t, x, y, r, min_val, max_val):
    return jnp.where((x <= min_val) | (x >= max_val), 0, t)


_relu6 = pytorch_grad(lambda x: _hardtanh_fn(x, 0, 6),
                      lambda t, x, y, r: _hardtanh_grad(t, x, y, r, 0, 6), name="relu6")


# (PyTorch's relu6 is hardtanh(input, 0, 6): its node reads back the ints)
@op(opmath=True, grad_fn="HardtanhBackward0", inplace=True, nn=True, function=False, method=False,
    saved_as={"min_val": lambda **_: 0, "max_val": lambda **_: 6})
def relu6(input):
    _no_bool_clamp(input)
    return _relu6(input)


def _bounds_fit(input, *bounds):
    # the number arguments are converted to the tensor's type (threshold(int8, 300, 0))
    for bound in bounds:
        error = scalar_overflow(bound, input.dtype)
        if error is not None:
            return error
    return None


_hardtanh = pytorch_grad(_hardtanh_fn, _hardtanh_grad, name="hardtanh")


@op(opmath=True, grad_fn="HardtanhBackward0", inplace=True, nn=True, function=False,
    method=False,
    check=lambda compute, input, min_val=-1.0, max_val=1.0: _bounds_fit(input, min_val, max_val))
def hardtanh(input, min_val=-1.0, max_val=1.0):
    _no_bool_clamp(input)
    return _hardtanh(input, min_val, max_val)


# (one product, not a `where` of two: the pullback adds the branches, and -0.0 + 0.0 is 0.0)
_leaky_relu = pytorch_grad(lambda x, slope: jnp.where(x > 0, x, x * slope),
                           lambda t, x, y, r, slope: t * jnp.where(x > 0, 1, slope),
                           name="leaky_relu")


@op(opmath=True, grad_fn="LeakyReluBackward0", inplace=True, nn=True,
    inplace_grad_fn="LeakyReluBackward1", inplace_backward=leaky_relu_inplace_backward)
def leaky_relu(input, negative_slope=0.01):
    _reject("leaky_relu_cpu", input, "bi")
    return _leaky_relu(input, negative_slope)


def _elu_fn(x, alpha, scale, input_scale):
    # PyTorch's kernel: expm1(x * input_scale) * (alpha * scale) for x <= 0, else x * scale
    neg = jnp.where(x > 0, 0, x)   # (not `minimum`: its derivative at 0 is halved)
    negcoef = jnp.asarray(alpha, x.dtype) * jnp.asarray(scale, x.dtype)
    return jnp.where(x > 0, x * scale, jnp.expm1(neg * input_scale) * negcoef)


def _elu_grad(t, x, y, r, alpha, scale, input_scale):
    # x <= 0: grad * input_scale * (alpha * scale) * exp(x * input_scale), else grad * scale
    # (the coefficients in the op-math type; exp of the unused branch clamped: 0 * inf)
    # (factors selected, not products: see leaky_relu)
    neg = x <= 0
    negcoef = jnp.asarray(alpha, x.dtype) * jnp.asarray(scale, x.dtype)
    # (x < 0, not neg, feeds exp: PyTorch's double backward takes the slope of this factor
    # as 0 at x = 0, where the value is 1 either way)
    e = jnp.exp(jnp.where(x < 0, x, 0) * input_scale)
    return t * jnp.where(neg, e, 1) * jnp.where(neg, negcoef, scale) * \
        jnp.where(neg, input_scale, 1)


_elu = pytorch_grad(_elu_fn, _elu_grad, name="elu")
# celu's forward scales by 1 / alpha, its backward by `celu_input_scale`
_celu = pytorch_grad(lambda x, alpha: _elu_fn(x, alpha, 1.0, 1 / alpha),
                     lambda t, x, y, r, alpha: _elu_grad(t, x, y, r, alpha, 1.0,
                                                         celu_input_scale(alpha)),
                     name="celu")


@op(opmath=True, grad_fn="EluBackward0", inplace=True, nn=True, inplace_grad_fn="EluBackward1",
    inplace_backward=elu_inplace_backward, saved_as=ELU_SAVED)
def elu(input, alpha=1.0):
    _reject("elu_cpu", input, "bi")
    return _elu(input, alpha, 1.0, 1.0)


@op(opmath=True, grad_fn="EluBackward0", inplace=True, nn=True, inplace_grad_fn="EluBackward1",
    inplace_backward=selu_inplace_backward, saved_as=SELU_SAVED)
def selu(input):
    _reject("elu_cpu", input, "bi")
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


@op(opmath=True, grad_fn="CeluBackward0", inplace=True, nn=True, inplace_grad_fn="CeluBackward1",
    inplace_backward=celu_inplace_backward)
def celu(input, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _reject("elu_cpu", input, "bi")
    return _celu(input, alpha)


def _gelu_fn(x, approximate):
    if approximate == "tanh":
        return jax.nn.gelu(x, approximate=True)
    # PyTorch's formula: its tail flushes to -0.0 where JAX's erfc form keeps tiny values
    return x * 0.5 * (1 + jsp.erf(x * math.sqrt(0.5)))


_GELU_ALPHA = 2 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5
_GELU_BETA, _GELU_KAPPA = math.sqrt(2) * 2 / math.sqrt(math.pi) * 0.5, 0.044715


def _gelu_grad(t, x, y, r, approximate):
    if approximate == "tanh":
        x_sq = x * x
        tanh_inner = jnp.tanh(_GELU_BETA * (x + _GELU_KAPPA * (x_sq * x)))
        left_derivative = 0.5 * (1 + tanh_inner)
        right_derivative = 0.5 * x * (1 - tanh_inner * tanh_inner)
        inner_derivative = _GELU_BETA * (1 + 3 * _GELU_KAPPA * x_sq)
        return t * (left_derivative + right_derivative * inner_derivative)
    cdf = 0.5 * (1 + jsp.erf(x * math.sqrt(0.5)))
    pdf = _GELU_ALPHA * jnp.exp(x * x * -0.5)
    return t * (cdf + x * pdf)


_gelu = pytorch_grad(_gelu_fn, _gelu_grad, name="gelu")


@op(opmath=True, grad_fn="GeluBackward0", nn=True, function=False, method=False)
def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _reject("GeluKernelImpl", input, "bi")
    return _gelu(input, approximate)


def _sigmoid_of(x):
    return 1 / (1 + jnp.exp(-x))


def _silu_grad(t, x, y, r):
    s = _sigmoid_of(x)   # grad * sigmoid * (1 + x * (1 - sigmoid))
    return t * (1 + x * (1 - s)) * s


_silu = pytorch_grad(lambda x: x * jax.nn.sigmoid(x), _silu_grad, name="silu")


@op(opmath=True, grad_fn="SiluBackward0", nn=True, function=False, method=False)
def silu(input):
    _reject("silu_cpu", input, "bi")
    return _silu(input)


def _mish_grad(t, x, y, r):
    ts = jnp.tanh(jnp.log1p(jnp.exp(x)))
    return t * (ts + x * _sigmoid_of(x) * (1 - ts * ts))


_mish = pytorch_grad(lambda x: x * jnp.tanh(jax.nn.softplus(x)), _mish_grad, name="mish")


@op(opmath=True, grad_fn="MishBackward0", nn=True, function=False, method=False)
def mish(input):
    _reject("mish_cpu", input, "bi")
    return _mish(input)


def _softplus_fn(x, beta, threshold):
    scaled = x * beta
    # (the unused branch is clamped: exp overflowing to inf made its zero gradient 0 * inf)
    return jnp.where(scaled > threshold, x,
                     jnp.log1p(jnp.exp(jnp.minimum(scaled, threshold))) / beta)


def _softplus_grad(t, x, y, r, beta, threshold):
    scaled = x * beta   # grad * z / (z + 1), z = exp(x * beta); grad above the threshold
    z = jnp.exp(jnp.where(scaled > threshold, 0, scaled))
    return jnp.where(scaled > threshold, t, t / (z + 1) * z)


_softplus = pytorch_grad(_softplus_fn, _softplus_grad, name="softplus")


@op(opmath=True, grad_fn="SoftplusBackward0", nn=True, function=False, method=False)
def softplus(input, beta=1.0, threshold=20.0):
    _reject("softplus_cpu", input, "bi")
    return _softplus(input, beta, threshold)


@op(promote=P.INT_TO_FLOAT, grad_fn="DivBackward0", nn=True, function=False, method=False)
def softsign(input):
    _reject("abs_cpu", input, "b")
    return input / (1 + jnp.abs(input))


def _hardswish_grad(t, x, y, r):
    # x <= -3: 0; x < 3: grad * (x / 3 + 0.5); else grad
    return jnp.where(x <= -3, 0, jnp.where(x < 3, t * (x / unfolded(3, x) + 0.5), t))


_hardswish = pytorch_grad(lambda x: x * jnp.clip(x + 3, 0, 6) / unfolded(6, x), _hardswish_grad,
                          name="hardswish")


@op(opmath=True, grad_fn="HardswishBackward0", nn=True, function=False, method=False)
def hardswish(input):
    _reject("hardswish_cpu", input, "bi")
    return _hardswish(input)


# (PyTorch's backward multiplies by 1/6 as a C float, in double too)
_ONE_SIXTH_F32 = float(np.float32(1 / 6))
_hardsigmoid = pytorch_grad(lambda x: jnp.clip(x + 3, 0, 6) / unfolded(6, x),
                            lambda t, x, y, r: jnp.where((x > -3) & (x < 3),
                                                         t * _ONE_SIXTH_F32, 0),
                            name="hardsigmoid")


@op(opmath=True, grad_fn="HardsigmoidBackward0", nn=True, function=False, method=False)
def hardsigmoid(input):
    _reject("hardsigmoid_cpu", input, "bi")
    return _hardsigmoid(input)


def _logsigmoid_grad(t, x, y, r):
    # grad * (max_deriv - sign * z / (1 + z)), z = exp(-|x|) as the forward saved it (in the
    # input's type); (max_deriv, sign) is (1, 1) below 0, else (0, -1)
    z = r(jnp.exp(-jnp.abs(x)))
    neg = x < 0
    return t * (jnp.where(neg, 1, 0) - jnp.where(neg, 1, -1) * (z / (1 + z)))


# PyTorch's min(x, 0) - log1p(exp(-|x|)): 0.0, not -0.0, for large x
_logsigmoid = pytorch_grad(lambda x: jnp.minimum(x, 0) - jnp.log1p(jnp.exp(-jnp.abs(x))),
                           _logsigmoid_grad, name="logsigmoid")


# (not `opmath`: `pytorch_grad` computes a half input in float32, and its rule needs the type)
@op(grad_fn="LogSigmoidBackward0", nn=True, function=False, method=False)
def logsigmoid(input):
    _reject("log_sigmoid_cpu", input, "bi")
    return _logsigmoid(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="SubBackward0", nn=True, function=False, method=False,
    kinds_check=_no_bool_subtraction)
def tanhshrink(input):
    return input - jnp.tanh(input)


@op(grad_fn="SoftshrinkBackward0", nn=True, function=False, method=False)
def softshrink(input, lambd=0.5):
    _reject("softshrink_check", input, "bi")
    if lambd < 0:
        big = float(jnp.finfo(input.dtype).max)
        raise RuntimeError(f"lambda must be in range [0, {big:g}] for input dtype "
                           f"{legacy_name(input)}, but found {lambd:g}")
    return jnp.where(input > lambd, input - lambd, jnp.where(input < -lambd, input + lambd, 0))


@op(grad_fn="HardshrinkBackward0", nn=True)
def hardshrink(input, lambd=0.5):
    _reject("hardshrink_cpu", input, "bi")
    return jnp.where(jnp.abs(input) > lambd, input, 0)


@op(grad_fn="ThresholdBackward0", nn=True, inplace=True, inplace_grad_fn="ThresholdBackward1",
    scalar_operands=("threshold", "value"),
    check=lambda compute, input, threshold, value: _bounds_fit(input, threshold, value))
def threshold(input, threshold, value):
    _reject("threshold_cpu", input, "b")
    return jnp.where(input > threshold, input, value)
