"""Sorting and selection: sort/argsort/msort/topk/kthvalue as ops, and PyTorch's CPU order
among ties (`sort_indices` is shared with `order_statistics.py`). Searching and histograms
are in `searching.py`, median/mode/quantile in `order_statistics.py`, unique and bincount in
`counting.py`.

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
"""
import jax
import jax.numpy as jnp
import numpy as np

from .composite import rebind
from .registry import Promote, given, omitted, op
from . import libstdcxx_sort as libstdcxx
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
    from .creation_data import tensor
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
_STABLE_OVERLOAD = ("sort", "argsort")
_FAST_KEYS = frozenset(("stable", "dim", "descending"))


def _check_stable_overload(name, method, args, kwargs):
    """PyTorch's parser on a call passing `stable=`: sort and argsort take it only in their
    keyword-only overload (`dim` and `descending` then by keyword too), so `argsort(x, 1,
    stable=True)` is its TypeError. The op's own signature is looser, hence this check."""
    from .._tensor import Tensor
    from .overloads import parser_error
    positional = args[1:] if method else args
    if (type(kwargs["stable"]) is bool and _FAST_KEYS.issuperset(kwargs)
            and type(kwargs.get("dim", 0)) is int
            and type(kwargs.get("descending", False)) is bool
            and (not positional if method else
                 len(positional) == 1 and isinstance(positional[0], Tensor))):
        return   # the common accepted form, without the parser's cost
    probe = kwargs
    if name == "sort" and kwargs["stable"] is None:
        # sort's `stable` is a `bool?` (None allowed) although the parser prints `bool stable`
        probe = dict(kwargs, stable=False)
    if parser_error(name, method, positional, probe) is not None:
        raise parser_error(name, method, positional, kwargs)


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
        def binding(*args, **kwargs):
            if "stable" in kwargs and name in _STABLE_OVERLOAD:
                _check_stable_overload(name, method, args, kwargs)
            out = kwargs.pop("out", _NO_OUT)   # (popped here: the check sees the call order)
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


def _host(t):
    return np.asarray(t._data)


PLAIN = []
for _name, _fix in (("sort", _sort_fix), ("argsort", _argsort_fix), ("msort", _msort_fix),
                    ("topk", _topk_fix), ("kthvalue", _kthvalue_fix)):
    _fns = _with_fix(_name, _fix)
    globals().update(_fns)
    PLAIN += list(_fns)
