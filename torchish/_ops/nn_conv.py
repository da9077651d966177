"""Convolution ops: conv*, conv_transpose*, unfold/fold (im2col), pixel_shuffle/unshuffle,
channel_shuffle. The resampling ops (interpolate, grid_sample, affine_grid) are in resample.py.
"""
import itertools

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

from .._device import has_accelerator
from .. import _dtype as dt
from .. import _functions
from .. import _cpu_features
from .._tensor import Tensor
from .._warnings import warn_once
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


def _conv_types(x, weight, bias, transposed, nd, name, **params):
    """ATen's checks before the geometry ones: ranks and dtypes."""
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {_sizes(x.shape)}")
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if params.get("padding") == "same":   # ATen's same-padding path checks ranks first
        shape = x.shape if x.ndim == nd + 2 else (1,) + x.shape
        if weight.ndim != len(shape):
            raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                               f"dimensional weight{_sizes(weight.shape)}, but got "
                               f"{len(shape)}-dimensional input of size {_sizes(shape)} instead")
    for name, value in params.items():
        # (the binding repeats an int nd times; ATen then takes the rank from the weight)
        if isinstance(value, (list, tuple)) and len(value) not in (1, weight.ndim - 2):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of "
                               f"{weight.ndim - 2} values to match the convolution dimensions, "
                               f"but got {name}={list(value)}")
        if not isinstance(value, (list, tuple, str)) and nd not in (1, weight.ndim - 2):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of "
                               f"{weight.ndim - 2} values to match the convolution dimensions, "
                               f"but got {name}={[value] * nd}")
    if bias is not None and bias.dtype != x.dtype and not transposed:
        # ATen's convolution checks the bias first, in C++ type names
        raise RuntimeError(f"Input type ({_ctype(x)}) and bias type ({_ctype(bias)}) "
                           f"should be the same")


def _tensor_type(x):
    """ATen's `Tensor::toString()`: the legacy class name where the dtype has one."""
    d = dt.from_np(x.dtype)
    if d.is_complex or d.name in ("bool", "bfloat16"):
        return f"CPU{d._legacy}Type"
    return f"torch.{d._legacy}Tensor"


def _use_mkldnn(x, weight, stride, dilation, groups, transposed, output_padding=()):
    """ATen's choice of the oneDNN backend for a CPU convolution (its heuristic over the
    4-d views, a 1-d convolution seen as 2-d): only that backend checks the weight's dtype
    up front, with its own message, and only it rounds a bfloat16 transposed convolution once."""
    if transposed and any(o >= s for o, s in zip(output_padding, stride)):
        return False
    if x.dtype == jnp.bfloat16:
        # ATen always takes oneDNN for bfloat16 where oneDNN has bf16 kernels (AVX-512 core),
        # else the slow kernels; float16 needs AVX512-FP16
        return _cpu_features.onednn_bf16()
    if x.dtype != jnp.float32:
        return False
    xs, ws = x.shape, weight.shape
    if len(xs) == 3:
        xs, ws = xs[:2] + (1,) + xs[2:], ws[:2] + (1,) + ws[2:]
    strided, dilated = any(s != 1 for s in stride), any(d != 1 for d in dilation)
    return ((strided or dilated or xs[0] >= 16 or ws[-1] != 1 or ws[-2] != 1
             or _functions.multithreaded())
            and (groups > 1 or (ws[-1] > 3 and ws[-2] > 3) or xs[0] > 1
                 or xs[0] * xs[1] * xs[2] * xs[3] > 20480))


def _check_weight_type(x, weight, bias, mkldnn):
    """The dtype checks ATen makes after the shape ones: oneDNN's, else the slow kernels'
    (which take a transposed convolution's bias in another dtype)."""
    if mkldnn:
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and t.dtype != x.dtype:
                raise RuntimeError(f"Input type ({_tensor_type(x)}) and {name} type "
                                   f"({_tensor_type(t)}) should be the same or input should "
                                   f"be a MKLDNN tensor and {name} is a dense tensor")
    elif x.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {_legacy(x)} but found {_legacy(weight)}")


def _conv_shapes(x, weight, bias, groups, transposed, nd):
    """ATen's check_shape_forward after the geometry checks: weight, groups, channels, bias."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    k = nd + 2
    if weight.ndim != k:
        shape = x.shape if x.ndim == k else (1,) + x.shape
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {_sizes(weight.shape)}, but got {k}-dimensional "
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


def _biased(x, w, bias, nd, *args, opmath=True, **kwargs):
    """The convolution plus bias. PyTorch's CPU kernels (oneDNN, or im2col + addmm) accumulate
    a half-precision (bfloat16, float16) convolution in float32, add the bias there and round
    once; JAX would round the convolution, then the sum. (Its transposed convolutions round
    the gemm's columns, their col2im sums and the bias addition each, except on oneDNN:
    `opmath=False` keeps two of those roundings, the nearer approximation.)"""
    dtype = x.dtype
    if opmath and dtype in (jnp.bfloat16, jnp.float16):
        x, w = x.astype(jnp.float32), w.astype(jnp.float32)
        bias = None if bias is None else bias.astype(jnp.float32)
    out = _xla_conv(x, w, *args, **kwargs)
    if bias is not None:
        out = out + bias.reshape((-1,) + (1,) * nd)
    return out.astype(dtype)


def _conv(input, weight, bias, stride, padding, dilation, groups, nd):
    _conv_types(input, weight, bias, False, nd, f"conv{nd}d", stride=stride, padding=padding,
                dilation=dilation)
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
    if x.shape[0] and x.shape[1]:  # (ATen's empty-input path checks no dtypes)
        _check_weight_type(x, weight, None, _use_mkldnn(x, weight, stride, dilation, groups,
                                                         False))
    out = _biased(x, weight.astype(x.dtype), bias, nd, stride, pads, rhs_dilation=dilation,
                  feature_group_count=groups)
    return out if input.ndim == nd + 2 else out[0]


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd):
    _conv_types(input, weight, bias, True, nd, f"conv_transpose{nd}d", stride=stride,
                padding=padding, output_padding=output_padding, dilation=dilation)
    x = input if input.ndim == nd + 2 else input[None]
    stride, padding = ntuple(stride, nd), ntuple(padding, nd)
    output_padding, dilation = ntuple(output_padding, nd), ntuple(dilation, nd)
    _check_geometry(stride, dilation, padding)
    _conv_shapes(input, weight, bias, groups, True, nd)
    if any(op_ >= s and op_ >= d for op_, s, d in zip(output_padding, stride, dilation)):
        # ATen runs a 1-d transposed conv as a 2-d one over a unit height: it reports that
        # height too (output padding 0, stride and dilation 1)
        if nd == 1:
            output_padding, stride, dilation = ((0,) + output_padding, (1,) + stride,
                                                (1,) + dilation)
        names = ("depth", "height", "width")[3 - max(nd, 2):]
        parts = ([f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                 + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                 + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    kernel = weight.shape[2:]
    out_sizes = [(n - 1) * s - 2 * p + d * (k - 1) + 1 + o for n, s, p, d, k, o in
                 zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
    mkldnn = x.shape[0] and x.shape[1] and _use_mkldnn(x, weight, stride, dilation, groups,
                                                       True, output_padding)
    if mkldnn:  # (oneDNN checks dtypes before the output size; the slow kernels after)
        _check_weight_type(x, weight, bias, True)
    if any(o < 1 for o in out_sizes):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))})"
                           f". Calculated output size per channel: "
                           f"({' x '.join(map(str, out_sizes))}). Output size is too small")
    if x.shape[0] and x.shape[1] and not mkldnn:
        _check_weight_type(x, weight, bias, False)
    weight = weight.astype(x.dtype)
    bias = None if bias is None else bias.astype(x.dtype)
    cin, cout_g = weight.shape[0], weight.shape[1]
    # (Cin, Cout/g, *k) -> (Cout, Cin/g, *k), spatially flipped: the transposed convolution
    # is the forward one over the stride-dilated input.
    w = weight.reshape((groups, cin // groups, cout_g) + kernel)
    w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + kernel)
    w = jnp.flip(w, axis=tuple(range(2, nd + 2)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + o)
            for d, k, p, o in zip(dilation, kernel, padding, output_padding)]
    if not mkldnn and x.dtype in (jnp.bfloat16, jnp.float16):
        out = _slow_half_conv_transpose(x, weight, bias, stride, padding, dilation, groups,
                                        out_sizes)
    else:
        out = _biased(x, w, bias, nd, (1,) * nd, pads, lhs_dilation=stride,
                      rhs_dilation=dilation, feature_group_count=groups, opmath=bool(mkldnn))
    return out if input.ndim == nd + 2 else out[0]


def _slow_half_conv_transpose(x, weight, bias, stride, padding, dilation, groups, out_sizes):
    """ATen's slow transposed convolution of a float16/bfloat16 input, with its roundings:
    a gemm (float32 sums, rounded once) gives each kernel tap's columns, col2im adds the taps
    into the output one by one in the half type (tap order), then the bias is added, rounded."""
    nd = len(stride)
    info = jnp.finfo(x.dtype)

    def r(v):   # an explicit rounding XLA cannot fuse away
        return lax.reduce_precision(v, exponent_bits=info.nexp, mantissa_bits=info.nmant)
    n, cin = x.shape[:2]
    cout_g, kernel = weight.shape[1], weight.shape[2:]
    xg = x.astype(jnp.float32).reshape((n, groups, cin // groups) + x.shape[2:])
    wg = weight.astype(jnp.float32).reshape((groups, cin // groups, cout_g) + kernel)
    # columns (N, G, Cout/g, *kernel, *Lin)
    cols = r(jnp.einsum(xg, [0, 1, 2] + list(range(3, 3 + nd)),
                        wg, [1, 2, 3 + nd] + list(range(4 + nd, 4 + 2 * nd)),
                        [0, 1, 3 + nd] + list(range(4 + nd, 4 + 2 * nd))
                        + list(range(3, 3 + nd)), precision=HIGHEST))
    cols = cols.reshape((n, groups * cout_g) + kernel + x.shape[2:])
    out = jnp.zeros((n, groups * cout_g) + tuple(out_sizes), jnp.float32)
    zero = jnp.zeros((), jnp.float32)
    for tap in itertools.product(*[range(k) for k in kernel]):
        col = cols[(slice(None), slice(None)) + tap]
        # input position l lands on output l * stride + tap * dilation - padding
        config = [(0, 0, 0), (0, 0, 0)]
        for d in range(nd):
            low = tap[d] * dilation[d] - padding[d]
            span = (x.shape[2 + d] - 1) * stride[d] + 1
            config.append((low, out_sizes[d] - span - low, stride[d] - 1))
        out = r(out + lax.pad(col, zero, config))
    if bias is not None:
        out = r(out + bias.astype(jnp.float32).reshape((-1,) + (1,) * nd))
    return out.astype(x.dtype)


_CONV = dict(promote=P.NONE, grad_fn="ConvolutionBackward0", method=False,
             tensors=("input", "weight", "bias"), saves=("input", "weight"))


def _conv_saved(nd, transposed):
    """`_saved_transposed` and a convolution's `_saved_output_padding` (zeros, one per dim)."""
    saved = {"transposed": lambda **_: transposed}
    if not transposed:
        saved["output_padding"] = lambda **_: (0,) * nd
    return saved


def _same_padding_warning(compute, input, weight, bias, stride, padding, dilation, groups):
    """PyTorch warns (once) when 'same' padding needs an odd total, padded on the right."""
    if isinstance(padding, str) and padding == "same" and isinstance(weight, Tensor):
        kernel = weight.shape[2:]
        if any(d * (k - 1) % 2 for d, k in zip(ntuple(dilation, len(kernel)), kernel)):
            warn_once("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created")


@op(**_CONV, check=_same_padding_warning, saved_as=_conv_saved(1, False))
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@op(**_CONV, check=_same_padding_warning, saved_as=_conv_saved(2, False))
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@op(**_CONV, check=_same_padding_warning, saved_as=_conv_saved(3, False))
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


@op(**_CONV, saved_as=_conv_saved(1, True))
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


@op(**_CONV, saved_as=_conv_saved(2, True))
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


@op(**_CONV, saved_as=_conv_saved(3, True))
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


def _two(value, name):
    """An im2col/col2im size: ATen takes exactly 2 (F.unfold's `_pair` repeats only a scalar;
    a 1-element list stays one element)."""
    if isinstance(value, (list, tuple)) and len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return ntuple(value, 2)


def _im2col_args(kernel_size, dilation, padding, stride):
    return (_two(kernel_size, "kernel_size"), _two(dilation, "dilation"),
            _two(padding, "padding"), _two(stride, "stride"))


def _positive(what, names, values, strict=True):
    if any(v <= 0 if strict else v < 0 for v in values):
        raise RuntimeError(f"{what}, but got {names[0]}: {values[0]} {names[1]}: {values[1]}")


def _check_kernel(k):
    _positive("kernel size should be greater than zero", ("kernel_height", "kernel_width"), k)


def _check_dilation(d):
    _positive("dilation should be greater than zero", ("dilation_height", "dilation_width"), d)


def _check_padding(p):
    _positive("padding should be non-negative", ("pad_height", "pad_width"), p, strict=False)


def _check_stride(s):
    _positive("stride should be greater than zero", ("stride_height", "stride_width"), s)


def _size(shape, d):
    """shape[d] with PyTorch's `Tensor.size(d)` errors: its shape checks read sizes before
    checking the number of dims."""
    n = len(shape)
    if n == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return shape[d]


@op(promote=P.NONE, grad_fn="Im2ColBackward0", function=False, method=False,
    tensors=("input",), saves=())
def _unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    # im2col_shape_check's order: kernel, dilation, padding, stride, then the input's dims
    k, d, p, s = _im2col_args(kernel_size, dilation, padding, stride)
    _check_kernel(k)
    _check_dilation(d)
    _check_padding(p)
    _check_stride(s)
    shape = input.shape
    valid = _size(shape, 1) != 0 and _size(shape, 2) != 0
    if not (input.ndim == 3 and shape[0] and valid or input.ndim == 4 and valid and shape[3]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{_sizes(input.shape)}")
    x = input if input.ndim == 4 else input[None]
    blocks = [(n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1
              for n, p_, d_, k_, s_ in zip(x.shape[2:], p, d, k, s)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, "
                           f"kernel_size={k}, dilation={d}, padding={p}, calculated shape of "
                           f"the array of sliding blocks as {tuple(blocks)}, but its "
                           f"components must be at least one.")
    _im2col_dtype("im2col_out_cpu", x)
    out = _im2col(x, k, d, p, s)
    return out if input.ndim == 4 else out[0]


def _im2col_dtype(kernel, x):
    """im2col/col2im's CPU kernels take floating, complex and bool tensors, no integers."""
    if jnp.issubdtype(x.dtype, jnp.integer):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(x)}\'')


@op(promote=P.NONE, grad_fn="Col2ImBackward0", function=False, method=False,
    tensors=("input",), saves=())
def _fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    # col2im_shape_check's order: kernel, stride, dilation, padding, then the input's dims
    o = _two(output_size, "output_size")
    k, d, p, s = _im2col_args(kernel_size, dilation, padding, stride)
    _check_kernel(k)
    _check_stride(s)
    _check_dilation(d)
    _check_padding(p)
    shape = input.shape
    if not (input.ndim == 2 and shape[0] and shape[1] or input.ndim == 3 and shape[1] and
            shape[2]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_sizes(input.shape)}")
    x = input if input.ndim == 3 else input[None]
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}.")
    blocks = [(n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1
              for n, p_, d_, k_, s_ in zip(o, p, d, k, s)]
    where = f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, "
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"{where}expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{where}calculated shape of the array of sliding blocks as "
                           f"{tuple(blocks)}, which is too small (non-positive)")
    if min(o) < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: "
                           f"output_size={o}")
    _im2col_dtype("col2im_out_cpu", x)
    # col2im is the transpose of im2col (overlapping blocks add up; bools add as `or`)
    cols = x.astype(jnp.int32) if x.dtype == jnp.bool_ else x
    image = jax.ShapeDtypeStruct((x.shape[0], x.shape[1] // kk) + o, cols.dtype)
    (out,) = jax.linear_transpose(lambda im: _im2col(im, k, d, p, s), image)(cols)
    out = out > 0 if x.dtype == jnp.bool_ else out
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
