"""Window and axis reductions of `torch.nn.functional`: pooling (max, average, adaptive,
unpooling) and normalisation (batch, layer, group, RMS, local response).

Window geometry (output sizes, padding, divisors, PyTorch's flat per-plane indices) depends
only on shapes and static arguments: it is computed with NumPy while the op is traced.
"""
import functools

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

from .nn_conv import HIGHEST, ntuple, window_slices, _sizes
from .pointwise import _true_div, legacy_name, not_implemented
from .registry import Promote, op

P = Promote


# ---- pooling geometry -------------------------------------------------------------------

def pool_output_size(n, k, p, s, d, ceil_mode):
    """PyTorch's pooling_output_shape (with ceil_mode's last-window-starts-inside rule)."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_args(kernel_size, stride, padding, dilation, nd):
    k = ntuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) \
        else ntuple(stride, nd)
    return k, s, ntuple(padding, nd), ntuple(dilation, nd)


def _batched(input, nd, what):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(what)
    return input if input.ndim == nd + 2 else input[None]


def _nonempty(input, nd, fn):
    """pool2d/pool3d_shape_check's test that the non-batch dimensions are positive."""
    if all(input.shape[-nd - 1:]):
        return
    if nd == 2:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_sizes(input.shape)}")
    raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, "
                       f"but input has a shape of {_sizes(input.shape)} and non-batch "
                       f"dimension 0 has length zero!")


def _pool_geometry(x, k, s, p, d, ceil_mode, input, fn):
    # PyTorch computes the output size (pooling_output_shape: stride, padding checks) before
    # the shape checks (kernel, dilation, empty dimensions)
    for p_, k_, s_, d_ in zip(p, k, s, d):
        if s_ == 0:
            raise RuntimeError("stride should not be zero")
        if p_ < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p_}")
        if p_ > int(((k_ - 1) * d_ + 1) / 2):  # C++ division truncates
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p_}, kernel_size={k_} and dilation={d_}")
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip("DHW"[3 - len(k):], k)))
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{n}: {v}" for n, v in
                                    zip("DHW"[3 - len(k):], d)))
    _nonempty(input, len(k), fn)
    if any(p_ > k_ // 2 for p_, k_ in zip(p, k)):
        msg = "pad should be smaller than or equal to half of kernel size, but got "
        if len(k) == 2:
            raise RuntimeError(msg + f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
        raise RuntimeError(msg + f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                                 f"padH: {p[1]}")
    spatial = x.shape[2:]
    out = [pool_output_size(n, k_, p_, s_, d_, ceil_mode)
           for n, k_, p_, s_, d_ in zip(spatial, k, p, s, d)]
    if any(o < 1 for o in out):
        c = x.shape[1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + spatial))}). "
                           f"Calculated output size: ({'x'.join(map(str, [c] + out))}). "
                           f"Output size is too small")
    # right padding so that every (ceil-mode) window lies inside the padded input
    pads = [(p_, (o - 1) * s_ + d_ * (k_ - 1) + 1 - n - p_)
            for n, k_, p_, s_, d_, o in zip(spatial, k, p, s, d, out)]
    return out, pads


def _window_index(spatial, k, s, p, d, out):
    """(prod(k), *out) flat per-plane input index of every window element."""
    nd = len(k)
    flat = np.zeros(tuple(k) + tuple(out), np.int64)
    for i in range(nd):
        pos = (np.arange(out[i])[None, :] * s[i] - p[i] + np.arange(k[i])[:, None] * d[i])
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = k[i], out[i]
        flat = flat * spatial[i] + pos.reshape(shape)
    return flat.reshape((-1,) + tuple(out))


def _lowest(dtype):
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.array(-jnp.inf, dtype)
    return jnp.array(jnp.iinfo(dtype).min, dtype)


def _select_max(patches, index):
    """Max over axis 2 of (N, C, K, *out) patches, the first maximum winning as in PyTorch's
    scan (so the gradient goes to that element only), with its flat input index."""
    arg = jnp.argmax(patches, axis=2)
    values = jnp.take_along_axis(patches, arg[:, :, None], axis=2)[:, :, 0]
    n, c = patches.shape[:2]
    k = patches.shape[2]
    table = jnp.asarray(index.reshape(k, -1))
    flat_arg = arg.reshape(n, c, -1)
    indices = table[flat_arg, jnp.arange(table.shape[1])]
    return values, indices.reshape(arg.shape)


# ---- max / average pooling --------------------------------------------------------------

def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd)
    what = (f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
            if nd == 2 else f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
            f"for input, but got ndim: {input.ndim}")
    x = _batched(input, nd, what)
    out, pads = _pool_geometry(x, k, s, p, d, ceil_mode, input,
                               "max_pool3d_with_indices_out_cpu_template()")
    if x.dtype == jnp.bool_ or jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise not_implemented(f"max_pool{nd}d", x)
    xp = lax.pad(x, _lowest(x.dtype), [(0, 0, 0)] * 2 + [(lo, hi, 0) for lo, hi in pads])
    patches = window_slices(xp, k, s, d, out)
    values, indices = _select_max(patches, _window_index(x.shape[2:], k, s, p, d, out))
    if input.ndim == nd + 1:
        values, indices = values[0], indices[0]
    return (values, indices) if return_indices else values


_POOL = dict(promote=P.NONE, nn=True, function=False, method=False, tensors=("input",))


@op(grad_fn="MaxPool2DWithIndicesBackward0", saves=("input", "result1"), **_POOL)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 2)


@op(grad_fn="MaxPool3DWithIndicesBackward0", saves=("input", "result1"), **_POOL)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, 3)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd):
    k, s, p, d = _pool_args(kernel_size, stride, padding, 1, nd)
    x = _batched(input, nd, f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                            f"for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out, pads = _pool_geometry(x, k, s, p, d, ceil_mode, input, "avg_pool3d()")
    # ATen's CPU kernels: avg_pool2d for floating types and int64, avg_pool3d for float,
    # double and int64
    if not (x.dtype == jnp.int64 or (jnp.issubdtype(x.dtype, jnp.floating) and (
            nd == 2 or x.dtype in (jnp.float32, jnp.float64)))):
        raise not_implemented("avg_pool2d" if nd == 2 else "avg_pool3d_out_frame", x)
    # PyTorch's divisor: the window clipped to the padded input (count_include_pad) or to the
    # input itself; one factor per dimension
    divisor = np.ones((), np.int64)
    for n, k_, p_, s_, o in zip(x.shape[2:], k, p, s, out):
        start = np.arange(o) * s_ - p_
        end = np.minimum(start + k_, n + p_)
        if count_include_pad:
            size = end - start
        else:
            size = np.minimum(end, n) - np.maximum(start, 0)
        divisor = np.multiply.outer(divisor, np.maximum(size, 1))
    if divisor_override is not None:
        divisor = np.asarray(divisor_override)

    def average(x):
        xp = lax.pad(x, jnp.zeros((), x.dtype),
                     [(0, 0, 0)] * 2 + [(lo, hi, 0) for lo, hi in pads])
        summed = lax.reduce_window(xp, np.zeros((), x.dtype), lax.add, (1, 1) + k,
                                   (1, 1) + s, "VALID")
        # integer inputs divide with truncation (C++ integer division), keeping their dtype
        if jnp.issubdtype(x.dtype, jnp.integer):
            return lax.div(summed, jnp.broadcast_to(jnp.asarray(divisor, x.dtype), summed.shape))
        # (correctly rounded: XLA would multiply by the constant divisor's reciprocal)
        return _true_div(summed, jnp.asarray(divisor, x.dtype))

    result = _rounded_once(average, x) if x.dtype in (jnp.bfloat16, jnp.float16) else \
        average(x)
    return result if input.ndim == nd + 2 else result[0]


def _rounded_once(fn, x):
    """fn(x) for a half-precision x as PyTorch's CPU forward kernel computes it: in float32,
    rounded once; its tangent (so its gradient) is fn's own in x's type, as the backward
    kernel accumulates in the half type."""
    @jax.custom_jvp
    def f(x):
        return fn(x.astype(jnp.float32)).astype(x.dtype)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), jax.jvp(fn, primals, tangents)[1]

    return f(x)


@op(grad_fn="AvgPool2DBackward0", saves=("input",), **_POOL)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2)


@op(grad_fn="AvgPool3DBackward0", saves=("input",), **_POOL)
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3)


# ---- adaptive pooling -------------------------------------------------------------------

def _adaptive_windows(n, o):
    i = np.arange(o)
    return (i * n) // o, ((i + 1) * n + o - 1) // o


def _adaptive_sizes(x, output_size, nd):
    sizes = ntuple(output_size, nd) if not isinstance(output_size, (list, tuple)) else \
        tuple(output_size) * (nd if len(output_size) == 1 else 1)
    return tuple(n if o is None else int(o) for o, n in zip(sizes, x.shape[-nd:]))


# PyTorch's CPU kernel names for a dtype they lack (every non-floating one, complex too)
_ADAPTIVE_KERNELS = {("avg", 2): "adaptive_avg_pool2d", ("avg", 3): "adaptive_avg_pool3d_cpu",
                     ("max", 2): "adaptive_max_pool2d", ("max", 3): "adaptive_max_pool3d_cpu"}


def _floating_only(kernel, input):
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise not_implemented(kernel, input)


def _adaptive_avg(input, output_size, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_avg_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, "
                           f"but got {_sizes(input.shape)}")
    _floating_only(_ADAPTIVE_KERNELS["avg", nd], input)
    out = _adaptive_sizes(input, output_size, nd)
    x = input
    letters = "defgh"[:nd]
    spec = "..." + letters.upper()
    mats, counts = [], []
    for n, o, c in zip(x.shape[-nd:], out, letters):
        start, end = _adaptive_windows(n, o)
        m = (np.arange(n)[None, :] >= start[:, None]) & (np.arange(n)[None, :] < end[:, None])
        mats.append(jnp.asarray(m, x.dtype))
        counts.append(end - start)
    terms = ",".join(f"{c}{c.upper()}" for c in letters)
    summed = jnp.einsum(f"{spec},{terms}->...{letters}", x, *mats, precision=HIGHEST)
    for i, cnt in enumerate(counts):   # `sum / kh / kw`, as PyTorch's kernel divides
        shape = [1] * nd
        shape[i] = -1
        summed = summed / jnp.asarray(np.maximum(cnt, 1), x.dtype).reshape(shape)
    return summed


@op(grad_fn="AdaptiveAvgPool2DBackward0", saves=("input",), function=False, method=False,
    promote=P.NONE, tensors=("input",))
def _adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, output_size, 2)


@op(grad_fn="AdaptiveAvgPool3DBackward0", saves=("input",), function=False, method=False,
    promote=P.NONE, tensors=("input",))
def _adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, output_size, 3)


def _tiles(x, k, out):
    """(N, C, prod(k), *out) non-overlapping windows of x whose spatial size is out * k."""
    nd = len(k)
    tiled = x.reshape(x.shape[:2] + tuple(v for pair in zip(out, k) for v in pair))
    tiled = jnp.transpose(tiled, (0, 1) + tuple(3 + 2 * i for i in range(nd)) +
                          tuple(2 + 2 * i for i in range(nd)))
    return tiled.reshape(x.shape[:2] + (-1,) + tuple(out))


def _adaptive_patches(x, out):
    """(N, C, K, *out) windows of adaptive pooling and their flat input indices."""
    nd = len(out)
    spatial = x.shape[2:]
    # every window padded to the largest one by repeating its last element (a tie that the
    # first-maximum rule never picks)
    taps, kmax = [], []
    for n, o in zip(spatial, out):
        start, end = _adaptive_windows(n, o)
        km = int((end - start).max()) if o else 1
        taps.append(np.minimum(start[:, None] + np.arange(km)[None, :], end[:, None] - 1))
        kmax.append(km)
    g = x
    for i, t in enumerate(taps):   # gather (.., o_i, k_i, ..) along each spatial axis
        axis = 2 + 2 * i
        g = jnp.take(g, jnp.asarray(t.reshape(-1)), axis=axis)
        g = g.reshape(g.shape[:axis] + t.shape + g.shape[axis + 1:])
    patches = jnp.transpose(g, (0, 1) + tuple(2 + 2 * i for i in range(nd)) +
                            tuple(3 + 2 * i for i in range(nd)))
    patches = patches.reshape(x.shape[:2] + tuple(out) + (-1,))
    patches = jnp.moveaxis(patches, -1, 2)
    index = np.zeros(tuple(out) + tuple(kmax), np.int64)
    for i, t in enumerate(taps):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = t.shape
        index = index * spatial[i] + t.reshape(shape)
    index = np.moveaxis(index.reshape(tuple(out) + (-1,)), -1, 0)
    return patches, index


def _adaptive_max(input, output_size, return_indices, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, "
                           f"but got: {_sizes(input.shape)}")
    _floating_only(_ADAPTIVE_KERNELS["max", nd], input)
    out = _adaptive_sizes(input, output_size, nd)
    x = input if input.ndim == nd + 2 else input[None]
    spatial = x.shape[2:]
    if all(o > 0 and n % o == 0 for n, o in zip(spatial, out)):
        # equal windows tiling the input: a reshape, no gathers
        k = tuple(n // o for n, o in zip(spatial, out))
        patches = _tiles(x, k, out)
        index = _window_index(spatial, k, k, (0,) * nd, (1,) * nd, out)
    else:
        patches, index = _adaptive_patches(x, out)
    values, indices = _select_max(patches, index)
    if input.ndim == nd + 1:
        values, indices = values[0], indices[0]
    return (values, indices) if return_indices else values


@op(grad_fn="AdaptiveMaxPool2DBackward0", saves=("input", "result1"), **_POOL)
def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 2)


@op(grad_fn="AdaptiveMaxPool3DBackward0", saves=("input", "result1"), **_POOL)
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, return_indices, 3)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _unpool_scatter(x, idx, plane):
    """(N, C, L) values written at their flat (N, C, L) indices of (N, C, plane) zeros."""
    n, c = x.shape[:2]
    out = jnp.zeros((n, c, plane), x.dtype)
    return out.at[jnp.arange(n)[:, None, None], jnp.arange(c)[None, :, None], idx].set(
        x, mode="drop")


def _unpool_scatter_fwd(x, idx, plane):
    return _unpool_scatter(x, idx, plane), idx


def _unpool_scatter_bwd(plane, idx, g):
    # PyTorch's max_unpool backward gathers the output gradient at every index, so a value
    # that a repeated index overwrote still gets that position's gradient (the vjp of JAX's
    # scatter-set gives it zero)
    return jnp.take_along_axis(g, idx, axis=2, mode="fill", fill_value=0), None


_unpool_scatter.defvjp(_unpool_scatter_fwd, _unpool_scatter_bwd)


def _max_unpool(input, indices, output_size):
    nd = len(output_size)
    if indices.shape != input.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes(input.shape)}) but got indices tensor with shape: "
                           f"{_sizes(indices.shape)}")
    x = input if input.ndim == nd + 2 else input[None]
    idx = indices if indices.ndim == nd + 2 else indices[None]
    n, c = x.shape[:2]
    plane = int(np.prod(output_size))
    out = _unpool_scatter(x.reshape(n, c, -1), idx.reshape(n, c, -1), plane)
    out = out.reshape((n, c) + tuple(output_size))
    return out if input.ndim == nd + 2 else out[0]


def _unpool_check(compute, input, indices, output_size):
    """PyTorch's kernel refuses an index outside the output plane (a pooling's indices used
    with the wrong output_size); its loop runs on past a bad index and names the last one."""
    if not hasattr(indices, "_data") or indices.numel() == 0:
        return None
    plane = int(np.prod(output_size))
    arr = np.asarray(indices._data).reshape(-1)
    bad = (arr < 0) | (arr >= plane)
    if bad.any():
        return RuntimeError(f"Found an invalid max index: {int(arr[bad][-1])} (output volumes "
                            f"are of size {'x'.join(map(str, output_size))})")
    return None


@op(grad_fn="MaxUnpool2DBackward0", promote=P.NONE, function=False, method=False,
    tensors=("input", "indices"), saves=("indices",), check=_unpool_check)
def _max_unpool2d(input, indices, output_size):
    return _max_unpool(input, indices, output_size)


@op(grad_fn="MaxUnpool3DBackward0", promote=P.NONE, function=False, method=False,
    tensors=("input", "indices"), saves=("indices",), check=_unpool_check)
def _max_unpool3d(input, indices, output_size):
    return _max_unpool(input, indices, output_size)


# ---- normalisation ----------------------------------------------------------------------

def _channel_shape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


def _check_numel(name, t, c):
    if t is not None and t.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.size}")


def _check_mixed(input, *params):
    """PyTorch's CPU layer/group norm test for a mixed-type call: the first given parameter's
    dtype differs from the input's. Only float32 parameters with a bfloat16/float16 input
    (autocast's mix) may do so. Returns whether the call is mixed."""
    first = next((p.dtype for p in params if p is not None), None)
    if first is None or first == input.dtype:
        return False
    if any(p is not None and p.dtype != jnp.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (jnp.bfloat16, jnp.float16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def _check_kernel_dtypes(kernel, input, mixed, *params):
    """After the shape checks: PyTorch's norm kernels exist for floating inputs only, and an
    unmixed call's parameters must all have the input's dtype."""
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise not_implemented(kernel, input)
    for p in params:
        if not mixed and p is not None and p.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {legacy_name(input)} but found "
                               f"{legacy_name(p)}")


def _opmath(input):
    """PyTorch's CPU norm kernels compute a bfloat16/float16 input in float32 (whether its
    parameters are half or float32, the mix autocast produces) and round the output once."""
    return input.astype(jnp.float32) if input.dtype in (jnp.bfloat16, jnp.float16) else input


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 4, 5, 6))
def _normalized(forward, x, weight, bias, axes, stats, threads=None):
    """`forward(x, weight, bias)` -> (output, mean, rstd), the statistics over `axes` (kept),
    differentiated as PyTorch's norm backward kernels: from the statistics they saved, which
    are half-precision (`stats`) for a half input unless a parameter is float32. `threads`
    (a half layer norm's): the weight and bias gradients sum as its kernel's threads do."""
    return forward(x, weight, bias)[0]


@_normalized.defjvp
def _normalized_jvp(forward, axes, stats, threads, primals, tangents):
    (x, weight, bias), (tx, tw, tb) = primals, tangents
    out, mean, rstd = forward(x, weight, bias)
    if stats is not None:
        mean, rstd = (v.astype(stats).astype(v.dtype) for v in (mean, rstd))
    n = int(np.prod([x.shape[a] for a in axes]))
    v = x - mean
    # grad_input = rstd * (h - mean(h) - v * rstd^2 * mean(h * v)) for h = weight * grad: a
    # symmetric map of h, which JAX's transpose of this tangent applies
    t = rstd * tx - (rstd * rstd * rstd / n) * v * jnp.sum(tx * v, axes, keepdims=True) \
        - rstd / n * jnp.sum(tx, axes, keepdims=True)
    if threads is not None and stats is not None and (weight is not None or bias is not None):
        from .half_layer_norm import affine_tangents
        if weight is not None:
            t = t * weight
        rows = int(np.prod(x.shape[:axes[0]]))
        affine = affine_tangents(x.reshape(rows, n), mean.reshape(rows), rstd.reshape(rows),
                                 None if weight is None else tw, None if bias is None else tb,
                                 threads, stats)
        return out, t + affine.reshape(x.shape)
    if weight is not None:
        t = t * weight + v * rstd * tw
    if bias is not None:
        t = t + tb
    return out, t


def _saved_stats(dtype, *params):
    """The dtype PyTorch saves a norm's statistics in: a half input's own, unless a parameter
    is float32 (autocast's mix); None (unrounded) for other inputs."""
    if dtype not in (jnp.bfloat16, jnp.float16) or \
            any(p is not None and p.dtype == jnp.float32 for p in params):
        return None
    return dtype


def half_layer_stats(x, axes, eps, dtype, stats):
    """(mean, rstd) of a half layer norm over its trailing `axes` (kept) with the bits
    PyTorch's kernel gives: computed in float32 from `x`'s values as that kernel orders them,
    rounded to `stats` (the input's `dtype`) unless a float32 parameter keeps them float32."""
    from .half_layer_norm import layer_norm as half_layer_norm
    lead = x.shape[:axes[0]]
    n = int(np.prod(x.shape[axes[0]:]))
    mean, rstd = half_layer_norm(x.astype(jnp.float32).reshape(-1, n), None, None, eps,
                                 jnp.dtype(dtype).name)[1:]
    shape = lead + (1,) * len(axes)
    mean, rstd = mean.reshape(shape), rstd.reshape(shape)
    if stats is not None:
        mean, rstd = mean.astype(stats), rstd.astype(stats)
    return mean, rstd


def _saved_stat(which, axes_of):
    """`grad_fn._saved_result1` / `_result2` of a native batch or layer norm: the mean and
    the inverse standard deviation its forward saved (empty when it used running stats)."""
    def value(input=None, eps=1e-5, training=True, **statics):
        from .._tensor import _wrap
        if input is None:   # (freed by backward)
            from ..autograd.graph import _FREED_MSG
            raise RuntimeError(_FREED_MSG)
        x = _opmath(input)
        if not training:
            return _wrap(jnp.zeros((0,), x.dtype))
        axes, keepdims = axes_of(input, **statics)
        if axes_of is _layer_axes and input.dtype in (jnp.bfloat16, jnp.float16):
            stats = _saved_stats(input.dtype, statics.get("weight"), statics.get("bias"))
            return _wrap(half_layer_stats(input, axes, eps, input.dtype, stats)[which - 1])
        mean = jnp.mean(x, axis=axes, keepdims=keepdims)
        if which == 1:
            return _wrap(mean)
        var = jnp.mean(jnp.square(x - jnp.mean(x, axis=axes, keepdims=True)), axis=axes,
                       keepdims=keepdims)
        return _wrap(lax.rsqrt(var + eps))
    return value


def _batch_axes(input, **_):
    return (0,) + tuple(range(2, input.ndim)), False


def _layer_axes(input, normalized_shape, **_):
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return tuple(range(input.ndim - n, input.ndim)), True


@op(promote=P.NONE, grad_fn="NativeBatchNormBackward0", function=False, method=False,
    tensors=("input", "weight", "bias", "running_mean", "running_var", "momentum"),
    saves=("input", "weight"), non_differentiable=("running_mean", "running_var", "momentum"),
    optional_tensors=("weight", "bias"),
    saved_as={"result1": _saved_stat(1, _batch_axes), "result2": _saved_stat(2, _batch_axes)})
def _batch_norm(input, weight, bias, running_mean, running_var, momentum, training, eps,
                strided=False):
    """Returns the output and, when training with running stats, their updated values
    (`momentum * batch + (1 - momentum) * running`, the variance unbiased). `strided`: the
    input is neither contiguous nor channels-last (PyTorch's generic kernels then)."""
    # PyTorch counts no channels in a 0-d/1-d input for its size checks, then fails reading
    # its dim 1; it checks the running stats before the affine parameters
    c = input.shape[1] if input.ndim >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_numel(name, t, c)
    if input.ndim < 2:
        if not training and running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if not training and running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got 1)")
    shape = _channel_shape(input)
    axes = (0,) + tuple(range(2, input.ndim))
    out_dtype, input = input.dtype, _opmath(input)
    if training:
        mean = jnp.mean(input, axis=axes)
        var_sum = jnp.sum(jnp.square(input - mean.reshape(shape)), axis=axes)
        var = var_sum / (input.size // c)
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        mean, var = running_mean.astype(input.dtype), running_var.astype(input.dtype)
    invstd = lax.rsqrt(var + jnp.asarray(eps, var.dtype))
    # as PyTorch's CPU kernel: out = x * alpha + beta per channel
    alpha = invstd if weight is None else invstd * weight
    beta = -mean * alpha if bias is None else bias - mean * alpha
    out = input * alpha.reshape(shape) + beta.reshape(shape)
    stats = _saved_stats(out_dtype, weight, bias) if training else None
    if strided and out_dtype in (jnp.bfloat16, jnp.float16) and all(
            t is None or t.dtype == out_dtype for t in (weight, bias, running_mean, running_var)):
        from .half_grad import strided_batch_norm
        out = strided_batch_norm(input, *(None if t is None else t.reshape(shape) for t in (
            weight, bias, running_mean, running_var)), axes, bool(training), float(eps),
            out_dtype)
    # (PyTorch's bfloat16 invstd is not float32's rounded: an ulp off on some channels)
    elif stats == jnp.float16:
        out = _normalized(functools.partial(_batch_stats, axes, eps, stats), input,
                          *(None if t is None else t.reshape(shape) for t in (weight, bias)),
                          axes, stats)
    out = out.astype(out_dtype)
    if not training or running_mean is None and running_var is None:
        return out
    n = input.size // c
    m = momentum
    new_mean = new_var = None
    if running_mean is not None:
        new_mean = (m * mean + (1 - m) * running_mean).astype(running_mean.dtype)
    if running_var is not None:
        unbiased = var_sum / (n - 1) if n > 1 else var_sum * jnp.inf
        new_var = (m * unbiased + (1 - m) * running_var).astype(running_var.dtype)
    return out, new_mean if new_mean is not None else mean, \
        new_var if new_var is not None else var


def _batch_stats(axes, eps, stats, x, weight, bias):
    """Training batch norm's output and its statistics: PyTorch's kernel normalizes a half
    input by the statistics it saves, rounded to `stats`."""
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.sum(jnp.square(x - mean), axis=axes, keepdims=True) / (x.size // x.shape[1])
    invstd = lax.rsqrt(var + jnp.asarray(eps, var.dtype))
    mean, invstd = (v.astype(stats).astype(v.dtype) for v in (mean, invstd))
    alpha = invstd if weight is None else invstd * weight
    beta = -mean * alpha if bias is None else bias - mean * alpha
    return x * alpha + beta, mean, invstd


def _normalized_axes(input, normalized_shape, sep):
    shape = ntuple(normalized_shape, 1) if not isinstance(normalized_shape, (list, tuple)) \
        else tuple(normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{sep}{', '.join(map(str, shape))}], but got input of size"
                           f"{_sizes(input.shape)}")
    return tuple(range(input.ndim - k, input.ndim))


def _normalize_affine(axes, eps):
    """Layer/group norm's forward over `axes`: (out, mean, rstd), the statistics PyTorch saves."""
    def forward(x, weight, bias):
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
        rstd = lax.rsqrt(var + jnp.asarray(eps, var.dtype))
        out = (x - mean) * rstd
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
        return out, mean, rstd
    return forward


@op(promote=P.NONE, grad_fn="NativeLayerNormBackward0", nn=True, method=False,
    tensors=("input", "weight", "bias"), saves=("input", "weight", "bias"),
    saved_as={"result1": _saved_stat(1, _layer_axes), "result2": _saved_stat(2, _layer_axes)})
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    # (`cudnn_enable`: torch.layer_norm's, not F.layer_norm's; no cuDNN here)
    mixed = _check_mixed(input, weight, bias)   # (PyTorch's first check here)
    axes = _normalized_axes(input, normalized_shape, ", ")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.shape != input.shape[axes[0]:]:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_sizes(t.shape)} and normalized_shape = "
                               f"{_sizes(input.shape[axes[0]:])}")
    _check_kernel_dtypes("LayerNormKernelImpl", input, mixed, weight, bias)
    x, stats = _opmath(input), _saved_stats(input.dtype, weight, bias)
    if input.dtype in (jnp.bfloat16, jnp.float16):
        # PyTorch's CPU kernel's own order of operations, for the same bits (its compiled
        # size barely grows with the row: about a second to compile at any length)
        from .half_layer_norm import normalize_affine, rounded
        from .._functions import get_num_threads
        out = _normalized(normalize_affine(axes, eps, jnp.dtype(input.dtype).name), x, weight,
                          bias, axes, stats, get_num_threads())
        return rounded(out, input.dtype, int(np.prod(input.shape[axes[0]:])))
    forward = _normalize_affine(axes, eps)
    out = forward(x, weight, bias)[0] if stats is None else \
        _normalized(forward, x, weight, bias, axes, stats)
    return out.astype(input.dtype)


@op(promote=P.NONE, grad_fn="NativeGroupNormBackward0", method=False,
    tensors=("input", "weight", "bias"), saves=("input", "weight"))
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    # (`cudnn_enabled`: torch.group_norm's, not F.group_norm's; no cuDNN here)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[:2]
    g = int(num_groups)
    if c % g:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_sizes(input.shape)} and "
                           f"num_groups={g}")
    # PyTorch's bias message shows the weight's shape ([0] without a weight)
    weight_sizes = _sizes(weight.shape) if weight is not None else [0]
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {weight_sizes} and "
                               f"input of shape {_sizes(input.shape)}")
    _check_kernel_dtypes("GroupNormKernelImpl", input, _check_mixed(input, weight, bias),
                         weight, bias)
    # (n, groups, channels per group, elements per channel): statistics over the last two
    grouped = (n, g, c // g, -1)
    shape = (1, g, c // g, 1)

    forward = _normalize_affine((2, 3), eps)
    x = _opmath(input).reshape(grouped)
    weight, bias = (None if t is None else t.reshape(shape) for t in (weight, bias))
    stats = _saved_stats(input.dtype, weight, bias)
    out = forward(x, weight, bias)[0] if stats is None else \
        _normalized(forward, x, weight, bias, (2, 3), stats)
    return out.reshape(input.shape).astype(input.dtype)


@op(promote=P.NONE, grad_fn="MulBackward0", nn=True, method=False,
    tensors=("input", "weight"), saves=("input", "weight"))
def rms_norm(input, normalized_shape, weight=None, eps=None):
    axes = _normalized_axes(input, normalized_shape, "")
    if not jnp.issubdtype(input.dtype, jnp.inexact):   # (complex inputs have a kernel)
        raise not_implemented("rms_norm", input)
    x = _opmath(input)
    if eps is None:   # the op-math type's machine epsilon
        eps = float(jnp.finfo(x.dtype).eps)
    out = x * lax.rsqrt(jnp.mean(jnp.square(x), axis=axes, keepdims=True) +
                        jnp.asarray(eps, x.dtype))
    if weight is not None:
        out = out * weight
    return out.astype(input.dtype)


@op(promote=P.NONE, grad_fn="DivBackward0", function=False, method=False,
    tensors=("input",), saves=("input",))
def _local_response_norm(input, size, alpha, beta, k):
    sq = input * input
    window = (1, size) + (1,) * (input.ndim - 2)
    pads = [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (input.ndim - 2)
    summed = lax.reduce_window(sq, np.zeros((), sq.dtype), lax.add, window,
                               (1,) * input.ndim, pads)
    if jnp.issubdtype(sq.dtype, jnp.integer):  # PyTorch's integer avg_pool truncates
        div = lax.div(summed, jnp.asarray(size, sq.dtype))
    else:
        div = summed / jnp.asarray(size, sq.dtype)
    div = (div * alpha + k) ** beta
    return input / div



# ---- weight norm ----------------------------------------------------------------------------
# PyTorch's `_weight_norm` runs its fused kernel (node WeightNormInterfaceBackward0) when the
# norm is taken per slice of the first or the last dim; the `_weight_norm` wrapper in
# `_functions.py` takes the composite path for any other dim, as PyTorch does.

@op(promote=P.DEFAULT, grad_fn="WeightNormInterfaceBackward0", function=False, method=False,
    tensors=("v", "g"), saves=("v", "g"))
def _weight_norm_interface(v, g, dim):
    axes = tuple(d for d in range(v.ndim) if d != dim)
    norm = jnp.sqrt(jnp.sum(v * v, axis=axes, keepdims=True))
    return v * (g / norm)


@op(opmath=True, promote=P.NONE, grad_fn="NormBackward0", function=False, method=False,
    tensors=("input",), undefined_grad=lambda p, **_: p == 0)
def _norm_all(input, p):
    """ATen's `norm(Tensor, Scalar)` (which records NormBackward0, unlike Python's
    `Tensor.norm`): `norm_except_dim(v, p, -1)` calls it."""
    from .reduction import _vector_norm
    return _vector_norm(input, float(p), None, False)
