"""`torch.fake_quantize_per_tensor_affine` / `fake_quantize_per_channel_affine`: the
quantize-dequantize step of quantization-aware training, with PyTorch's straight-through
gradient (the incoming gradient where the rounded value fell inside [quant_min, quant_max],
zero where it was clamped)."""
import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .pointwise import legacy_name
from .registry import Promote, op

P = Promote
_HALF = (jnp.float16, jnp.bfloat16)


def _forward(x, scale, zero_point, quant_min, quant_max):
    """(result, mask) as PyTorch's CPU kernel: `inv_scale = 1.0f / scale` in float32, round
    half to even, add the zero point, clamp, subtract it and scale back; a half input is
    computed in float32 and rounded once. The mask: where the rounded value fell inside."""
    work = jnp.float32 if x.dtype in _HALF else x.dtype
    xf = x.astype(work)
    scale = jnp.asarray(scale, jnp.float32)
    zero_point = jnp.asarray(zero_point).astype(work)
    inv = (jnp.float32(1.0) / scale).astype(work)
    q = jnp.round(xf * inv) + zero_point
    inside = (q >= quant_min) & (q <= quant_max)
    out = (jnp.clip(q, quant_min, quant_max) - zero_point) * scale.astype(work)
    return out.astype(x.dtype), inside


@jax.custom_vjp
def _quantize(x, scale, zero_point, quant_min, quant_max):
    return _forward(x, scale, zero_point, quant_min, quant_max)[0]


def _quantize_fwd(x, scale, zero_point, quant_min, quant_max):
    out, inside = _forward(x, scale, zero_point, quant_min, quant_max)
    return out, (inside, scale, zero_point, quant_min, quant_max)


def _zero_cotangent(v):
    v = jnp.asarray(v)
    if jnp.issubdtype(v.dtype, jnp.inexact):
        return jnp.zeros_like(v)
    return np.zeros(v.shape, jax.dtypes.float0)


def _quantize_bwd(res, g):
    # the straight-through estimator, PyTorch's `grad * mask`; written out because XLA folds
    # `g * 0` into +0.0, losing the sign (and the nan) the product keeps. Scale and zero point
    # get no gradient (PyTorch's op does not differentiate them).
    inside, *qparams = res
    zero = jnp.where(jnp.isnan(g), g, jnp.copysign(jnp.zeros_like(g), g))
    return (jnp.where(inside, g, zero),) + tuple(_zero_cotangent(v) for v in qparams)


_quantize.defvjp(_quantize_fwd, _quantize_bwd)


@op("_fake_quantize_per_tensor", promote=P.NONE, function=False, method=False, saves=(),
    grad_fn="FakeQuantizePerTensorAffineCachemaskBackward0")
def _per_tensor(input, scale, zero_point, quant_min, quant_max):
    return _quantize(input, scale, zero_point, quant_min, quant_max)


@op("_fake_quantize_per_tensor_tq", promote=P.NONE, function=False, method=False, saves=(),
    tensors=("input", "scale", "zero_point"), non_differentiable=("scale", "zero_point"),
    grad_fn="FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0")
def _per_tensor_tq(input, scale, zero_point, quant_min, quant_max):
    return _quantize(input, scale.reshape(()), zero_point.reshape(()), quant_min, quant_max)


@op("_fake_quantize_per_channel", promote=P.NONE, function=False, method=False, saves=(),
    tensors=("input", "scale", "zero_point"), non_differentiable=("scale", "zero_point"),
    grad_fn="FakeQuantizePerChannelAffineCachemaskBackward0")
def _per_channel(input, scale, zero_point, axis, quant_min, quant_max):
    shape = [1] * input.ndim
    shape[axis] = -1
    return _quantize(input, scale.reshape(shape), zero_point.reshape(shape), quant_min,
                     quant_max)


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _check_dtype(input, kernel="fake_quantize_tensor_cachemask_kernel_type_handling"):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{legacy_name(input._data)}'")


def _zero_point_in_range(zero_point, quant_min, quant_max):
    # a value check: on concrete zero points only (PyTorch reads them on the host)
    if isinstance(zero_point, Tensor):
        if isinstance(zero_point._data, jax.core.Tracer):
            return
        low, high = int(zero_point.min()), int(zero_point.max())
    else:
        low = high = zero_point
    if low < quant_min or high > quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    _check_range(quant_min, quant_max)
    if isinstance(scale, Tensor):
        for t in (scale, zero_point):
            if t.numel() != 1:
                raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted "
                                   f"to Scalar")
        _check_dtype(input)
        return _per_tensor_tq(input, scale, zero_point, int(quant_min), int(quant_max))
    _zero_point_in_range(zero_point, quant_min, quant_max)
    _check_dtype(input)
    return _per_tensor(input, float(scale), int(zero_point), int(quant_min), int(quant_max))


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError(f"Scale must be Float or BFloat16, found "
                           f"{legacy_name(scale._data)}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    _check_range(quant_min, quant_max)
    _zero_point_in_range(zero_point, quant_min, quant_max)
    if axis >= input.dim():   # (a plain dim check; a negative axis is refused below)
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.dim()}, {input.dim() - 1}], but got {axis})")
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if input.shape[axis] != scale.numel():
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_dtype(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    return _per_channel(input, scale, zero_point, int(axis), int(quant_min), int(quant_max))
