"""Convolution and spatial-resampling ops: conv*, conv_transpose*, unfold/fold (im2col),
pixel_shuffle/unshuffle, channel_shuffle, upsampling (interpolate), grid_sample, affine_grid.

Index tables and interpolation weights depend only on shapes and static arguments, so they are
computed with NumPy while the op is traced, in the same floating-point type and order as
PyTorch's CPU kernels (ATen's UpSample.h) so that every sampled position matches exactly.
"""
import itertools

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

from .._device import has_accelerator
from .. import _dtype as dt
from .creation import _fma32, _fma64
from .registry import Promote, op

P = Promote
HIGHEST = lax.Precision.HIGHEST


def ntuple(value, n):
    """PyTorch's `_ntuple`: an int (or 1-element list) repeated n times, else n ints."""
    if isinstance(value, (list, tuple)):
        value = tuple(int(v) for v in value)
        if len(value) == 1:
            return value * n
        if len(value) != n:
            raise RuntimeError(f"expected a single int or {n} ints, but got {list(value)}")
        return value
    return (int(value),) * n


def _legacy(x):
    return dt.from_np(x.dtype)._legacy


def _sizes(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def window_slices(x, kernel, stride, dilation, out):
    """Stack the strided views of `x` (N, C, *spatial; already padded) for every kernel offset:
    (N, C, prod(kernel), *out), offsets in row-major order as PyTorch scans a window."""
    views = []
    for offs in itertools.product(*[range(k) for k in kernel]):
        start = (0, 0) + tuple(o * d for o, d in zip(offs, dilation))
        limit = x.shape[:2] + tuple(st + (n - 1) * s + 1
                                    for st, n, s in zip(start[2:], out, stride))
        views.append(lax.slice(x, start, limit, (1, 1) + tuple(stride)))
    return jnp.stack(views, axis=2)


# ---- convolution ------------------------------------------------------------------------

_CTYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
           "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
           "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
           "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _ctype(x):
    return _CTYPES.get(str(x.dtype), str(x.dtype))


def _conv_types(x, weight, bias, transposed, nd, name):
    """ATen's checks before the geometry ones: ranks and dtypes."""
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {_sizes(x.shape)}")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_legacy(x)} but found {_legacy(weight)}")
    if bias is not None and bias.dtype != x.dtype:
        if not transposed:  # ATen's convolution checks the bias in C++ type names
            raise RuntimeError(f"Input type ({_ctype(x)}) and bias type ({_ctype(bias)}) "
                               f"should be the same")
        raise RuntimeError(f"expected scalar type {_legacy(x)} but found {_legacy(bias)}")


def _conv_shapes(x, weight, bias, groups, transposed, nd):
    """ATen's check_shape_forward after the geometry checks: weight, groups, channels, bias."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    k = nd + 2
    if weight.ndim != k:
        shape = x.shape if x.ndim == k else (1,) + x.shape
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight{_sizes(weight.shape)}, but got {k}-dimensional "
                           f"input of size {_sizes(shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_sizes(weight.shape)} instead")
    channels = x.shape[-nd - 1]
    if not transposed:
        if weight.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{_sizes(weight.shape)}] instead")
        if weight.shape[1] * groups != channels:
            shape = x.shape if x.ndim == nd + 2 else (1,) + x.shape
            raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(weight.shape)}, "
                               f"expected input{_sizes(shape)} to have "
                               f"{weight.shape[1] * groups} channels, but got {channels} "
                               f"channels instead")
        out_channels = weight.shape[0]
    else:
        if weight.shape[0] != channels:
            shape = x.shape if x.ndim == nd + 2 else (1,) + x.shape
            raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, "
                               f"expected input{_sizes(shape)} to have {weight.shape[0]} "
                               f"channels, but got {channels} channels instead")
        out_channels = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {_sizes(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{_sizes(bias.shape)} instead")


def _check_geometry(stride, dilation, padding):
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _xla_conv(x, w, *args, **kwargs):
    """XLA's convolution; integer ones in float64 where a GPU is (cuDNN has none), exact
    while the sums stay below 2**53."""
    if jnp.issubdtype(x.dtype, jnp.integer) and has_accelerator():
        f64 = lax.conv_general_dilated(x.astype(jnp.float64), w.astype(jnp.float64), *args,
                                       precision=HIGHEST, **kwargs)
        return f64.astype(x.dtype)
    return lax.conv_general_dilated(x, w, *args, precision=HIGHEST, **kwargs)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    _conv_types(input, weight, bias, False, nd, f"conv{nd}d")
    x = input if input.ndim == nd + 2 else input[None]
    stride, dilation = ntuple(stride, nd), ntuple(dilation, nd)
    kernel = weight.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # PyTorch puts the odd element of the total padding on the right
            pads = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                    for d, k in zip(dilation, kernel)]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = [(p, p) for p in ntuple(padding, nd)]
    _check_geometry(stride, dilation, [p for p, _ in pads])
    _conv_shapes(input, weight, bias, groups, False, nd)
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    if any(n < d * (k - 1) + 1 for n, d, k in zip(padded, dilation, kernel)):
        sep = " x "
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({sep.join(map(str, padded))}). Kernel size: "
                           f"({sep.join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))})"
                           f". Kernel size can't be greater than actual input size")
    out = _xla_conv(x, weight, stride, pads, rhs_dilation=dilation, feature_group_count=groups)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out if input.ndim == nd + 2 else out[0]


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd):
    _conv_types(input, weight, bias, True, nd, f"conv_transpose{nd}d")
    x = input if input.ndim == nd + 2 else input[None]
    stride, padding = ntuple(stride, nd), ntuple(padding, nd)
    output_padding, dilation = ntuple(output_padding, nd), ntuple(dilation, nd)
    _check_geometry(stride, dilation, padding)
    _conv_shapes(input, weight, bias, groups, True, nd)
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[3 - nd:] if nd > 1 else ("width",)
        parts = ([f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                 + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                 + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    kernel = weight.shape[2:]
    out_sizes = [(n - 1) * s - 2 * p + d * (k - 1) + 1 + o for n, s, p, d, k, o in
                 zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
    if any(o < 1 for o in out_sizes):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})"
                           f". Calculated output size per channel: "
                           f"({' x '.join(map(str, out_sizes))}). Output size is too small")
    cin, cout_g = weight.shape[0], weight.shape[1]
    # (Cin, Cout/g, *k) -> (Cout, Cin/g, *k), spatially flipped: the transposed convolution
    # is the forward one over the stride-dilated input.
    w = weight.reshape((groups, cin // groups, cout_g) + kernel)
    w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + kernel)
    w = jnp.flip(w, axis=tuple(range(2, nd + 2)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + o)
            for d, k, p, o in zip(dilation, kernel, padding, output_padding)]
    out = _xla_conv(x, w, (1,) * nd, pads, lhs_dilation=stride, rhs_dilation=dilation,
                    feature_group_count=groups)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out if input.ndim == nd + 2 else out[0]


_CONV = dict(promote=P.NONE, grad_fn="ConvolutionBackward0", method=False,
             tensors=("input", "weight", "bias"), saves=("input", "weight"))


@op(**_CONV)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@op(**_CONV)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@op(**_CONV)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


@op(**_CONV)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


@op(**_CONV)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


@op(**_CONV)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


# ---- im2col -----------------------------------------------------------------------------

def _im2col(x, kernel, dilation, padding, stride):
    lo = [(0, 0, 0)] * 2 + [(p, p, 0) for p in padding]
    xp = lax.pad(x, jnp.zeros((), x.dtype), lo)
    out = [(n + 2 * p - d * (k - 1) - 1) // s + 1
           for n, p, d, k, s in zip(x.shape[2:], padding, dilation, kernel, stride)]
    cols = window_slices(xp, kernel, stride, dilation, out)
    # no -1: an empty batch leaves nothing to infer it from
    return cols.reshape(x.shape[0], x.shape[1] * int(np.prod(kernel)), int(np.prod(out)))


def _im2col_args(kernel_size, dilation, padding, stride):
    return (ntuple(kernel_size, 2), ntuple(dilation, 2), ntuple(padding, 2),
            ntuple(stride, 2))


@op(promote=P.NONE, grad_fn="Im2ColBackward0", function=False, method=False,
    tensors=("input",), saves=())
def _unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = _im2col_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or input.size == 0 and input.ndim == 4 and input.shape[1] == 0:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possible 0 "
                           f"batch size and non-zero dimensions, but got: {_sizes(input.shape)}")
    x = input if input.ndim == 4 else input[None]
    blocks = [(n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1
              for n, p_, d_, k_, s_ in zip(x.shape[2:], p, d, k, s)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, "
                           f"kernel_size={k}, dilation={d}, padding={p}, calculated shape of "
                           f"the array of sliding blocks as {tuple(blocks)}, but its "
                           f"components must be at least one.")
    out = _im2col(x, k, d, p, s)
    return out if input.ndim == 4 else out[0]


@op(promote=P.NONE, grad_fn="Col2ImBackward0", function=False, method=False,
    tensors=("input",), saves=())
def _fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    o = ntuple(output_size, 2)
    k, d, p, s = _im2col_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possible 0 "
                           f"batch size and non-zero dimensions, but got: {_sizes(input.shape)}")
    x = input if input.ndim == 3 else input[None]
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}")
    blocks = [(n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1
              for n, p_, d_, k_, s_ in zip(o, p, d, k, s)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    # col2im is the transpose of im2col (overlapping blocks add up)
    image = jax.ShapeDtypeStruct((x.shape[0], x.shape[1] // kk) + o, x.dtype)
    (out,) = jax.linear_transpose(lambda im: _im2col(im, k, d, p, s), image)(x)
    return out if input.ndim == 3 else out[0]


# ---- channel rearrangements -------------------------------------------------------------

@op(promote=P.NONE, grad_fn="PixelShuffleBackward0", nn=True, method=False,
    tensors=("input",), saves=())
def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    x = jnp.transpose(x, tuple(range(n)) + tuple(n + i for i in (0, 3, 1, 4, 2)))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


@op(promote=P.NONE, grad_fn="PixelUnshuffleBackward0", nn=True, method=False,
    tensors=("input",), saves=())
def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    for name, size, i in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({i})={size} is not divisible "
                               f"by {r}")
    n = len(lead)
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = jnp.transpose(x, tuple(range(n)) + tuple(n + i for i in (0, 2, 4, 1, 3)))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


@op(promote=P.NONE, grad_fn="ChannelShuffleBackward0", nn=True, method=False,
    tensors=("input",), saves=(), aliases=("native_channel_shuffle",))
def channel_shuffle(input, groups):
    g = int(groups)
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with sizes {_sizes(input.shape)}")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{g}")
    n, c = input.shape[:2]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    x = input.reshape((n, g, c // g) + input.shape[2:])
    return jnp.swapaxes(x, 1, 2).reshape(input.shape)


# ---- upsampling -------------------------------------------------------------------------

def _opmath(x):
    return np.float64 if x.dtype == np.float64 else np.float32


def _scales_value(scale, n_in, n_out, ft):
    # compute_scales_value: the user's scale (as 1/scale) when given, else in/out
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _area_scale(n_in, n_out, align_corners, scale, ft):
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return _scales_value(scale, n_in, n_out, ft)


def _source_index(ratio, n_out, align_corners, cubic, ft):
    dst = np.arange(n_out)
    if align_corners:
        return ratio * dst.astype(ft)
    # `scale * (dst + 0.5) - 0.5` is evaluated in double, then stored in the op-math type
    src = (np.float64(ratio) * (dst + 0.5) - 0.5).astype(ft)
    return src if cubic else np.maximum(src, ft(0))


def _nearest_index(n_in, n_out, scale, exact):
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    s = _scales_value(scale, n_in, n_out, np.float32)
    if exact:
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_taps(n_in, n_out, scale, align_corners, ft):
    if n_in == n_out:
        idx = np.arange(n_out)
        return [idx, idx], [np.ones(n_out, ft), np.zeros(n_out, ft)]
    ratio = _area_scale(n_in, n_out, align_corners, scale, ft)
    real = _source_index(ratio, n_out, align_corners, False, ft)
    i0 = np.minimum(real.astype(np.int64), n_in - 1)
    i1 = i0 + (i0 < n_in - 1)
    l1 = np.clip(real - i0.astype(ft), ft(0), ft(1)).astype(ft)
    return [i0, i1], [(ft(1) - l1).astype(ft), l1]


def _cubic_coeffs(t, ft):
    a = ft(-0.75)

    def cc1(x):
        return ((a + ft(2)) * x - (a + ft(3))) * x * x + ft(1)

    def cc2(x):
        return ((a * x - ft(5) * a) * x + ft(8) * a) * x - ft(4) * a
    t = t.astype(ft)
    return [cc2(t + ft(1)), cc1(t), cc1(ft(1) - t), cc2(ft(1) - t + ft(1))]


def _cubic_taps(n_in, n_out, scale, align_corners, ft):
    ratio = _area_scale(n_in, n_out, align_corners, scale, ft)
    real = _source_index(ratio, n_out, align_corners, True, ft)
    base = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lam = np.clip(real - base.astype(ft), ft(0), ft(1)).astype(ft)
    idx = [np.clip(base - 1 + j, 0, n_in - 1) for j in range(4)]
    return idx, _cubic_coeffs(lam, ft)


def _interp_axis(x, axis, idx, weights):
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for i, w in zip(idx, weights):
        term = jnp.take(x, jnp.asarray(i), axis=axis) * jnp.asarray(w, x.dtype).reshape(shape)
        out = term if out is None else out + term
    return out


_UPSAMPLE_NAMES = {("nearest", 1): "UpsampleNearest1DBackward0",
                   ("nearest", 2): "UpsampleNearest2DBackward0",
                   ("nearest", 3): "UpsampleNearest3DBackward0",
                   ("nearest-exact", 1): "UpsampleNearestExact1DBackward0",
                   ("nearest-exact", 2): "UpsampleNearestExact2DBackward0",
                   ("nearest-exact", 3): "UpsampleNearestExact3DBackward0",
                   ("linear", 1): "UpsampleLinear1DBackward0",
                   ("bilinear", 2): "UpsampleBilinear2DBackward0",
                   ("bicubic", 2): "UpsampleBicubic2DBackward0",
                   ("trilinear", 3): "UpsampleTrilinear3DBackward0"}


def _upsample_name(kinds, statics):
    return _UPSAMPLE_NAMES[(statics["mode"], len(statics["output_size"]))]


@op(promote=P.NONE, grad_fn=_upsample_name, function=False, method=False,
    tensors=("input",), saves=())
def _upsample(input, output_size, scales, mode, align_corners):
    """upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d: output_size is final,
    `scales` the user's scale factors (or None) as PyTorch passes them to its kernels."""
    nd = len(output_size)
    in_sizes = input.shape[2:]
    if any(n <= 0 for n in in_sizes) or any(n <= 0 for n in output_size):
        names = ("D", "H", "W")[3 - nd:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input (" +
            ", ".join(f"{a}: {b}" for a, b in zip(names, in_sizes)) + ") output (" +
            ", ".join(f"{a}: {b}" for a, b in zip(names, output_size)) + ")")
    scales = scales if scales is not None else (None,) * nd
    x = input
    ft = _opmath(input)
    # the innermost dimension first, matching the nesting of PyTorch's interpolation loops
    for d in reversed(range(nd)):
        axis = 2 + d
        n_in, n_out, s = in_sizes[d], output_size[d], scales[d]
        if mode in ("nearest", "nearest-exact"):
            x = jnp.take(x, jnp.asarray(_nearest_index(n_in, n_out, s,
                                                       mode == "nearest-exact")), axis=axis)
        elif mode == "bicubic":
            x = _interp_axis(x, axis, *_cubic_taps(n_in, n_out, s, align_corners, ft))
        else:
            x = _interp_axis(x, axis, *_linear_taps(n_in, n_out, s, align_corners, ft))
    return x


# ---- grid_sample, affine_grid -----------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = jnp.abs(x - low)
    extra = jnp.fmod(x, span)
    flips = jnp.floor(x / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + low, span - extra + low)


def _pad_coord(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return jnp.clip(coord, 0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return jnp.clip(coord, 0, size - 1)
    return coord


def _gather_taps(flat, sizes, taps):
    """Values of `flat` (N, C, prod(sizes)) at integer coordinates `taps` (one array per
    input dimension, each (T, N, *out): T taps per output point) in one gather:
    (T, N, C, *out), zero where a tap falls outside the input."""
    valid = index = None
    for c, n in zip(taps, sizes):
        ok = (c >= 0) & (c < n)
        valid = ok if valid is None else valid & ok
        c = jnp.clip(c, 0, n - 1)
        index = c if index is None else index * n + c
    t, n = index.shape[:2]
    flat_index = jnp.moveaxis(index.reshape(t, n, -1), 0, 1).reshape(n, 1, -1)
    vals = jnp.take_along_axis(flat, flat_index, axis=2)
    vals = jnp.moveaxis(vals.reshape(n, flat.shape[1], t, -1), 2, 0)
    vals = vals.reshape((t,) + flat.shape[:2] + index.shape[2:])
    return jnp.where(valid[:, :, None], vals, jnp.zeros((), flat.dtype))


def _weighted_sum(vals, weights):
    """sum_t vals[t] * weights[t] (weights (T, N, *out)), added in tap order as PyTorch."""
    out = None
    for t in range(vals.shape[0]):
        term = vals[t] * weights[t][:, None]
        out = term if out is None else out + term
    return out


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    nd = input.ndim - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last "
                           f"dimension, but got grid with sizes {_sizes(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size,"
                           f" but got input with sizes {_sizes(input.shape)} and grid with "
                           f"sizes {_sizes(grid.shape)}")
    sizes = input.shape[2:]
    flat = input.reshape(input.shape[:2] + (-1,))
    # grid's last axis lists x (width) first: reverse to match the input's axis order
    raw = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    mode = interpolation_mode
    if mode == "bicubic":
        if nd != 2:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        # 4 x 4 taps around floor(coord), each padded on its own (PyTorch's
        # get_value_bounded); interpolated along x within each row, then along y
        base = [jnp.floor(c) for c in raw]
        cy, cx = [_cubic_coeffs_jnp(c - b) for c, b in zip(raw, base)]
        offs = jnp.arange(-1, 3, dtype=base[0].dtype).reshape((4,) + (1,) * base[0].ndim)
        ty = _pad_coord(base[0][None] + offs, sizes[0], padding_mode, align_corners)
        tx = _pad_coord(base[1][None] + offs, sizes[1], padding_mode, align_corners)
        ty = jnp.repeat(ty, 4, axis=0).astype(jnp.int64)
        tx = jnp.tile(tx, (4,) + (1,) * base[1].ndim).astype(jnp.int64)
        vals = _gather_taps(flat, sizes, [ty, tx])
        vals = vals.reshape((4, 4) + vals.shape[1:])
        rows = jnp.stack([_weighted_sum(vals[i], jnp.stack(cx)) for i in range(4)])
        return _weighted_sum(rows, jnp.stack(cy))
    coords = [_pad_coord(c, n, padding_mode, align_corners) for c, n in zip(raw, sizes)]
    if mode == "nearest":
        taps = [jnp.round(c).astype(jnp.int64)[None] for c in coords]
        return _gather_taps(flat, sizes, taps)[0]
    lows = [jnp.floor(c) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    corners = list(itertools.product((0, 1), repeat=nd))   # nw, ne, sw, se in 2-D
    taps = [jnp.stack([lows[d].astype(jnp.int64) + c[d] for c in corners])
            for d in range(nd)]
    weights = []
    for c in corners:
        w = None
        for d, bit in enumerate(c):
            wd = fracs[d] if bit else 1 - fracs[d]
            w = wd if w is None else w * wd
        weights.append(w)
    return _weighted_sum(_gather_taps(flat, sizes, taps), jnp.stack(weights))


_GRID = dict(promote=P.NONE, function=False, method=False, tensors=("input", "grid"))


@op(grad_fn="GridSampler2DBackward0", **_GRID)
def _grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


@op(grad_fn="GridSampler3DBackward0", **_GRID)
def _grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


def _cubic_coeffs_jnp(t):
    a = -0.75

    def cc1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def cc2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [cc2(t + 1), cc1(t), cc1(1 - t), cc2(1 - t + 1)]


def _linspace_neg_one(n, align_corners, ft):
    # at::linspace(-1, 1, n) fills from both ends with fused multiply-adds (as torch.linspace:
    # the middle point of an odd n is 1 - step*k rounded once, not 0); then scaled by (n - 1) / n
    if n <= 1:
        return np.zeros(1, ft)
    w, fma = (np.float64, _fma64) if ft == np.float64 else (np.float32, _fma32)
    step = (w(1) - w(-1)) / w(n - 1)
    i = np.arange(n)
    k = np.where(i < n // 2, i, n - 1 - i).astype(w)
    r = np.where(i < n // 2, fma(step, k, w(-1)), fma(-step, k, w(1))).astype(ft)
    if not align_corners:
        r = (r * ft(n - 1) / ft(n)).astype(ft)
    return r


@jax.custom_jvp
def _rounded(x):
    """`x` as a separate kernel leaves it: XLA drops an optimization_barrier and folds `x ^ 0`,
    but not an xor with a zero it cannot prove, so a later add cannot be contracted with the
    op that made `x` (all-NaN `x` flips a NaN's low bit: still NaN). Its derivative is 1."""
    itype = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}[x.dtype.itemsize]
    hidden_zero = jnp.all(jnp.isnan(x)).astype(itype)
    return lax.bitcast_convert_type(lax.bitcast_convert_type(x, itype) ^ hidden_zero, x.dtype)


@_rounded.defjvp
def _rounded_jvp(primals, tangents):
    return _rounded(primals[0]), tangents[0]


@op(promote=P.NONE, grad_fn="AffineGridGeneratorBackward0", function=False, method=False,
    tensors=("theta",), saves=())
def _affine_grid(theta, size, align_corners):
    ft = theta.dtype.type if theta.dtype != jnp.bfloat16 else np.float32
    spatial = size[2:]
    axes = [_linspace_neg_one(n, align_corners, ft) for n in spatial]
    mesh = list(np.meshgrid(*axes, indexing="ij"))       # z, y, x order
    base = np.stack(mesh[::-1] + [np.ones_like(mesh[0])], axis=-1)
    base = jnp.asarray(base.reshape(-1, len(spatial) + 1), theta.dtype)
    # base @ theta^T as PyTorch's bmm computes it for so short a K: the products, each rounded,
    # added in k order. A dot, or the FMAs LLVM contracts `a * b + c` into, round otherwise and
    # move a point that lands on a half pixel to the other neighbour in grid_sample's nearest
    # mode.
    terms = _rounded(base[None, :, None, :] * theta[:, None, :, :])
    grid = terms[..., 0]
    for k in range(1, base.shape[1]):
        grid = grid + terms[..., k]
    return grid.reshape((size[0],) + tuple(spatial) + (len(spatial),))
