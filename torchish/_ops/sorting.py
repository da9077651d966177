"""Sorting, selection and counting: sort/argsort/topk/kthvalue, median/nanmedian/mode,
searchsorted/bucketize/histc as ops; unique/unique_consecutive/bincount on the host (their
output shapes depend on the values, as PyTorch's do: PyTorch also syncs for them).

Ties: the jitted ops sort stably (NaN as the largest value, as in PyTorch). PyTorch's CPU
kernels leave equal elements where libstdc++'s algorithms put them: `sort(stable=False)`,
`argsort` and `msort` (std::sort: the stable order for rows of up to 16), `topk`
(std::partial_sort, or std::nth_element then std::sort; with `sorted=False` its order is
nth_element's even without ties), `kthvalue` (PyTorch's quickselect). In eager mode on the
CPU, `_with_fix` checks on the host whether ties (or `sorted=False`) make that order matter and,
only then, replays PyTorch's algorithm (`libstdcxx_sort`) and gathers along its indices (so
the gradient follows them). It leaves the stable order inside a trace (`torchish.compile`,
`jax.jit`, `vmap`), off the CPU (PyTorch's CUDA order differs anyway), and where the rows to
replay hold more than `_REPLAY_LIMIT` elements (a Python replay would take seconds).
`median`/`nanmedian` order ties by index, as here; an all-NaN row's `nanmedian` index is
nth_element's, which depends only on the row's length (so it is exact under a trace too).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .composite import composite, rebind
from .registry import Promote, given, omitted, op
from . import libstdcxx_sort as libstdcxx
from .libstdcxx_sort import mode_indices
from .pointwise import _reject
from .reduction import axis1, check_nonempty
from .return_types import RETURN_TYPES

P = Promote


def _keys(x, descending):
    """lax.sort keys giving PyTorch's order (NaN largest) for ascending or descending."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nan = jnp.isnan(x)
        if descending:
            return [~nan, -jnp.where(nan, 0, x)]
        return [nan, jnp.where(nan, 0, x)]
    if descending:  # ~x reverses the order of every integer (and bool) without overflow
        return [~x]
    return [x]


def _no_complex_sort(name, x):
    # (PyTorch's message starts with a space)
    if jnp.iscomplexobj(x):
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")


def sort_indices(x, axis, descending):
    """Stable sorting permutation of `x` along `axis` (int64)."""
    keys = _keys(x, descending)
    iota = jax.lax.broadcasted_iota(jnp.int64, x.shape, axis)
    return jax.lax.sort(keys + [iota], dimension=axis, num_keys=len(keys), is_stable=True)[-1]


@op(promote=P.NONE, returns=RETURN_TYPES["sort"], saves=("indices",),
    grad_fn=lambda kinds, statics: "SortBackward1" if given(statics["stable"])
    else "SortBackward0")
def sort(input, dim=-1, descending=False, *, stable=omitted(False)):
    axis = axis1(dim, input.ndim)
    _no_complex_sort("Sort", input)
    if axis is None:
        return input, jnp.zeros((), jnp.int64)
    idx = sort_indices(input, axis, descending)
    return jnp.take_along_axis(input, idx, axis), idx


@op(promote=P.NONE, differentiable=False)
def argsort(input, dim=-1, descending=False, *, stable=False):
    axis = axis1(dim, input.ndim)
    _no_complex_sort("Sort", input)
    if axis is None:
        return jnp.zeros((), jnp.int64)
    return sort_indices(input, axis, descending)


@op(promote=P.NONE, grad_fn="SortBackward0")
def msort(input):
    # (complex input: refused when the plan is made, dtype_refusals)
    if input.ndim == 0:
        return input
    return jnp.take_along_axis(input, sort_indices(input, 0, False), 0)


@op(promote=P.NONE, grad_fn="TopkBackward0", returns=RETURN_TYPES["topk"],
    saves=("indices",))
def topk(input, k, dim=-1, largest=True, sorted=True):
    axis = axis1(dim, input.ndim)
    n = 1 if axis is None else input.shape[axis]
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.dtype == jnp.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    _no_complex_sort("topk", input)
    if axis is None:
        return input, jnp.zeros((), jnp.int64)
    idx = jax.lax.slice_in_dim(sort_indices(input, axis, largest), 0, k, axis=axis)
    return jnp.take_along_axis(input, idx, axis), idx


def _pick(input, sorted_idx, pos, axis, keepdim):
    """values/indices at sorted position `pos` (an array broadcastable without `axis`)."""
    idx = jnp.take_along_axis(sorted_idx, jnp.expand_dims(pos, axis), axis)
    vals = jnp.take_along_axis(input, idx, axis)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, axis), jnp.squeeze(idx, axis)
    return vals, idx


@op(promote=P.NONE, grad_fn="KthvalueBackward0", returns=RETURN_TYPES["kthvalue"],
    saves=("indices",))
def kthvalue(input, k, dim=-1, keepdim=False):
    axis = axis1(dim, input.ndim)
    if axis is None:
        if k != 1:
            raise RuntimeError("kthvalue(): selected number k out of range for dimension 0")
        return input, jnp.zeros((), jnp.int64)
    check_nonempty("kthvalue", input, axis)
    if not 1 <= k <= input.shape[axis]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    _reject("kthvalue_cpu", input, "bc")
    pos = jnp.full(input.shape[:axis] + input.shape[axis + 1:], k - 1, jnp.int64)
    return _pick(input, sort_indices(input, axis, False), pos, axis, keepdim)


def _median_pos(input, axis, ignore_nan):
    """Sorted position of the (lower) median along `axis`; a NaN wins unless ignored."""
    n = input.shape[axis]
    if jnp.issubdtype(input.dtype, jnp.inexact):
        nan = jnp.isnan(input)
        count = n - jnp.sum(nan, axis=axis)
        if ignore_nan:
            return jnp.maximum((count - 1) // 2, 0)
        # PyTorch returns the first NaN; NaNs sort last, so the first NaN is at `count`
        return jnp.where(count < n, count, (n - 1) // 2)
    return jnp.full(input.shape[:axis] + input.shape[axis + 1:], (n - 1) // 2, jnp.int64)


def _median_all_body(input, ignore_nan):
    flat = input.reshape(-1)
    if flat.size == 0:   # (before PyTorch's dtype check: a bool input gives True)
        return jnp.full((), jnp.nan, input.dtype)
    _reject("median_cpu", input, "bc")
    pos = _median_pos(flat, 0, ignore_nan)
    value = jax.lax.stop_gradient(flat[sort_indices(flat, 0, False)[pos]])
    # PyTorch's median() spreads the gradient evenly over the elements equal to the result
    # (over the NaNs when it is NaN): same value, that gradient
    if not jnp.issubdtype(flat.dtype, jnp.inexact):
        return value
    hit = (flat == value) | (jnp.isnan(flat) & jnp.isnan(value))
    count = jnp.sum(hit)
    share = jnp.sum(jnp.where(hit, flat - jax.lax.stop_gradient(flat), 0)) / count
    return jnp.where(jnp.isnan(value), jnp.sum(jnp.where(hit, flat, 0)) / count, value + share)


def _median_dim_body(input, dim, keepdim, ignore_nan):
    axis = axis1(dim, input.ndim)
    if axis is not None:
        check_nonempty("median", input, axis)   # (nanmedian's says median() too)
    _reject("median_out", input, "bc")
    if axis is None:
        return input, jnp.zeros((), jnp.int64)
    pos = _median_pos(input, axis, ignore_nan)
    sorted_idx = sort_indices(input, axis, False)
    if ignore_nan and jnp.issubdtype(input.dtype, jnp.inexact):
        # an all-NaN row: nth_element at 0 among n equivalent elements
        first = libstdcxx.all_equal_nth(input.shape[axis], 0)
        all_nan = jnp.all(jnp.isnan(input), axis=axis, keepdims=True)
        sorted_idx = jnp.where(all_nan & (sorted_idx == 0), first, jnp.where(
            all_nan & (sorted_idx == first), 0, sorted_idx))
    return _pick(input, sorted_idx, pos, axis, keepdim)


@op(promote=P.NONE, grad_fn="MedianBackward0", function=False, method=False,
    scalar_operands=False, saves=("input", "result"))
def _median_all(input):
    return _median_all_body(input, False)


@op(promote=P.NONE, grad_fn="MedianBackward1", function=False, method=False,
    returns=RETURN_TYPES["median"], scalar_operands=False, saves=("indices",))
def _median_dim(input, dim, keepdim=False):
    return _median_dim_body(input, dim, keepdim, False)


@op(promote=P.NONE, grad_fn="NanmedianBackward0", function=False, method=False,
    scalar_operands=False, saves=("input", "result"))
def _nanmedian_all(input):
    return _median_all_body(input, True)


@op(promote=P.NONE, grad_fn="NanmedianBackward1", function=False, method=False,
    returns=RETURN_TYPES["nanmedian"], scalar_operands=False, saves=("indices",))
def _nanmedian_dim(input, dim, keepdim=False):
    return _median_dim_body(input, dim, keepdim, True)


@op(promote=P.NONE, grad_fn="ModeBackward0", returns=RETURN_TYPES["mode"], saves=("indices",))
def mode(input, dim=-1, keepdim=False):
    """Most frequent value (the smallest among ties) and the index PyTorch's CPU kernel
    reports for it (see `libstdcxx_sort`)."""
    axis = axis1(dim, input.ndim)
    if axis is None:
        return input, jnp.zeros((), jnp.int64)
    check_nonempty("mode", input, axis)
    _reject("mode_cpu", input, "c")
    x = jnp.moveaxis(input, axis, -1)
    idx = jax.pure_callback(mode_indices, jax.ShapeDtypeStruct(x.shape[:-1], jnp.int64),
                            jax.lax.stop_gradient(x), vmap_method="expand_dims")[..., None]
    vals = jnp.take_along_axis(x, idx, -1)
    vals, idx = jnp.moveaxis(vals, -1, axis), jnp.moveaxis(idx, -1, axis)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, axis), jnp.squeeze(idx, axis)
    return vals, idx


# ---- PyTorch's CPU order among ties, replayed on the host (see the module docstring) -------

@op(promote=P.NONE, tensors=("input", "indices"), function=False, method=False,
    grad_fn=lambda kinds, statics: statics["node"], returns=RETURN_TYPES["sort"],
    saves=("indices",))
def _sort_at(input, indices, dim, node):
    return jnp.take_along_axis(input, indices, axis1(dim, input.ndim)), indices


@op(promote=P.NONE, tensors=("input", "indices"), function=False, method=False,
    grad_fn="TopkBackward0", returns=RETURN_TYPES["topk"], saves=("indices",))
def _topk_at(input, indices, dim):
    return jnp.take_along_axis(input, indices, axis1(dim, input.ndim)), indices


@op(promote=P.NONE, tensors=("input", "indices"), function=False, method=False,
    grad_fn="KthvalueBackward0", returns=RETURN_TYPES["kthvalue"], saves=("indices",))
def _kthvalue_at(input, indices, dim, keepdim):
    axis = axis1(dim, input.ndim)
    vals = jnp.take_along_axis(input, indices, axis)
    if not keepdim:
        vals, indices = jnp.squeeze(vals, axis), jnp.squeeze(indices, axis)
    return vals, indices


_REPLAY_LIMIT = 1 << 16   # elements in the rows replayed per call
_GRAIN_SIZE = 32768       # PyTorch sorts a long 1-d integer tensor with a stable radix sort


def _host_rows(t, axis):
    """`t`'s value on the host with `axis` last."""
    return np.moveaxis(np.asarray(t._data), axis, -1)


def _replayable(input):
    from .._tensor import Tensor
    return (isinstance(input, Tensor) and input.ndim > 0
            and not isinstance(input._data, jax.core.Tracer)
            and input._storage.device.type == "cpu")


def _adjacent_ties(v, axis, descending):
    """Whether the (host) sorted values `v` fail to be strictly monotone along `axis`: two
    equal values, or a NaN (the caller then looks closer)."""
    head = [slice(None)] * v.ndim
    tail = list(head)
    head[axis], tail[axis] = slice(None, -1), slice(1, None)
    a, b = v[tuple(head)], v[tuple(tail)]
    return not bool((a > b).all() if descending else (a < b).all())


def _replay(keys, rows, order):
    """{row: new indices} for the flagged `rows` of `keys` (n last), or None past the limit."""
    where = [tuple(w) for w in np.argwhere(rows)]   # (a 1-d input's one row is `()`)
    if len(where) * keys.shape[-1] > _REPLAY_LIMIT:
        return None
    return {r: order(keys[r].tolist()) for r in where}


def _patched(idx, fixes, axis):
    """The host indices `idx` (n last) with rows replaced, back in `axis`, as a CPU Tensor
    (None when nothing changes)."""
    from .. import _dtype as dt
    from .creation import tensor
    if not fixes:
        return None
    new = np.array(idx)
    for r, order in fixes.items():
        new[r] = order
    if np.array_equal(new, idx):
        return None
    return tensor(np.ascontiguousarray(np.moveaxis(new, -1, axis)), dtype=dt.int64,
                  device="cpu")


def _sort_order(input, idx, axis, descending, values=None):
    """std::sort's permutation where it differs from the stable one `idx` (host, in `axis`),
    as a Tensor; None where they agree (or past the replay limit). `values`: the sorted
    values on the host, when at hand."""
    from .. import _dtype as dt
    n = input.shape[axis]
    if n <= 16 or (input.ndim == 1 and not descending and n >= _GRAIN_SIZE
                   and not input.dtype.is_floating_point and input.dtype is not dt.bool):
        return None   # (insertion sort, or the radix sort: both stable)
    x = _host(input)
    if values is None:
        values = np.take_along_axis(x, idx, axis)
    if not _adjacent_ties(values, axis, descending):
        return None
    keys = libstdcxx.order_keys(np.moveaxis(x, axis, -1), descending)
    idx = np.moveaxis(idx, axis, -1)
    ordered = np.take_along_axis(keys, idx, -1)
    fixes = _replay(keys, (ordered[..., 1:] == ordered[..., :-1]).any(-1),
                    libstdcxx.sort_order)
    return None if fixes is None else _patched(idx, fixes, axis)


def _short(input, dim):
    """Rows of up to 16 elements (or none): std::sort's insertion sort keeps them stable."""
    ndim = getattr(input, "ndim", 0)
    return ndim == 0 or input.shape[axis1(dim, ndim)] <= 16


def _sort_fix(result, input, dim=-1, descending=False, *, stable=None):
    if stable or _short(input, dim) or not _replayable(input):
        return None
    new = _sort_order(input, _host(result[1]), axis1(dim, input.ndim), descending,
                      _host(result[0]))
    return None if new is None else _sort_at(
        input, new, dim, node="SortBackward0" if stable is None else "SortBackward1")


def _argsort_fix(result, input, dim=-1, descending=False, *, stable=False):
    if stable or _short(input, dim) or not _replayable(input):
        return None
    return _sort_order(input, _host(result), axis1(dim, input.ndim), descending)


def _msort_fix(result, input):
    if _short(input, 0) or not _replayable(input):
        return None
    x = _host(input)
    if not _adjacent_ties(_host(result), 0, False):
        return None
    idx = np.argsort(libstdcxx.order_keys(x), 0, kind="stable")
    new = _sort_order(input, idx, 0, False, _host(result))
    return None if new is None else _sort_at(input, new, 0, node="SortBackward0")[0]


def _topk_fix(result, input, k, dim=-1, largest=True, sorted=True):
    k = int(k)
    if k == 0 or not _replayable(input):
        return None
    axis = axis1(dim, input.ndim)
    n = input.shape[axis]
    x = _host(input)
    if sorted or k * 64 <= n or k == 1 or n <= 3:
        # the order is unique unless chosen values tie, or the k-th ties with one left out
        v = _host(result[0])
        if not _adjacent_ties(v, axis, largest):
            if k == n:
                return None
            last = np.take(v, [k - 1], axis)   # (no NaN chosen: then no NaN at all if largest)
            if not (np.count_nonzero(x >= last if largest else x <= last, axis) > k).any():
                return None
    keys = libstdcxx.order_keys(np.moveaxis(x, axis, -1), largest)
    idx = _host_rows(result[1], axis)
    if sorted or k * 64 <= n or k == 1 or n <= 3:
        chosen = np.take_along_axis(keys, idx, -1)
        rows = (chosen[..., 1:] == chosen[..., :-1]).any(-1) | (
            (keys <= chosen[..., -1:]).sum(-1) > k)
    else:   # nth_element's order, ties or not
        rows = np.ones(keys.shape[:-1], bool)
    fixes = _replay(keys, rows, lambda row: libstdcxx.topk_order(row, k, sorted))
    new = None if fixes is None else _patched(idx, fixes, axis)
    return None if new is None else _topk_at(input, new, dim)


def _kthvalue_fix(result, input, k, dim=-1, keepdim=False):
    k = int(k)
    if not _replayable(input):
        return None
    axis = axis1(dim, input.ndim)
    x, kth = _host(input), _host(result[0])
    if not keepdim:
        kth = np.expand_dims(kth, axis)
    if not (kth.dtype.kind == "f" and np.isnan(kth).any()) and not (
            np.count_nonzero(x == kth, axis) > 1).any():
        return None
    keys = libstdcxx.order_keys(np.moveaxis(x, axis, -1))
    idx = _host(result[1])
    idx = np.moveaxis(idx if keepdim else np.expand_dims(idx, axis), axis, -1)
    kth = np.take_along_axis(keys, idx, -1)
    fixes = _replay(keys, (keys == kth).sum(-1) > 1,
                    lambda row: [libstdcxx.quickselect_index(row, k - 1)])
    new = None if fixes is None else _patched(idx, fixes, axis)
    return None if new is None else _kthvalue_at(input, new, dim, keepdim)


_NO_OUT = object()


def _with_fix(name, fix):
    """Op `name`'s function and method bindings, which run the op and then, in eager CPU
    mode, `fix(result, *args, **kwargs)`: PyTorch's order among ties, or None (keep)."""
    from . import out_arg
    from .arg_parser import numpy_kwargs
    from ..autograd import grad_mode, saved_tensors
    from .recording import records
    from .registry import REGISTRY
    multi = REGISTRY[name].returns is not None or None

    def wrap(fused, method):
        def binding(*args, out=_NO_OUT, **kwargs):
            if "axis" in kwargs or "keepdims" in kwargs:
                kwargs = numpy_kwargs(kwargs)
            if method and out is not _NO_OUT:   # (the op raises PyTorch's TypeError)
                return fused(*args, out=out, **kwargs)
            if out is not None and out is not _NO_OUT:   # fixed, then written once
                outs = out_arg.check_out(name, out, args + tuple(kwargs.values()),
                                         multi=multi)
                result = fused(*args, **kwargs)
                fixed = fix(result, *args, **kwargs)
                return out_arg.write_out(name, outs, result if fixed is None else fixed, 3)
            if saved_tensors.active() and records(*args, *kwargs.values()):
                # PyTorch records one node: ours only once the order is known, so that the
                # pack hooks see what that node saves once
                with grad_mode.no_grad():
                    result = fused(*args, **kwargs)
                fixed = fix(result, *args, **kwargs)
                return fused(*args, **kwargs) if fixed is None else fixed
            result = fused(*args, **kwargs)   # (raises PyTorch's errors for bad arguments)
            fixed = fix(result, *args, **kwargs)
            return result if fixed is None else fixed
        return binding

    return rebind(name, wrap)


# ---- searching and histograms ---------------------------------------------------------------

def _search(sorted_sequence, values, right, out_int32):
    side = "right" if right else "left"
    dtype = jnp.int32 if out_int32 else jnp.int64
    if sorted_sequence.ndim <= 1:
        return jnp.searchsorted(sorted_sequence.reshape(-1), values, side=side).astype(dtype)
    # N-D: one search per leading row
    rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    out = jax.vmap(lambda r, v: jnp.searchsorted(r, v, side=side))(rows, vals)
    return out.reshape(values.shape).astype(dtype)


def _check_search(seq, values):
    if seq.ndim > 1 and (jnp.ndim(values) != seq.ndim or
                         tuple(seq.shape[:-1]) != tuple(jnp.shape(values)[:-1])):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor "
            f"{list(jnp.shape(values))}")


@op(promote=P.NONE, differentiable=False, method=False,
    tensors=("sorted_sequence", "input", "sorter"), scalar_operands=("input",))
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    _check_search(sorted_sequence, input)
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    if sorter is not None:
        sorted_sequence = jnp.take_along_axis(sorted_sequence, sorter, -1)
    return _search(sorted_sequence, input, right or side == "right", out_int32)


@op(promote=P.NONE, differentiable=False, method=False, scalar_operands=("input",))
def bucketize(input, boundaries, *, out_int32=False, right=False):   # (no Tensor method)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return _search(boundaries, input, right, out_int32)


def _histc_bound(value, from_data, arr):
    """A histc range bound as PyTorch's message prints it (C++ `<<`, i.e. "%g"). A NaN the
    CPU kernel's vectorized min/max found is all ones (sign set, "-nan"), except when a
    float32/float64 input has one element; half-precision inputs print "nan"."""
    value = float(value)
    if math.isnan(value):
        if from_data:
            negative = arr.dtype in (jnp.float32, jnp.float64) and (
                arr.size > 1 or math.copysign(1.0, value) < 0)
        else:
            negative = math.copysign(1.0, value) < 0
        return "-nan" if negative else "nan"
    return f"{value:g}"


def _histc_check(compute, input, *args, **kw):
    # PyTorch raises when the range (given, or the data's own) is not finite; JAX would
    # count nothing (NaN) or divide by an infinite width.
    if not input.dtype.is_floating_point:   # (the body raises PyTorch's error)
        return None
    params = dict(zip(("bins", "min", "max"), args), **kw)
    lo, hi = params.get("min", 0), params.get("max", 0)
    data = lo == hi and input.numel() > 0
    arr = jnp.asarray(input._data).reshape(-1) if data else None
    if data:
        lo, hi = float(jnp.min(arr)), float(jnp.max(arr))
    if math.isfinite(lo) and math.isfinite(hi):
        return None
    return RuntimeError(f"torch.histc: range of [{_histc_bound(lo, data, arr)}, "
                        f"{_histc_bound(hi, data, arr)}] is not finite")


@op(promote=P.NONE, differentiable=False, check=_histc_check)
def histc(input, bins=100, min=0, max=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if not jnp.issubdtype(input.dtype, jnp.floating):
        from .pointwise import not_implemented
        # (PyTorch fails first in its linspace of the bin edges for bool, in aminmax of a
        # complex input without a range)
        raise not_implemented("linspace_cpu" if input.dtype == jnp.bool_ else "aminmax_cpu"
                              if jnp.iscomplexobj(input) and min == max else "histogram_cpu",
                              input)
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    flat = input.reshape(-1)
    lo, hi = jnp.asarray(min, input.dtype), jnp.asarray(max, input.dtype)
    if min == max and flat.size:  # the data's range, widened by 1 when it is a point
        lo, hi = jnp.min(flat), jnp.max(flat)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    pos = jnp.floor((flat - lo) * bins / (hi - lo)).astype(jnp.int64)
    pos = jnp.where(flat == hi, bins - 1, pos)
    inside = (flat >= lo) & (flat <= hi)
    return jnp.zeros(bins, input.dtype).at[jnp.where(inside, pos, bins)].add(
        jnp.ones_like(flat), mode="drop")


@op(promote=P.NONE, differentiable=False, method=False, scalar_operands=True)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    return jnp.isin(elements, test_elements, invert=invert)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_check(compute_dtype, input, q, **statics):
    from .._tensor import Tensor
    name = "quantile()"   # (nanquantile's messages say quantile() too)
    dtype = input.dtype
    empty = RuntimeError(f"{name} input tensor must be non-empty")
    if isinstance(q, Tensor):
        if input.numel() == 0:
            return empty
        if q.ndim > 1:
            return RuntimeError(f"{name} q must be a scalar or 1D tensor")
        if q.dtype is not dtype:
            return RuntimeError(f"{name} q tensor must be same dtype as the input tensor")
        # (traced inside compile: only the shape checks above; see `check_traced`)
        bad = not isinstance(q._data, jax.core.Tracer) and bool(((q < 0) | (q > 1)).any())
    else:
        bad = not 0 <= q <= 1
    if bad:
        shown = f" but got {q}" if not isinstance(q, Tensor) else ""
        return RuntimeError(f"{name} q values must be in the range [0, 1]" if not shown
                            else f"{name} q must be in the range [0, 1]{shown}")
    return empty if input.numel() == 0 else None   # (a number q is checked first)


def _quantile_body(input, q, dim, keepdim, interpolation, ignore_nan):
    # PyTorch sorts and interpolates between ranks. A q tensor adds a leading dimension;
    # keepdim keeps the reduced one as size 1.
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation "
                           f"must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if input.size == 0 or jnp.ndim(q) > 1:   # the check raises PyTorch's error (after the
        return jnp.zeros((), input.dtype)     # forward, whose shapes must work out)
    if input.dtype not in (jnp.float32, jnp.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    fn = jnp.nanquantile if ignore_nan else jnp.quantile
    qv = jnp.asarray(q, input.dtype)
    axis = None if dim is None else dim % max(input.ndim, 1)
    x = input if input.ndim else input.reshape(1)
    if interpolation == "nearest":
        out = _quantile_nearest(x, qv, axis, keepdim, ignore_nan)
    else:
        out = fn(x, qv, axis=axis, method=interpolation, keepdims=keepdim)
    if input.ndim == 0:  # a 0-d input has no dim to keep
        out = out.reshape(qv.shape)
    elif keepdim and dim is None:
        out = out.reshape(qv.shape + (1,) * input.ndim)
    return out


def _quantile_nearest(x, qv, axis, keepdim, ignore_nan):
    # PyTorch rounds the rank q * (n - 1) half to even; jnp's "nearest" rounds a half down
    s = jnp.sort(x.reshape(-1) if axis is None else jnp.moveaxis(x, axis, -1), axis=-1)
    last = s.shape[-1] - 1
    if ignore_nan:   # ranks among the non-NaN values (NaN sorts last)
        ranks = jnp.maximum(qv.reshape(-1) * ((~jnp.isnan(s)).sum(-1, keepdims=True) - 1), 0)
    else:            # a NaN in the slice makes every quantile NaN
        ranks = jnp.where(jnp.isnan(s).any(-1, keepdims=True), last, qv.reshape(-1) * last)
    out = jnp.moveaxis(jnp.take_along_axis(s, jnp.round(ranks).astype(jnp.int32), -1), -1, 0)
    out = out.reshape(qv.shape + out.shape[1:])
    if keepdim and axis is not None:
        out = jnp.expand_dims(out, axis + qv.ndim)
    return out


@op(promote=P.NONE, grad_fn="SqueezeBackward4", check=_quantile_check, check_traced=True,
    scalar_operands=("q",))
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile_body(input, q, dim, keepdim, interpolation, False)


@op(promote=P.NONE, grad_fn="SqueezeBackward4",
    check=lambda c, input, q, **kw: _quantile_check(c, input, q, ignore_nan=True, **kw),
    check_traced=True, scalar_operands=("q",))
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile_body(input, q, dim, keepdim, interpolation, True)


def _quantile_steps(input, q, dim=None, keepdim=False, *, interpolation="linear",
                    ignore_nan=False):
    """PyTorch's quantile op by op (the graph it records: sort, view, gather, lerp_ and
    in-place squeeze): ranks from q over the sorted values, interpolated."""
    from .. import _dtype as dt
    from .._tensor import Tensor
    from .creation import full_like, tensor
    from .shape import _wrap_dim, broadcast_tensors
    name = "quantile"   # (nanquantile's messages say quantile() too)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    error = _quantile_check(None, input, q, ignore_nan=ignore_nan)
    if error is not None:
        raise error
    q = q.detach() if isinstance(q, Tensor) else tensor(q, dtype=input.dtype)
    shape = []
    if dim is not None and input.ndim:
        d = _wrap_dim(dim, input.ndim)
        shape = list(input.shape)
        if keepdim:
            shape[d] = 1
        else:
            del shape[d]
    elif keepdim:
        shape = [1] * input.ndim
    if dim is None:
        ordered = input.flatten().sort()[0]
    elif _wrap_dim(dim, max(input.ndim, 1)) == input.ndim - 1:
        ordered = input.sort()[0]
    else:
        ordered = input.unsqueeze(-1).transpose(_wrap_dim(dim, max(input.ndim, 1)), -1).sort()[0]
    ordered = ordered.view(shape + [ordered.shape[-1]])
    last = ordered.shape[-1] - 1
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        ranks, nan = broadcast_tensors(q * last, ordered.isnan().any(-1, keepdim=True))
        ranks = ranks.masked_fill(nan, last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = getattr(ranks, {"lower": "floor", "higher": "ceil",
                                "nearest": "round"}[interpolation])()
    below = ranks.long()
    out = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        out.lerp_(ordered.gather(-1, ranks.ceil().long()), weights)
    if q.ndim == 0:
        return out.squeeze_(-1)
    return out.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _nanquantile_steps(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile_steps(input, q, dim, keepdim, interpolation=interpolation,
                           ignore_nan=True)


# ---- host-side: results whose shape depends on the values -----------------------------------

def _host(t):
    return np.asarray(t._data)


def _out(arr, like, dtype):
    from .creation import tensor
    return tensor(np.asarray(arr), dtype=dtype, device=like.device)


def _returns(values, inverse, counts, return_inverse, return_counts, like, node):
    """The outputs; `node` is (grad_fn name, kernel) of PyTorch's non-differentiable node."""
    from .. import _dtype as dt
    from .registry import record_not_implemented
    out = [_out(values, like, like.dtype)]
    record_not_implemented(node[0], NotImplementedError(
        f"the derivative for '{node[1]}' is not implemented."), [like], out[:1])
    if return_inverse:
        out.append(_out(inverse.astype(np.int64), like, dt.int64))
    if return_counts:
        out.append(_out(counts.astype(np.int64), like, dt.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _no_complex_unique(input, dim):
    # PyTorch's unique kernels have no complex (nor float8) case, even for an empty input
    from .dtype_refusals import refuse
    refuse("unique" if dim is None else "unique_dim", input.dtype)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: sorted unique values (each NaN is its own value, as in PyTorch)."""
    _no_complex_unique(input, dim)
    arr = _host(input)
    if dim is None:
        flat = arr.reshape(-1)
        vals, inv, counts = np.unique(flat, return_inverse=True, return_counts=True,
                                      equal_nan=False)
        return _returns(vals, inv.reshape(arr.shape), counts, return_inverse, return_counts,
                        input, ("Unique2Backward0", "_unique2"))
    d = axis1(dim, arr.ndim) or 0
    vals, inv, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=d)
    return _returns(vals, inv.reshape(-1), counts, return_inverse, return_counts, input,
                    ("UniqueDimBackward0", "unique_dim"))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    _no_complex_unique(input, dim)
    arr = _host(input)
    if dim is None:
        flat = arr.reshape(-1)
        if flat.size == 0:
            new = np.zeros(0, bool)
        else:
            new = np.concatenate([[True], flat[1:] != flat[:-1]])
        inv = np.cumsum(new) - 1
        vals = flat[new]
        counts = np.diff(np.append(np.nonzero(new)[0], flat.size))
        return _returns(vals, inv.reshape(arr.shape), counts, return_inverse, return_counts,
                        input, _CONSECUTIVE)
    d = axis1(dim, arr.ndim) or 0
    moved = np.moveaxis(arr, d, 0).reshape(arr.shape[d], -1)
    new = np.ones(moved.shape[0], bool)
    new[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    inv = np.cumsum(new) - 1
    vals = np.take(arr, np.nonzero(new)[0], axis=d)
    counts = np.diff(np.append(np.nonzero(new)[0], moved.shape[0]))
    return _returns(vals, inv, counts, return_inverse, return_counts, input, _CONSECUTIVE)


_CONSECUTIVE = ("UniqueConsecutiveBackward0", "unique_consecutive")


def bincount(input, weights=None, minlength=0):
    from .. import _dtype as dt
    from .pointwise import not_implemented
    from .registry import record_not_implemented
    if input.dtype in dt.SHELL:   # PyTorch has no bincount kernel for uint16/32/64
        from . import unsigned_support
        unsigned_support.refuse("bincount", input.dtype)
    arr = _host(input)
    if arr.dtype.kind not in "iub" or arr.dtype.kind == "b":
        raise not_implemented("bincount_cpu", arr)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if arr.ndim == 1 and arr.size == 0:   # PyTorch: int64 zeros, weights or not
        return _out(np.zeros(minlength, np.int64), input, dt.int64)
    if arr.ndim != 1 or arr.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and tuple(weights.shape) != tuple(arr.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = None if weights is None else _host(weights)
    counts = np.bincount(arr, weights=w, minlength=minlength)
    if weights is None:
        return _out(counts.astype(np.int64), input, dt.int64)
    # float32 weights keep their dtype; all others (half, integral) accumulate in double
    out_dtype = dt.float32 if weights.dtype is dt.float32 else dt.float64
    out = _out(counts, input, out_dtype)
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        "derivative for aten::bincount is not implemented"), [weights], [out])
    return out


def _bind():
    from .._tensor import Tensor
    for name in ("unique", "unique_consecutive", "bincount"):
        setattr(Tensor, name, globals()[name])


_bind()
PLAIN = ["unique", "unique_consecutive", "bincount"]
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("quantile", _quantile_steps), ("nanquantile", _nanquantile_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)


def _warn_copies(fused, method):
    """searchsorted/bucketize warn, once per operand kind, when PyTorch's kernel must copy a
    non-contiguous operand (BucketizationUtils.h) - a property of the Tensor, not of the
    values the op body sees, hence a binding wrapper."""
    from .._tensor import Tensor
    from .._warnings import warn_once
    searchsorted = fused.__name__ == "searchsorted"

    def binding(*args, **kwargs):
        names = ("sorted_sequence", "input") if searchsorted else ("input", "boundaries")
        given = dict(zip(names, args), **kwargs)
        for role, key, line in (("input value", "input", 32),
                                ("boundary", names[0] if searchsorted else names[1], 38),
                                ("sorter", "sorter", 44)):
            t = given.get(key)
            if isinstance(t, Tensor) and not t.is_contiguous():
                warn_once(f"torch.searchsorted(): {role} tensor is non-contiguous, this will "
                          f"lower the performance due to extra data copy when converting "
                          f"non-contiguous tensor to contiguous, please use contiguous {role} "
                          f"tensor if possible. This message will only appear once per "
                          f"program. (Triggered internally at /__w/pytorch/pytorch/aten/src/"
                          f"ATen/native/BucketizationUtils.h:{line}.)")
        return fused(*args, **kwargs)
    return binding


for _name in ("searchsorted", "bucketize"):
    _fns = rebind(_name, _warn_copies, out=lambda alias: True)
    globals().update(_fns)
    PLAIN += list(_fns)
for _name, _fix in (("sort", _sort_fix), ("argsort", _argsort_fix), ("msort", _msort_fix),
                    ("topk", _topk_fix), ("kthvalue", _kthvalue_fix)):
    _fns = _with_fix(_name, _fix)
    globals().update(_fns)
    PLAIN += list(_fns)
