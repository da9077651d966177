"""Fractional max pooling (`fractional_max_pool2d/3d`, Graham 2014): windows of a fixed size
whose start positions follow a pseudo-random sequence drawn from one sample in [0, 1) per
plane and dimension, computed as ATen computes it so that the same samples pick the same
windows."""
import math

import jax
import jax.numpy as jnp

from .nn_norm import _floating_only
from .nn_conv import _sizes
from .registry import Promote, op

# (exponent, mantissa) bits: ATen's interval arithmetic rounds every step to the input dtype
_ROUNDING = {jnp.dtype(jnp.float16): (5, 10), jnp.dtype(jnp.bfloat16): (8, 7)}


def _intervals(sample, n_in, n_out, k):
    """Start of each of the `n_out` windows of size k over `n_in`, for each sample:
    `int((i + u) * alpha) - int(u * alpha)`, alpha = (n_in - k) / (n_out - 1), in the
    samples' dtype; the last window ends at the input's end."""
    starts = jnp.full(sample.shape + (n_out,), n_in - k, jnp.int64)
    if n_out > 1:
        bits = _ROUNDING.get(jnp.dtype(sample.dtype))
        compute = jnp.float32 if bits else sample.dtype

        def rounded(v):
            return jax.lax.reduce_precision(v, *bits) if bits else v
        u = sample.astype(compute)[..., None]
        alpha = rounded(jnp.asarray(n_in - k, compute) / jnp.asarray(n_out - 1, compute))
        i = jnp.arange(n_out - 1, dtype=compute)
        first = rounded(rounded(i + u) * alpha).astype(jnp.int64)
        starts = starts.at[..., :-1].set(first - rounded(u * alpha).astype(jnp.int64))
    return starts


def _fractional_max(input, kernel_size, output_size, random_samples, nd):
    x = input if input.ndim == nd + 2 else input[None]
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    samples = random_samples[:n]
    # ATen's sample i goes to dimension i for 3-D pooling; 2-D takes (width, height)
    order = range(nd) if nd == 3 else (1, 0)
    flat = jnp.zeros((n, c) + (1,) * (2 * nd), jnp.int64)   # flat input index of each tap
    for d, j in enumerate(order):
        k = max(kernel_size[d], 1)
        starts = _intervals(samples[:, :, j], spatial[d], output_size[d], kernel_size[d])
        pos = starts[..., None] + jnp.arange(k)     # (N, C, out_d, k_d)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = output_size[d], k
        flat = flat * spatial[d] + pos.reshape(shape)
    big = tuple(output_size) + tuple(max(k, 1) for k in kernel_size)
    flat = jnp.broadcast_to(flat, (n, c) + big)
    # (explicit sizes: -1 is ambiguous for an empty batch or output)
    window = flat.reshape(n, c, *output_size, math.prod(big[nd:]))
    planes = x.reshape(n, c, math.prod(spatial))
    values = jnp.take_along_axis(planes, window.reshape(n, c, math.prod(big)), axis=2,
                                 mode="clip").reshape(window.shape)
    # ATen's scan: `v > max || isnan(v)`, so the first maximum wins and the last NaN
    nan = jnp.isnan(values)
    last_nan = values.shape[-1] - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
    arg = jnp.where(nan.any(-1), last_nan, jnp.argmax(values, axis=-1))
    out = jnp.take_along_axis(values, arg[..., None], axis=-1)[..., 0]
    indices = jnp.take_along_axis(window, arg[..., None], axis=-1)[..., 0]
    if any(k <= 0 for k in kernel_size):    # an empty window: -inf at the window's start
        out = jnp.full_like(out, -jnp.inf)
        indices = window[..., 0]
    if input.ndim == nd + 1:
        out, indices = out[0], indices[0]
    return out, indices


def _check(input, kernel_size, output_size, random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    where = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    ints = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(kernel_size) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {ints}")
    if len(output_size) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {ints}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_sizes(input.shape)}")
    for i in range(input.ndim - nd - 1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{_sizes(input.shape)} with dimension {i} "
                               f"being empty.")
    names = ("time", "height", "width")[3 - nd:]
    for what, n, o, k in zip(names, input.shape[-nd:], output_size, kernel_size):
        if not (o + k - 1 <= n if nd == 2 else o + k - 1 < n):
            raise RuntimeError(f"{where}: pool {what} {k} too large relative to input {what} "
                               f"{n}")
    if random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if random_samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got "
                           f"{random_samples.ndim}")
    batch = input.shape[0] if input.ndim == nd + 2 else 1
    if random_samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if random_samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if random_samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{random_samples.shape[2]}.")
    _floating_only(f"{name}_out_frame", input)


_FRACTIONAL = dict(promote=Promote.NONE, nn=True, function=False, method=False,
                   tensors=("input", "random_samples"), saves=("input", "result1"),
                   non_differentiable=("random_samples",))


@op(grad_fn="FractionalMaxPool2DBackward0", **_FRACTIONAL)
def fractional_max_pool2d(input, kernel_size, output_size, random_samples):
    _check(input, kernel_size, output_size, random_samples, 2)
    return _fractional_max(input, kernel_size, output_size, random_samples, 2)


@op(grad_fn="FractionalMaxPool3DBackward0", **_FRACTIONAL)
def fractional_max_pool3d(input, kernel_size, output_size, random_samples):
    _check(input, kernel_size, output_size, random_samples, 3)
    return _fractional_max(input, kernel_size, output_size, random_samples, 3)

