"""Activations of `torch.nn.functional` with PyTorch's signatures (`inplace=`, `training=`).

The math lives in registry ops (`_ops/pointwise.py`, `_ops/reduction.py`, `_ops/nn_ops.py`);
these wrappers only parse PyTorch's arguments. `inplace=True` runs the same op through the
dispatcher's in-place path, so the result keeps the op's `grad_fn` name as in PyTorch.
"""
import inspect
import warnings

import jax
import numpy as np

import torchish
from ... import _autocast
from ..._ops import registry as _registry
from ..._ops import nn_ops as _nn
from ..._ops.complex_refusals import refuse as _refuse
from ..._ops.recording import records as _records
from ..._ops.shape import _wrap_dim

__all__ = ["threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "elu",
           "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu",
           "rrelu", "rrelu_", "glu", "hardsigmoid", "silu", "mish", "hardswish", "softmin",
           "softmax", "log_softmax", "gumbel_softmax", "softsign", "tanhshrink"]

_SIGNATURES = {}


def _inplace(name, *args, **kwargs):
    """Op `name` applied in place to its first argument, through the dispatcher."""
    d = _registry.REGISTRY[name]
    sig = _SIGNATURES.get(name)
    if sig is None:
        sig = _SIGNATURES[name] = inspect.signature(d.body)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    return _registry.dispatch_inplace(d, tuple(a[n] for n in d.tensors),
                                      tuple(a[n] for n in d.statics))


def _op(name):
    return _registry.REGISTRY[name].function


def threshold(input, threshold, value, inplace=False):
    if inplace:
        return _inplace("threshold", input, threshold, value)
    return _op("threshold")(input, threshold, value)


def threshold_(input, threshold, value):
    return _inplace("threshold", input, threshold, value)


def relu(input, inplace=False):
    return _inplace("relu", input) if inplace else torchish.relu(input)


def relu_(input):
    return _inplace("relu", input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _inplace("hardtanh", input, min_val, max_val)
    return _op("hardtanh")(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return _inplace("relu6", input) if inplace else _op("relu6")(input)


def elu(input, alpha=1.0, inplace=False):
    return _inplace("elu", input, alpha) if inplace else _op("elu")(input, alpha)


def elu_(input, alpha=1.0):
    return _inplace("elu", input, alpha)


def selu(input, inplace=False):
    return _inplace("selu", input) if inplace else _op("selu")(input)


def selu_(input):
    return _inplace("selu", input)


def celu(input, alpha=1.0, inplace=False):
    return _inplace("celu", input, alpha) if inplace else _op("celu")(input, alpha)


def celu_(input, alpha=1.0):
    return _inplace("celu", input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _inplace("leaky_relu", input, negative_slope)
    return _op("leaky_relu")(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _inplace("leaky_relu", input, negative_slope)


def hardsigmoid(input, inplace=False):
    return _inplace("hardsigmoid", input) if inplace else _op("hardsigmoid")(input)


def silu(input, inplace=False):
    return _inplace("silu", input) if inplace else _op("silu")(input)


def mish(input, inplace=False):
    return _inplace("mish", input) if inplace else _op("mish")(input)


def hardswish(input, inplace=False):
    return _inplace("hardswish", input) if inplace else _op("hardswish")(input)


@_autocast.casts("prelu")
def prelu(input, weight):
    if not isinstance(weight, torchish.Tensor):
        raise TypeError("prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {input.dtype._legacy} and "
                           f"{weight.dtype._legacy}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim >= 2 else 1  # ATen: a 1-D input has 1 channel
        if n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    return _nn._prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _refuse("_rrelu_with_noise", input)   # (before the noise's comparison refuses it)
    if training:
        # PyTorch draws one double uniform per non-positive element, in memory order, with
        # the bounds rounded to the input's precision first.
        with torchish.no_grad():
            neg = input <= 0
            lo = float(np.asarray(lower, input.dtype.np))
            hi = float(np.asarray(upper, input.dtype.np))
            if isinstance(input._data, jax.core.Tracer):  # compiled: JAX's stream, a draw for every element
                r = torchish.empty(input.shape, dtype=torchish.float64).uniform_(lo, hi)
                noise = torchish.where(neg, r.to(input.dtype), 1)
            else:
                k = int(neg.sum().item())
                noise = torchish.ones_like(input)
                if k:
                    r = torchish.empty(k, dtype=torchish.float64).uniform_(lo, hi)
                    noise[neg] = r.to(input.dtype)
    else:
        noise = torchish.full_like(input, (lower + upper) / 2)
    if inplace:
        return _inplace("_rrelu_with_noise", input, noise)
    return _nn._rrelu_with_noise(input, noise)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)   # (a plain modulo would accept any dim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    return _nn._glu(input, d)


def _implicit_dim(name, ndim, stacklevel):
    # PyTorch's legacy choice when F.softmax & co. are called without a dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)   # (as PyTorch: a wrong dim is the method's error)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    # softmax of the negated input: PyTorch's node is SoftmaxBackward0
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    gumbels = -torchish.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = torchish.zeros_like(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


# PyTorch's softsign and tanhshrink are Python composites; with a graph to record they are
# spelled out (their nodes' edges reach abs / tanh), else one fused op computes them.
def softsign(input):
    if _records(input):
        return input / (input.abs() + 1)
    return _op("softsign")(input)


def tanhshrink(input):
    if _records(input):
        return input - input.tanh()
    return _op("tanhshrink")(input)
