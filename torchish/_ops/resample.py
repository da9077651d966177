"""Spatial-resampling ops: upsampling (interpolate: nearest, linear, cubic, antialiased and
uint8 kernels), grid_sample, affine_grid.

Index tables and interpolation weights depend only on shapes and static arguments, so they are
computed with NumPy while the op is traced, in the same floating-point type and order as
PyTorch's CPU kernels (ATen's UpSample.h) so that every sampled position matches exactly.
"""
import functools
import itertools
import math
import operator

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

from .creation_ranges import _fma32, _fma64
from .nn_conv import _sizes
from .pointwise import not_implemented
from .registry import Promote, op

P = Promote


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


# the CPU kernel (or its helper) PyTorch names when it lacks a dtype: floating types only, and
# uint8 for all but (tri)linear
_UPSAMPLE_KERNELS = {("nearest", 1): "compute_indices_weights_nearest",
                     ("nearest-exact", 1): "compute_indices_weights_nearest",
                     ("linear", 1): "compute_indices_weights_linear",
                     ("nearest", 2): "upsample_nearest2d_channels_last",
                     ("nearest-exact", 2): "upsample_nearest2d_channels_last",
                     ("bilinear", 2): "upsample_bilinear2d_channels_last",
                     ("bicubic", 2): "compute_indices_weights_cubic",
                     ("nearest", 3): "compute_indices_weights_nearest",
                     ("nearest-exact", 3): "compute_indices_weights_nearest",
                     ("trilinear", 3): "compute_indices_weights_linear"}


def _upsample_dtype_check(input, mode, nd):
    if jnp.issubdtype(input.dtype, jnp.floating):
        return
    if input.dtype == jnp.uint8 and mode not in ("linear", "trilinear"):
        return
    raise not_implemented(_UPSAMPLE_KERNELS[mode, nd], input)


def _upsample_name(kinds, statics):
    return _UPSAMPLE_NAMES[(statics["mode"], len(statics["output_size"]))]


def _saved_scale(name, dims):
    """`grad_fn._saved_<name>` of an upsampling in `dims` dimensions: its scale factor (None
    when given a size); other nodes have no such field."""
    def saved(scales, output_size, mode, **_):
        nd = len(output_size)
        if nd not in dims:
            raise AttributeError(f"'{_UPSAMPLE_NAMES[mode, nd]}' object has no attribute "
                                 f"'_saved_{name}'")
        return None if scales is None else scales[dims[nd]]
    return saved


_SAVED_SCALES = {"scales": _saved_scale("scales", {1: 0}),
                 "scales_d": _saved_scale("scales_d", {3: 0}),
                 "scales_h": _saved_scale("scales_h", {2: 0, 3: 1}),
                 "scales_w": _saved_scale("scales_w", {2: 1, 3: 2})}


@op(promote=P.NONE, grad_fn=_upsample_name, function=False, method=False,
    tensors=("input",), saves=(), saved_as=_SAVED_SCALES)
def _upsample(input, output_size, scales, mode, align_corners):
    """upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d: output_size is final,
    `scales` the user's scale factors (or None) as PyTorch passes them to its kernels."""
    nd = len(output_size)
    _upsample_dtype_check(input, mode, nd)
    in_sizes = input.shape[2:]
    if any(n <= 0 for n in in_sizes) or any(n <= 0 for n in output_size):
        names = ("D", "H", "W")[3 - nd:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input (" +
            ", ".join(f"{a}: {b}" for a, b in zip(names, in_sizes)) + ") output (" +
            ", ".join(f"{a}: {b}" for a, b in zip(names, output_size)) + ")")
    if input.dtype == jnp.uint8 and mode in ("bilinear", "bicubic"):
        return _resample_uint8(input, output_size, scales, mode, align_corners, False)
    scales = scales if scales is not None else (None,) * nd
    ft = _opmath(input)
    # a half input is interpolated in float32 (ATen's opmath) and rounded once at the end
    x = input.astype(ft) if input.dtype in (jnp.float16, jnp.bfloat16) else input
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
    return x.astype(input.dtype)


def _aa_filter(mode, x, a=-0.5):
    x = abs(x)
    if mode == "bilinear":
        return max(0.0, 1.0 - x)
    # antialiased bicubic uses Keys' a=-0.5 (as PIL), the plain kernel uses -0.75
    if x < 1.0:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2.0:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def _aa_weights(in_size, out_size, scale_factor, mode, align_corners, antialias=True):
    """(out, in) resampling matrix of ATen's separable kernels (antialiased, and uint8 without
    antialias): a triangle/cubic filter, stretched by the downscale factor with antialias,
    each row normalised to sum to one."""
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    elif scale_factor is not None and scale_factor > 0:
        scale = 1.0 / scale_factor
    else:
        scale = in_size / out_size
    half = 1.0 if mode == "bilinear" else 2.0
    stretch = antialias and scale >= 1.0
    support = half * scale if stretch else half
    max_size = int(math.ceil(support)) * 2 + 1 if antialias else int(2 * half)
    invscale = 1.0 / scale if stretch else 1.0
    delta = 0.5 if align_corners and not antialias else 0.0
    rows = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5 - delta)
        lo = max(int(center - support + 0.5 + delta), 0)
        hi = lo + min(max(min(int(center + support + 0.5 + delta), in_size) - lo, 0), max_size)
        w = [_aa_filter(mode, (j - center + 0.5 - delta) * invscale) for j in range(lo, hi)]
        total = sum(w)
        for j, v in zip(range(lo, hi), w):
            rows[i, j] = v / total if total != 0.0 else v
    return rows


def _cubic_clamped_weights(in_size, out_size, scale_factor, align_corners):
    """(out, in) plain bicubic (a=-0.75) as a matrix, taps past a border on the border pixel."""
    ratio = _area_scale(in_size, out_size, align_corners, scale_factor, np.float64)
    rows = np.zeros((out_size, in_size))
    for i in range(out_size):
        real = ratio * i if align_corners else ratio * (i + 0.5) - 0.5
        base = math.floor(real)
        t = real - base
        for k, x in enumerate((t + 1, t, 1 - t, 2 - t)):
            rows[i, min(max(base - 1 + k, 0), in_size - 1)] += _aa_filter("bicubic", x, -0.75)
    return rows


def _resample_uint8(input, output_size, scales, mode, align_corners, antialias):
    """ATen's uint8 bilinear/bicubic: separable (width, then height, each pass rounded to
    uint8) with the weights in int16 fixed point, as its CPU kernels compute them."""
    out = input
    for axis in (3, 2):
        size_in, size_out = input.shape[axis], output_size[axis - 2]
        if size_in == size_out:
            continue
        scale = None if scales is None else scales[axis - 2]
        if mode == "bicubic" and not antialias:
            w = _cubic_clamped_weights(size_in, size_out, scale, align_corners)
        else:
            w = _aa_weights(size_in, size_out, scale, mode, align_corners, antialias)
        # the most bits that keep the largest weight (doubled) inside an int16
        precision = 0
        while precision < 22 and int(0.5 + w.max() * (1 << (precision + 1))) < (1 << 15):
            precision += 1
        v = w * (1 << precision)
        q = jnp.asarray(np.trunc(np.where(v < 0, v - 0.5, v + 0.5)), jnp.int32)
        acc = jnp.moveaxis(jnp.tensordot(jnp.moveaxis(out.astype(jnp.int32), axis, -1), q.T,
                                         axes=1), -1, axis)
        out = jnp.clip((acc + (1 << (precision - 1))) >> precision, 0, 255).astype(jnp.uint8)
    return out


@op(promote=P.NONE, function=False, method=False, tensors=("input",), saves=(),
    grad_fn=lambda kinds, statics: {"bilinear": "UpsampleBilinear2DAaBackward0",
                                    "bicubic": "UpsampleBicubic2DAaBackward0"}[statics["mode"]])
def _upsample_aa(input, output_size, scales, mode, align_corners):
    """_upsample_{bilinear,bicubic}2d_aa: separable, width first, then height, as ATen's CPU
    kernel; a dim keeping its size is left alone."""
    if input.dtype == jnp.uint8:
        return _resample_uint8(input, output_size, scales, mode, align_corners, True)
    out = input
    for axis, eq in ((3, "nchw,Ww->nchW"), (2, "nchw,Hh->ncHw")):
        size_in, size_out = input.shape[axis], output_size[axis - 2]
        if size_in == size_out:
            continue
        scale = None if scales is None else scales[axis - 2]
        w = jnp.asarray(_aa_weights(size_in, size_out, scale, mode, align_corners), input.dtype)
        out = jnp.einsum(eq, out, w)
    return out


# ---- grid_sample, affine_grid -----------------------------------------------------------

def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    """The coordinate mirrored into [low, high] and the sign of its derivative."""
    if twice_low == twice_high:
        return jnp.zeros_like(x), jnp.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = x - low
    extra = jnp.fmod(jnp.abs(d), span)
    odd = jnp.fmod(jnp.floor(jnp.abs(d) / span), 2) != 0
    return jnp.where(odd, span - extra + low, extra + low), \
        jnp.where((d < 0) != odd, -1, 1).astype(x.dtype)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _padded(coord, size, reflect_low, reflect_high):
    """A source coordinate clipped to [0, size - 1] (after mirroring into
    [reflect_low / 2, reflect_high / 2] unless those are None)."""
    if reflect_low is not None:
        coord = _reflect(coord, reflect_low, reflect_high)[0]
    return jnp.clip(coord, 0, size - 1)


@_padded.defjvp
def _padded_jvp(size, reflect_low, reflect_high, primals, tangents):
    # PyTorch's clip_coordinates_set_grad counts the borders themselves as out of bounds: a
    # coordinate at 0 or size - 1 gets no gradient (jnp.clip would pass it on); mirroring
    # flips the gradient's sign. The CPU kernel multiplies by that factor, a +0 outside (so a
    # zero gradient takes the sign of the incoming one; `where` would add +0 to it)
    (coord,), (t,) = primals, tangents
    sign = jnp.ones_like(coord)
    if reflect_low is not None:
        coord, sign = _reflect(coord, reflect_low, reflect_high)
    inside = (coord > 0) & (coord < size - 1)
    factor = jnp.where(inside, sign, jnp.zeros_like(sign)).astype(t.dtype)
    return jnp.clip(coord, 0, size - 1), t * factor


def _pad_coord(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return _padded(coord, size, None, None)
    if padding_mode == "reflection":
        if align_corners:
            return _padded(coord, size, 0, 2 * (size - 1))
        return _padded(coord, size, -1, 2 * size - 1)
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
    points = math.prod(index.shape[2:])   # (explicit sizes: an empty batch has no -1)
    flat_index = jnp.moveaxis(index.reshape(t, n, points), 0, 1).reshape(n, 1, t * points)
    vals = jnp.take_along_axis(flat, flat_index, axis=2)
    vals = jnp.moveaxis(vals.reshape(n, flat.shape[1], t, points), 2, 0)
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
    flat = input.reshape(input.shape[:2] + (math.prod(sizes),))
    # grid's last axis lists x (width) first: reverse to match the input's axis order
    # (split, not indexing: its transpose concatenates, where indexing's adds zeros, which
    # would turn the -0 gradient PyTorch gives a point on a border into +0)
    parts = [p[..., 0] for p in jnp.split(grid, nd, axis=-1)]
    raw = [_unnormalize(parts[nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
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
    if padding_mode != "zeros":
        # a NaN coordinate (or an infinite one, mirrored) survives the clip as NaN: the 2-D
        # kernel's vector max sends it to 0, the 3-D kernel's std::min to the last index
        coords = [jnp.where(jnp.isnan(c), 0 if nd == 2 else n - 1, c)
                  for c, n in zip(coords, sizes)]
    if mode == "nearest":
        taps = [_tap_index(jnp.round(c))[None] for c in coords]
        return _gather_taps(flat, sizes, taps)[0]
    lows = [jnp.floor(c) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    corners = list(itertools.product((0, 1), repeat=nd))   # nw, ne, sw, se in 2-D
    taps = [jnp.stack([_tap_index(lows[d]) + c[d] for c in corners]) for d in range(nd)]
    weights = []
    for c in corners:
        w = None
        for d, bit in enumerate(c):
            wd = fracs[d] if bit else 1 - fracs[d]
            w = wd if w is None else w * wd
        weights.append(w)
    weights = jnp.stack(weights)
    if nd == 3:
        # the 3-D kernel skips a corner outside the input, so its (NaN) weight adds nothing;
        # the 2-D kernel multiplies by a zero mask, which keeps a NaN
        inside = functools.reduce(operator.and_,
                                  [(t >= 0) & (t < n) for t, n in zip(taps, sizes)])
        weights = jnp.where(inside, weights, jnp.zeros((), weights.dtype))
    return _weighted_sum(_gather_taps(flat, sizes, taps), weights)


def _tap_index(coord):
    """An integral coordinate as an index; a non-finite one (x86's conversion gives INT_MIN)
    far outside the input, where XLA's conversion would give 0 or a saturated value."""
    return jnp.where(jnp.isfinite(coord), coord.astype(jnp.int64), -2 ** 40)


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
