"""Reductions, scans, sorting and softmax."""
import collections

import jax
import jax.numpy as jnp

from .registry import Promote, op

P = Promote

values_indices = collections.namedtuple("values_indices", ["values", "indices"])


def _rt(name):
    """A torch.return_types-style named tuple class (prints as torch.return_types.max)."""
    cls = collections.namedtuple(name, ["values", "indices"])
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: (f"torch.return_types.{name}(\nvalues={self.values!r},\n"
                                 f"indices={self.indices!r})")
    return cls


RETURN_TYPES = {n: _rt(n) for n in ("max", "min", "sort", "topk", "kthvalue", "mode",
                                    "median", "cummax", "cummin", "aminmax", "nanmedian")}


def _axes(dim, ndim):
    if dim is None:
        return None
    dims = dim if isinstance(dim, tuple) else (dim,)
    if len(dims) == 0:
        return None
    out = []
    n = max(ndim, 1)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        out.append(d % n if ndim else 0)
    return tuple(out) if ndim else ()


def _by_dim(name0, name1):
    return lambda kinds, statics: name0 if statics.get("dim") in (None, ()) else name1


@op(promote=P.INT_TO_LONG, grad_fn=_by_dim("SumBackward0", "SumBackward1"), saves=())
def sum(input, dim=None, keepdim=False, *, dtype=None):
    return jnp.sum(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.INT_TO_LONG, grad_fn="NansumBackward0")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    return jnp.nansum(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


def _require_float(name, x):
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        from .._dtype import from_np
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{from_np(x.dtype)._legacy}")


@op(grad_fn=_by_dim("MeanBackward0", "MeanBackward1"), saves=())
def mean(input, dim=None, keepdim=False, *, dtype=None):
    _require_float("mean", input)
    return jnp.mean(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(grad_fn="NanmeanBackward0")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    _require_float("nanmean", input)
    return jnp.nanmean(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.INT_TO_LONG, grad_fn=_by_dim("ProdBackward0", "ProdBackward1"))
def prod(input, dim=None, keepdim=False, *, dtype=None):
    return jnp.prod(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.NONE, grad_fn="AmaxBackward0")
def amax(input, dim=(), keepdim=False):
    return jnp.max(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.NONE, grad_fn="AminBackward0")
def amin(input, dim=(), keepdim=False):
    return jnp.min(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


def _check_nonempty(name, x, dim):
    if x.size == 0 and (dim is None or x.shape[dim] == 0):
        raise IndexError(f"{name}(): Expected reduction dim {0 if dim is None else dim} to "
                         "have non-zero size.") if dim is not None else RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.")


@op(promote=P.NONE, grad_fn="MaxBackward1", function=False, method=False)
def _max_all(input):
    if input.size == 0:
        raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return jnp.max(input)


@op(promote=P.NONE, grad_fn="MinBackward1", function=False, method=False)
def _min_all(input):
    if input.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return jnp.min(input)


def _select_along(input, idx, axis, keepdim):
    # gather (not jnp.max) so the gradient goes to the returned index only, as in PyTorch
    values = jnp.take_along_axis(input, jnp.expand_dims(idx, axis), axis)
    return values if keepdim else jnp.squeeze(values, axis)


@op(promote=P.NONE, grad_fn="MaxBackward0", function=False, method=False,
    returns=RETURN_TYPES["max"])
def _max_dim(input, dim, keepdim=False):
    axis = _axes(dim, input.ndim)
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    idx = jnp.argmax(input, axis=axis[0])
    return _select_along(input, idx, axis[0], keepdim), (
        jnp.expand_dims(idx, axis[0]) if keepdim else idx)


@op(promote=P.NONE, grad_fn="MinBackward0", function=False, method=False,
    returns=RETURN_TYPES["min"])
def _min_dim(input, dim, keepdim=False):
    axis = _axes(dim, input.ndim)
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    idx = jnp.argmin(input, axis=axis[0])
    return _select_along(input, idx, axis[0], keepdim), (
        jnp.expand_dims(idx, axis[0]) if keepdim else idx)


@op(promote=P.NONE, differentiable=False)
def argmax(input, dim=None, keepdim=False):
    if dim is None:
        r = jnp.argmax(input.reshape(-1))
        return r.reshape((1,) * input.ndim) if keepdim else r
    return jnp.argmax(input, axis=_axes(dim, input.ndim)[0], keepdims=keepdim)


@op(promote=P.NONE, differentiable=False)
def argmin(input, dim=None, keepdim=False):
    if dim is None:
        r = jnp.argmin(input.reshape(-1))
        return r.reshape((1,) * input.ndim) if keepdim else r
    return jnp.argmin(input, axis=_axes(dim, input.ndim)[0], keepdims=keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(x, False) means unbiased=False
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    axis = _axes(dim, input.ndim)
    n = input.size if axis is None else jnp.prod(jnp.array([input.shape[a] for a in axis]))
    mu = jnp.mean(input, axis=axis, keepdims=True)
    dev = input - mu
    sq = (dev * jnp.conj(dev)).real if jnp.iscomplexobj(dev) else dev * dev
    return jnp.sum(sq, axis=axis, keepdims=keepdim) / jnp.maximum(n - c, 0)


@op(promote=P.INT_TO_FLOAT, grad_fn="VarBackward0")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction)


@op(promote=P.INT_TO_FLOAT, grad_fn="StdBackward0")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return jnp.sqrt(_var(input, dim, unbiased, keepdim, correction))


@op(promote=P.INT_TO_FLOAT, grad_fn="VarMeanBackward0", method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    d = None if isinstance(dim, bool) else dim
    return (_var(input, dim, unbiased, keepdim, correction),
            jnp.mean(input, axis=_axes(d, input.ndim), keepdims=keepdim))


@op(promote=P.INT_TO_FLOAT, grad_fn="StdMeanBackward0", method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    d = None if isinstance(dim, bool) else dim
    return (jnp.sqrt(_var(input, dim, unbiased, keepdim, correction)),
            jnp.mean(input, axis=_axes(d, input.ndim), keepdims=keepdim))


def _vector_norm(x, ord, axis, keepdim):
    ax = axis
    a = jnp.abs(x)
    if ord == float("inf"):
        return jnp.max(a, axis=ax, keepdims=keepdim)
    if ord == float("-inf"):
        return jnp.min(a, axis=ax, keepdims=keepdim)
    if ord == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis=ax, keepdims=keepdim)
    if ord == 2:
        sq = jnp.sum(a * a, axis=ax, keepdims=keepdim)
        # PyTorch's norm has gradient 0 (not nan) at the zero vector
        safe = jnp.where(sq == 0, 1, sq)
        return jnp.where(sq == 0, 0, jnp.sqrt(safe))
    if ord == 1:
        return jnp.sum(a, axis=ax, keepdims=keepdim)
    s = jnp.sum(a ** ord, axis=ax, keepdims=keepdim)
    safe = jnp.where(s == 0, 1, s)
    return jnp.where(s == 0, 0, safe ** (1.0 / ord))


@op(promote=P.COMPLEX_TO_FLOAT, grad_fn="LinalgVectorNormBackward0")
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           "as input.")
    axis = _axes(dim, input.ndim)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return jnp.sum(jnp.linalg.svd(input, compute_uv=False), axis=-1, keepdims=keepdim)
    return _vector_norm(input, float(p), axis, keepdim)


@op(promote=P.INT_TO_FLOAT, grad_fn="LogsumexpBackward0")
def logsumexp(input, dim, keepdim=False):
    return jax.scipy.special.logsumexp(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.INT_TO_LONG, grad_fn="CumsumBackward0", inplace=True)
def cumsum(input, dim, *, dtype=None):
    return jnp.cumsum(input, axis=_axes(dim, input.ndim)[0]) if input.ndim else input


@op(promote=P.INT_TO_LONG, grad_fn="CumprodBackward0", inplace=True)
def cumprod(input, dim, *, dtype=None):
    return jnp.cumprod(input, axis=_axes(dim, input.ndim)[0]) if input.ndim else input


def _cum_extreme(input, dim, better):
    axis = _axes(dim, input.ndim)[0]
    n = input.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(n).reshape([-1 if i == axis else 1
                                                   for i in range(input.ndim)]), input.shape)

    def combine(a, b):
        va, ia = a
        vb, ib = b
        take_b = better(vb, va) | (vb == va) | jnp.isnan(vb)
        take_b = take_b & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    v, i = jax.lax.associative_scan(combine, (input, idx), axis=axis)
    return v, i


@op(promote=P.NONE, grad_fn="CummaxBackward0", returns=RETURN_TYPES["cummax"])
def cummax(input, dim):
    return _cum_extreme(input, dim, jnp.greater)


@op(promote=P.NONE, grad_fn="CumminBackward0", returns=RETURN_TYPES["cummin"])
def cummin(input, dim):
    return _cum_extreme(input, dim, jnp.less)


@op(promote=P.NONE, grad_fn="LogcumsumexpBackward0")
def logcumsumexp(input, dim):
    return jax.lax.cumlogsumexp(input, axis=_axes(dim, input.ndim)[0])


@op(promote=P.NONE, differentiable=False)
def all(input, dim=None, keepdim=False):
    return jnp.all(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.NONE, differentiable=False)
def any(input, dim=None, keepdim=False):
    return jnp.any(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.NONE, differentiable=False)
def count_nonzero(input, dim=None):
    return jnp.count_nonzero(input, axis=_axes(dim, input.ndim)).astype(jnp.int64)


def _softmax_dim(ndim, dim):
    if dim is None:  # PyTorch's legacy implicit dim
        return 0 if ndim in (0, 1, 3) else 1
    return _axes(dim, ndim)[0] if ndim else 0


@op(promote=P.NONE, grad_fn="SoftmaxBackward0", nn=True, tensors=("input",))
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.astype(dtype.np)
    return jax.nn.softmax(x, axis=_softmax_dim(input.ndim, dim))


@op(promote=P.NONE, grad_fn="LogSoftmaxBackward0", nn=True, tensors=("input",))
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.astype(dtype.np)
    return jax.nn.log_softmax(x, axis=_softmax_dim(input.ndim, dim))


@op(promote=P.NONE, grad_fn="NegBackward0", nn=True, function=False, method=False,
    tensors=("input",))
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    x = input if dtype is None else input.astype(dtype.np)
    return jax.nn.softmax(-x, axis=_softmax_dim(input.ndim, dim))


@op(promote=P.NONE, grad_fn="SortBackward0", returns=RETURN_TYPES["sort"])
def sort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    axis = _axes(dim, input.ndim)[0]
    key = -input if descending and not jnp.issubdtype(input.dtype, jnp.bool_) else input
    if descending and jnp.issubdtype(input.dtype, jnp.bool_):
        key = ~input
    idx = jnp.argsort(key, axis=axis, stable=True)
    return jnp.take_along_axis(input, idx, axis), idx


@op(promote=P.NONE, differentiable=False)
def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return jnp.zeros((), jnp.int64)
    axis = _axes(dim, input.ndim)[0]
    key = -input if descending else input
    return jnp.argsort(key, axis=axis, stable=True)


@op(promote=P.NONE, grad_fn="TopkBackward0", returns=RETURN_TYPES["topk"])
def topk(input, k, dim=-1, largest=True, sorted=True):
    axis = _axes(dim, input.ndim)[0] if input.ndim else 0
    if input.ndim and not 0 <= k <= input.shape[axis]:
        raise RuntimeError("selected index k out of range")
    x = jnp.moveaxis(input, axis, -1) if input.ndim else input.reshape(1)
    vals, idx = jax.lax.top_k(x if largest else -x, k)
    vals = jnp.take_along_axis(x, idx, -1)
    if input.ndim == 0:
        return vals.reshape(()), idx.reshape(())
    return jnp.moveaxis(vals, -1, axis), jnp.moveaxis(idx, -1, axis)


@op(promote=P.NONE, grad_fn="KthvalueBackward0", returns=RETURN_TYPES["kthvalue"])
def kthvalue(input, k, dim=-1, keepdim=False):
    axis = _axes(dim, input.ndim)[0]
    idx_sorted = jnp.argsort(input, axis=axis, stable=True)
    idx = jax.lax.index_in_dim(idx_sorted, k - 1, axis, keepdims=True)
    vals = jnp.take_along_axis(input, idx, axis)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, axis), jnp.squeeze(idx, axis)
    return vals, idx


@op(promote=P.NONE, grad_fn="MedianBackward0", function=False, method=False)
def _median_all(input):
    flat = jnp.sort(input.reshape(-1))
    return flat[(flat.size - 1) // 2]


@op(promote=P.NONE, grad_fn="MedianBackward1", function=False, method=False,
    returns=RETURN_TYPES["median"])
def _median_dim(input, dim, keepdim=False):
    axis = _axes(dim, input.ndim)[0]
    idx_sorted = jnp.argsort(input, axis=axis, stable=True)
    k = (input.shape[axis] - 1) // 2
    idx = jax.lax.index_in_dim(idx_sorted, k, axis, keepdims=True)
    vals = jnp.take_along_axis(input, idx, axis)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, axis), jnp.squeeze(idx, axis)
    return vals, idx


@op(promote=P.DEFAULT, grad_fn="TraceBackward0")
def trace(input):
    return jnp.trace(input)


# ---- overloads resolved in Python (one op per PyTorch overload) --------------------------

def _overloaded(name, full, by_dim, binary=None):
    def fn(input, dim=None, keepdim=False, *, out=None):
        from .._tensor import Tensor
        if isinstance(dim, Tensor) and binary is not None:
            return binary(input, dim)
        if dim is None:
            return full(input)
        return by_dim(input, dim, keepdim)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _bind_overloads():
    from .._tensor import Tensor
    from .pointwise import maximum, minimum
    out = {"max": _overloaded("max", _max_all, _max_dim, maximum),
           "min": _overloaded("min", _min_all, _min_dim, minimum),
           "median": _overloaded("median", _median_all, _median_dim)}
    for k, f in out.items():
        setattr(Tensor, k, f)
    return out


OVERLOADS = _bind_overloads()
