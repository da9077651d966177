"""ELU, SELU, CELU and leaky ReLU as PyTorch's in-place forms record them: `elu_`
(EluBackward1), `celu_` (CeluBackward1) and `leaky_relu_` (LeakyReluBackward1) compute their
gradient from the result they wrote (the backward kernels' is_result=True), their
`inplace_backward` (see `op`); and the values their nodes save besides
(`grad_fn._saved_scale`, `_saved_input_scale`, see `op`'s `saved_as`)."""
import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit
from .half_grad import HALF

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

_NEGATIVE_SLOPE = ("In-place elu backward calculation is triggered with a negative slope which "
                   "is not supported. This is caused by calling in-place forward function with "
                   "a negative slope, please call out-of-place version instead.")
_LEAKY_NEGATIVE_SLOPE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope")


def celu_input_scale(alpha):
    # the backward divides in double by alpha read as a C float (1 / 0.7 is 1.428571452...);
    # the forward by alpha itself
    return 1.0 / float(np.float32(alpha))


@eager_jit
def _of_result(grad, result, alpha, scale, input_scale):
    # result <= 0: grad * input_scale * (result + alpha * scale), else grad * scale; a half
    # result computes in float32 and rounds once
    compute = jnp.float32 if result.dtype in HALF else result.dtype
    g, y = grad.astype(compute), result.astype(compute)
    negcoef = jnp.asarray(alpha, compute) * jnp.asarray(scale, compute)
    # differentiated again (create_graph), PyTorch's elu_double_backward masks result < 0
    y_ = jnp.where(y < 0, y, jax.lax.stop_gradient(y))
    out = jnp.where(y <= 0, g * input_scale * (y_ + negcoef), g * scale)
    return out.astype(result.dtype)


def _elu_of_result(grad, result, alpha, scale, input_scale):
    if alpha < 0:   # (raised by backward, as PyTorch's elu_backward)
        raise RuntimeError(_NEGATIVE_SLOPE)
    return _of_result(grad, result, alpha, scale, input_scale)


def elu_inplace_backward(grad, result, alpha=1.0):
    return _elu_of_result(grad, result, alpha, 1, 1)


def selu_inplace_backward(grad, result):
    return _elu_of_result(grad, result, SELU_ALPHA, SELU_SCALE, 1)


def celu_inplace_backward(grad, result, alpha=1.0):
    return _elu_of_result(grad, result, alpha, 1, celu_input_scale(alpha))


@eager_jit
def _leaky_of_result(grad, result, negative_slope):
    # result > 0: grad, else grad * negative_slope (a half grad in float32, rounded once)
    compute = jnp.float32 if result.dtype in HALF else result.dtype
    g = grad.astype(compute)
    out = jnp.where(result > 0, g, g * jnp.asarray(negative_slope, compute))
    return out.astype(result.dtype)


def leaky_relu_inplace_backward(grad, result, negative_slope=0.01):
    if negative_slope < 0:   # (raised by backward, as PyTorch's leaky_relu_backward)
        raise RuntimeError(_LEAKY_NEGATIVE_SLOPE)
    return _leaky_of_result(grad, result, negative_slope)


# what EluBackward0/1 save besides alpha (CeluBackward0/1 save only alpha)
ELU_SAVED = {"scale": lambda **_: 1, "input_scale": lambda **_: 1}
SELU_SAVED = {"alpha": lambda **_: SELU_ALPHA, "scale": lambda **_: SELU_SCALE,
              "input_scale": lambda **_: 1}
