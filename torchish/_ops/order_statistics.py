"""Order statistics: median/nanmedian (the overloads in `reduction.py` dispatch to the ops
here), mode, quantile/nanquantile. They sort with `sorting.sort_indices` (stable): PyTorch's
`median`/`nanmedian` order ties by index too; an all-NaN row's `nanmedian` index is
nth_element's, which depends only on the row's length (so it is exact under a trace too)."""
import jax
import jax.numpy as jnp

from .composite import composite
from .registry import Promote, op
from . import libstdcxx_sort as libstdcxx
from .libstdcxx_sort import mode_indices
from .pointwise import _reject
from .reduction import axis1, check_nonempty
from .return_types import RETURN_TYPES
from .sorting import _pick, sort_indices

P = Promote

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

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_check(compute_dtype, input, q, **statics):
    from .._tensor import Tensor
    from .._tensor_checks import _wrap_dim
    name = "quantile()"   # (nanquantile's messages say quantile() too)
    dtype = input.dtype
    empty = RuntimeError(f"{name} input tensor must be non-empty")
    dim_error = None
    if statics.get("dim") is not None:
        try:
            _wrap_dim(statics["dim"], input.ndim)
        except IndexError as error:
            dim_error = error
    if isinstance(q, Tensor):
        if input.numel() == 0:
            return empty
        if q.ndim > 1:
            return RuntimeError(f"{name} q must be a scalar or 1D tensor")
        if q.dtype is not dtype:
            return RuntimeError(f"{name} q tensor must be same dtype as the input tensor")
        if dim_error is not None:   # (before the values of a q tensor, after a number q's)
            return dim_error
        # (traced inside compile: only the shape checks above; see `check_traced`)
        bad = not isinstance(q._data, jax.core.Tracer) and bool(((q < 0) | (q > 1)).any())
    else:
        bad = not 0 <= q <= 1
    if bad:
        # (a number q printed as C++ streams a double: 2.0 is "2", 1e10 is "1e+10")
        shown = f" but got {q:g}" if not isinstance(q, Tensor) else ""
        return RuntimeError(f"{name} q values must be in the range [0, 1]" if not shown
                            else f"{name} q must be in the range [0, 1]{shown}")
    return empty if input.numel() == 0 else dim_error   # (a number q is checked first)


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
    from .creation import full_like
    from .creation_data import tensor
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

PLAIN = []
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("quantile", _quantile_steps), ("nanquantile", _nanquantile_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)

