"""Pooling in `torch.nn.functional`. The 2-D/3-D ops come from the registry; the 1-D forms,
`*_with_indices`, adaptive average pooling, LP pooling, unpooling and fractional pooling's
arguments are written here the way PyTorch composes them (1-D pooling is 2-D pooling over an
unsqueezed height of 1, so its graph ends in SqueezeBackward1; adaptive average pooling to size
1 is a mean)."""
import sys

import torchish
from ... import _autocast
from ..._ops import nn_fractional_pool as _fmp
from ..._ops.argcheck import int_list
from ..._ops.errors import _entry_name, _keywords_of_call
from ..._ops.result_layout import in_suggested_format
from ...autograd import grad_mode
from ..._ops import nn_norm as _pool
from ..._ops.nn_conv import ntuple as _ntuple

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

max_pool2d = _pool.max_pool2d
max_pool3d = _pool.max_pool3d
avg_pool2d = _pool.avg_pool2d
avg_pool3d = _pool.avg_pool3d


def _int_lists(name, frame, **values):
    """PyTorch's parser's TypeError for the 1-D pools' `int[1]` arguments (kernel_size,
    stride, ...: positions 2 on) holding something other than ints; given by keyword in the
    call `frame` makes (None: never), a wrong first element names the sequence's type."""
    from ..._ops.errors import _keywords_of_call, _outside, int_list_error
    keywords = None
    for position, (param, value) in enumerate(values.items(), 2):
        seq = isinstance(value, (list, tuple))
        items = value if seq else (value,)
        bad = next((i for i, v in enumerate(items) if not hasattr(type(v), "__index__") or
                    (isinstance(v, bool) and not (seq and i))), None)
        if bad is None or value is None:
            continue
        if keywords is None:
            keywords = () if frame is None else _keywords_of_call(_outside(frame))
        where = "" if param in keywords else f" (position {position})"
        got = type(value) if not seq or (not where and not bad) else type(items[bad])
        raise int_list_error(name, param, got, bad if seq and (where or bad) else None, where)


def _one(value, name):
    v = _ntuple(value, 1)
    if len(v) != 1:
        raise RuntimeError(f"max_pool1d() {name} must be a single int, got {list(v)}")
    return v[0]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    # return_indices goes straight to max_pool2d (ATen's max_pool1d_with_indices, whose
    # errors are max_pool2d's); the values-only form checks first (ATen's max_pool1d)
    # (PyTorch's F.max_pool1d passes them on by position: no keyword form of the message)
    _int_lists("max_pool1d_with_indices" if return_indices else "max_pool1d",
               None, kernel_size=kernel_size, stride=stride, padding=padding,
               dilation=dilation)
    shape = tuple(input.shape)
    if not return_indices and not ((len(shape) == 2 and shape[0] and shape[1]) or (
            len(shape) == 3 and shape[1] and shape[2])):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(shape)}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    k = _one(kernel_size, "kernel_size")
    s = k if stride is None or stride == [] or stride == () else _one(stride, "stride")
    p, d = _one(padding, "padding"), _one(dilation, "dilation")
    if not return_indices:
        if k <= 0:
            raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
        if s <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
        if p < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
        if p > k // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, "
                               f"but got padding={p} and kernel_size={k}")
        if d <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
        ow = _pool.pool_output_size(shape[-1], k, p, s, d, ceil_mode)
        if ow <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {ow}")
        if not input.is_floating_point():
            raise NotImplementedError(f'"max_pool1d_impl" not implemented for '
                                      f"'{input.dtype._legacy}'")
    out = _pool.max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                           return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    out = out.squeeze(-2)
    if input.requires_grad and grad_mode.is_grad_enabled():   # (ATen's max_pool2d path)
        return out
    return out.contiguous()   # ATen's values-only kernel writes a contiguous result


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _int_lists("avg_pool1d", sys._getframe(1), kernel_size=kernel_size, stride=stride,
               padding=padding)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    k = _ntuple(kernel_size, 1)[0]
    s = k if stride is None or stride == [] or stride == () else _ntuple(stride, 1)[0]
    p = _ntuple(padding, 1)[0]
    out = _pool.avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                           count_include_pad)
    return out.squeeze(-2)


def _out1(output_size, name, named=False):
    """The output size PyTorch's `int[1]` parameter reads (its TypeError first); `named`:
    whether its binding is the one the user called (so a keyword changes its message)."""
    if output_size.__class__ is not int:
        keyword = named and "output_size" in _keywords_of_call(_entry_name()[1])
        output_size = int_list(name, "output_size", output_size, 2, keyword)
        if isinstance(output_size, tuple):
            if len(output_size) != 1:
                raise RuntimeError(f"{name}() argument 'output_size' should contain one int "
                                   f"(got {len(output_size)})")
            return output_size[0]
    return output_size


def adaptive_avg_pool1d(input, output_size):
    # (PyTorch binds this one directly: a keyword is seen)
    size = _out1(output_size, "adaptive_avg_pool1d", True)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' should have 2 or 3 "
                           f"dimensions, but got {list(input.shape)}")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


def _list_with_default(output_size, input):
    """torch.nn.modules.utils._list_with_default: None takes the input's size; an input with
    too few dimensions for the sizes is a ValueError."""
    if isinstance(output_size, int):   # (a bool too: the parser refuses it after)
        return output_size
    if input.ndim <= len(output_size):   # (anything else has a length, or the TypeError)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return [n if o is None else o for o, n in
            zip(output_size, input.shape[input.ndim - len(output_size):])]


def _adaptive_output(input, output_size, nd, name, avg):
    """The output size after F's _list_with_default and ATen's checks of it."""
    out = _list_with_default(output_size, input)
    if out.__class__ is not int and (out.__class__ is bool or any(
            o.__class__ is not int for o in out)):
        # (F calls the binding positionally; the avg ones' sizes are `SymInt[]`)
        out = int_list(name, "output_size", out, 2, symint=avg)
    if isinstance(out, int):
        out = (out,) * nd
    out = tuple(out)
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}" if avg else
                           f"{name}(): internal error: output_size.size() must be {nd}")
    if any(o < 0 for o in out):
        if avg:
            raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                               f"to 0 but received {{{', '.join(map(str, out))}}}")
        shape = list(input.shape[:-nd]) + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {shape}")
    return out


def adaptive_avg_pool2d(input, output_size):
    out = _adaptive_output(input, output_size, 2, "adaptive_avg_pool2d", True)
    if out == (1, 1):
        return in_suggested_format(input.mean((-1, -2), keepdim=True), input)
    return _pool._adaptive_avg_pool2d(input, out)


@_autocast.casts("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    out = _adaptive_output(input, output_size, 3, "adaptive_avg_pool3d", True)
    if out == (1, 1, 1):
        return in_suggested_format(input.mean((-1, -2, -3), keepdim=True), input)
    return _pool._adaptive_avg_pool3d(input, out)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    size = _out1(output_size, "adaptive_max_pool1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' should have 2 or 3 "
                           f"dimensions, but got {list(input.shape)}")
    out = adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _pool.adaptive_max_pool2d(
        input, _adaptive_output(input, output_size, 2, "adaptive_max_pool2d", False),
        return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _pool.adaptive_max_pool3d(
        input, _adaptive_output(input, output_size, 3, "adaptive_max_pool3d", False),
        return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, max_pool, avg_pool):
    k = _ntuple(kernel_size, nd)
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    area = 1
    for v in k:
        area *= v
    return (torchish.sign(out) * torchish.relu(torchish.abs(out))).mul(area).pow(
        1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, max_pool1d,
                    avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, max_pool2d,
                    avg_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, max_pool3d,
                    avg_pool3d)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    nd = len(kernel_size)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]   # (its message shows the sizes as passed, sliced)
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo = default[d] - stride[d]
        hi = default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')
    return list(output_size)


def _unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    k = _ntuple(kernel_size, nd)
    s = _ntuple(stride, nd) if stride is not None else k
    p = _ntuple(padding, nd)
    return _unpool_output_size(input, k, s, p, output_size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool(input, indices, kernel_size, stride, padding, output_size, 1)
    return _pool._max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1),
                               (size[0], 1)).squeeze(-1)


@_autocast.casts("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool(input, indices, kernel_size, stride, padding, output_size, 2)
    return _pool._max_unpool2d(input, indices, tuple(size))


@_autocast.casts("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    size = _unpool(input, indices, kernel_size, stride, padding, output_size, 3)
    return _pool._max_unpool3d(input, indices, tuple(size))


# ---- fractional max pooling ----------------------------------------------------------------

def _int_sizes(value, nd, name, param, position):
    """An IntArrayRef argument: an int repeats; a list keeps its length (checked by the op)."""
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    if isinstance(value, float):
        raise TypeError(f"{name}(): argument '{param}' (position {position}) must be tuple of "
                        f"ints, not float")
    return (int(value),) * nd


def _fractional(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:   # (PyTorch's len(): a float ratio is a TypeError)
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else \
            (output_ratio,) * nd
        output_size = [int(input.size(i - nd) * ratio[i]) for i in range(nd)]
    if _random_samples is None:
        # PyTorch draws the samples here, from the default generator, in the input's dtype
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        _random_samples = torchish.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype,
                                        device=input.device)
    op = _fmp.fractional_max_pool2d if nd == 2 else _fmp.fractional_max_pool3d
    return op(input, _int_sizes(kernel_size, nd, name, "kernel_size", 2),
              _int_sizes(output_size, nd, name, "output_size", 3), _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
