"""Writes through a region of a tensor, as copies: the `*_scatter` ops (a view's elements
replaced by `src`, out of place), `narrow_copy`, `put`/`put_`, `index_reduce`,
`fill_diagonal_` and `segment_reduce` (a reduction per run of consecutive rows)."""
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._warnings import warn_once
from .gather_scatter import _dim, _scatter_reduce, index_source_check, index_vector_check
from .errors import scalar_overflow
from .pointwise import legacy_name
from .registry import Promote, op
from .shape import _diag_step, _narrow_step, _select_step

P = Promote


def _check_src(src, region_shape):
    if tuple(src.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(region_shape)}")


def _at(ndim, d, item):
    return (slice(None),) * d + (item,) + (slice(None),) * (ndim - d - 1)


@op(promote=P.NONE, grad_fn="SelectScatterBackward0", saves=(), tensors=("input", "src"))
def select_scatter(input, src, dim, index):
    _, d, i = _select_step(input.shape, dim, index)
    key = _at(input.ndim, d, i)
    _check_src(src, input[key].shape)
    return input.at[key].set(src.astype(input.dtype))


@op(promote=P.NONE, grad_fn="SliceScatterBackward0", saves=())
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = _dim(dim, input.ndim)
    key = _at(input.ndim, d, slice(start, end, step))
    _check_src(src, input[key].shape)
    return input.at[key].set(src.astype(input.dtype))


def _diagonal_positions(shape, offset, d1, d2):
    """(row indices, column indices) of the `offset` diagonal over dims d1, d2."""
    rows, cols = shape[d1], shape[d2]
    n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = np.arange(n)
    return i + max(-offset, 0), i + max(offset, 0)


@op(promote=P.NONE, grad_fn="DiagonalScatterBackward0", saves=())
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    _, _, d1, d2 = _diag_step(input.ndim, offset, dim1, dim2)
    r, c = _diagonal_positions(input.shape, offset, d1, d2)
    moved = jnp.moveaxis(input, (d1, d2), (-2, -1))
    _check_src(src, moved.shape[:-2] + (len(r),))
    moved = moved.at[..., r, c].set(src.astype(input.dtype))
    return jnp.moveaxis(moved, (-2, -1), (d1, d2))


@op(promote=P.NONE, grad_fn="NarrowCopyBackward0", saves=())
def narrow_copy(input, dim, start, length):
    if input.ndim and dim >= input.ndim:  # PyTorch's kernel checks this before wrapping the dim
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.")
    if length < 0 and input.ndim:  # the copy kernel words this as an overrun
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({input.shape[_dim(dim, input.ndim)]}).")
    _, d, a, b, _ = _narrow_step(input.shape, dim, start, length)
    return input[_at(input.ndim, d, slice(a, b))]


# ---- put / index_reduce: value-dependent index errors come from `check` ------------------

def _put_check(compute, input, index, source, accumulate=False):
    n = input.numel()
    bad = (index < -n) | (index >= n) if index.numel() else None
    if bad is not None and bool(bad.any()):
        v = int(index[bad].reshape(-1)[0].item())
        return IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                          "elements.")
    return None


@op(promote=P.NONE, grad_fn="PutBackward0", inplace=True, saves=("index",), check=_put_check)
def put(input, index, source, accumulate=False):
    if index.dtype != jnp.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{legacy_name(index)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {legacy_name(input)} and source.dtype = "
                           f"{legacy_name(source)}")
    if index.size != source.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.size}, index.numel() = "
                         f"{index.size}")
    flat = input.reshape(-1)
    idx = index.reshape(-1)
    idx = jnp.where(idx < 0, idx + flat.size, idx)
    ref = flat.at[idx]
    src = source.reshape(-1)
    out = (ref.max(src) if src.dtype == jnp.bool_ else ref.add(src)) if accumulate else \
        ref.set(src)
    return out.reshape(input.shape)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def _index_reduce_check(compute, input, index, source, *, dim, reduce, include_self=True):
    if reduce in _INDEX_REDUCE:
        warn_once("index_reduce() is in beta and the API may change at any time.")
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if index.dtype.is_floating_point or index.dtype.is_complex:
        return None   # index_reduce raises PyTorch's dtype error
    if index.numel() and bool(((index < -n) | (index >= n)).any()):
        return IndexError("index out of range in self")
    return None


@op(promote=P.NONE, grad_fn="IndexReduceBackward0", inplace=True,
    saves=("input", "index", "source", "result"),
    check=_index_reduce_check)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    index_vector_check("index_reduce_", index)
    d = _dim(dim, input.ndim)
    index_source_check("index_reduce_", input, d, index, source)
    if input.ndim == 0:
        return _scatter_reduce(input, 0, index.reshape(-1), source.reshape(-1), reduce,
                               include_self)
    # index_reduce is scatter_reduce with the index repeated across source's other dims
    shape = [1] * source.ndim
    shape[d] = -1
    full = jnp.broadcast_to(index.reshape(shape), source.shape)
    return _scatter_reduce(input, d, full, source, reduce, include_self)


# ---- fill_diagonal_ ------------------------------------------------------------------------

def _diagonal_flat(shape, wrap):
    """Flat positions of the main diagonal (continuing below it for a tall matrix and wrap)."""
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1]
    step = int(strides.sum())
    n = min(shape)
    end = int(np.prod(shape)) if wrap and len(shape) == 2 else n * step if n else 0
    return np.arange(0, min(end, int(np.prod(shape))), step)


@op(promote=P.NONE, grad_fn="torch::autograd::CopySlices", saves=(), function=False,
    method=False, inplace=True, inplace_grad_fn="torch::autograd::CopySlices",
    check=lambda compute, input, fill_value, wrap=False: scalar_overflow(fill_value, input.dtype))
def _fill_diagonal(input, fill_value, wrap=False):
    pos = _diagonal_flat(input.shape, wrap)
    value = jnp.asarray(fill_value).astype(input.dtype)
    return input.reshape(-1).at[pos].set(value).reshape(input.shape)


def fill_diagonal_(self, fill_value, wrap=False):
    return Tensor._fill_diagonal_(self, fill_value, wrap)


Tensor.fill_diagonal_ = fill_diagonal_

# ---- segment_reduce ------------------------------------------------------------------------

_ENFORCE = "  (Could this error message be improved?  If so, please report an enhancement " \
           "request to PyTorch.)"
_SEGMENT_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "max": "max", "amax": "max",
                   "min": "min", "amin": "min"}


def _segment_check(compute, data, offsets, *, reduce, axis, initial, is_lengths, unsafe):
    bounds = np.asarray(offsets.tolist(), dtype=np.int64)
    if not is_lengths:
        if bounds.size and bool((np.diff(bounds, axis=-1) < 0).any()):
            return RuntimeError("Expected segment_length >= 0 to be true, but got false." +
                                _ENFORCE)
        return None
    if bool((bounds < 0).any()):
        return RuntimeError("lengths contains negative value!")
    if not unsafe and bool((bounds.sum(axis=-1) != data.shape[axis]).any()):
        return RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                            "to data.size(lengths.dim()-1) when !unsafe.")
    return None


@op(promote=P.NONE, grad_fn="SegmentReduceBackward0", function=False, method=False,
    saves=("data", "result"), check=_segment_check)
def _segment_reduce(data, offsets, *, reduce, axis, initial, is_lengths, unsafe):
    offsets = offsets.astype(jnp.int64)
    if is_lengths:
        ends = jnp.cumsum(offsets, axis=-1)
        starts = ends - offsets
    else:
        starts, ends = offsets[..., :-1], offsets[..., 1:]
    pos = jnp.arange(data.shape[axis])
    rest = (1,) * (data.ndim - axis - 1)
    # member[..., s, p, (1...)]: position p along `axis` lies in segment s
    member = ((pos >= starts[..., None]) & (pos < ends[..., None])).reshape(
        starts.shape + (-1,) + rest)
    values = jnp.expand_dims(data, axis)
    counts = (ends - starts).reshape(starts.shape + rest)
    start = None if initial is None else jnp.asarray(initial, data.dtype)
    if reduce in ("max", "min"):
        fill = -jnp.inf if reduce == "max" else jnp.inf
        pick = jnp.max if reduce == "max" else jnp.min
        out = pick(jnp.where(member, values, fill), axis=axis + 1)
        if start is not None:   # a tie with `initial` leaves the gradient to the data
            out = jnp.where(out >= start if reduce == "max" else out <= start, out, start)
        return out
    if reduce == "prod":
        out = jnp.prod(jnp.where(member, values, 1), axis=axis + 1)
        return out if start is None else out * start
    out = jnp.sum(jnp.where(member, values, 0), axis=axis + 1)
    if start is not None:
        out = out + start
    if reduce == "sum":
        return out
    return out / counts if start is None else jnp.where(counts == 0, start, out / counts)


def _not_implemented(kernel, t):
    return NotImplementedError(f'"{kernel}" not implemented for \'{t.dtype._legacy}\'')


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    if reduce not in _SEGMENT_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if offsets is None and lengths is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    bounds = lengths if offsets is None else offsets
    kernel = "lengths" if offsets is None else "offsets"
    if bounds.dtype.is_floating_point or bounds.dtype.is_complex:
        raise _not_implemented(f"_segment_reduce_{kernel}_cpu_kernel1", bounds)
    if not data.dtype.is_floating_point:
        raise _not_implemented("_segment_reduce_cpu", data)
    if bounds.ndim > data.ndim:
        raise RuntimeError(f"Expected data.dim() >= {kernel}_value.dim() to be true, but got "
                           f"false." + _ENFORCE)
    axis = _dim(axis, data.ndim)
    if axis != bounds.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{kernel} but got {axis}.")
    return _segment_reduce(data, bounds, reduce=_SEGMENT_REDUCE[reduce], axis=axis,
                           initial=initial, is_lengths=offsets is None, unsafe=unsafe)


PLAIN = ["segment_reduce"]
