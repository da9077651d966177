"""Reads and writes at index tensors along a dim: `gather`, `take_along_dim`, `take`,
`index_select`; `scatter` / `scatter_add` / `scatter_reduce` and `index_add` / `index_copy` /
`index_fill` (in place too). Index bounds are checked on values, inside the compiled op where
PyTorch's kernels check them (no host sync), or on the host where PyTorch raises before
computing."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._warnings import warn_once
from .. import _dtype as dt
from .composite import rebind
from .out_arg import OUT_NAMES
from .registry import NOT_IMPLEMENTED, Promote, op, value_of
from .errors import scalar_overflow
from .pointwise import _overload, _reject
from .shape import _wrap_dim as _dim

P = Promote


def _grid(index, dim):
    """Full coordinates for gather/scatter: arange on every dim but `dim`."""
    if index.ndim == 0:   # (of a 1-d input: the one position it names)
        return (index,)
    idx = []
    for d in range(index.ndim):
        if d == dim:
            idx.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = index.shape[d]
            idx.append(jnp.arange(index.shape[d]).reshape(shape))
    return tuple(idx)


def _index_dtype(name, index, text="int32/int64"):
    if index.dtype not in (jnp.int64, jnp.int32):
        raise RuntimeError(f"{name}(): Expected dtype {text} for index")


def _gather_check(name, input, d, index, src=None):
    if not index.size:  # PyTorch checks nothing when there is no index to read
        return
    _index_dtype(name, index)
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    if name == "gather":
        for k in range(index.ndim):
            if k != d and input.ndim and index.shape[k] > input.shape[k]:
                raise RuntimeError(f"Size does not match at dimension {k} expected index "
                                   f"{list(index.shape)} to be no larger than self "
                                   f"{list(input.shape)} apart from dimension {d}")
        return
    src_ndim = jnp.ndim(src) if src is not None else 0   # (0-d: a value, or read as one)
    if src_ndim and src_ndim > max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if 0 < src_ndim < index.ndim:   # (ATen reads src.size(k) for each dim of the index)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-src_ndim}, "
                         f"{src_ndim - 1}], but got {src_ndim})")
    message = (f"Expected index {list(index.shape)} to be no larger than self "
               f"{list(input.shape)} apart from dimension {d}")
    if src_ndim:
        message += f" and to be no larger size than src {list(src.shape)}"
    for k in range(index.ndim):
        if (k != d and input.ndim and index.shape[k] > input.shape[k]) or (
                src_ndim and index.shape[k] > src.shape[k]):
            raise RuntimeError(message)


def _first_outside(index, low, high):
    """The first value of `index` (a Tensor) outside [low, high), or None. PyTorch's kernels
    check every index they read or write; JAX would clamp, wrap or fill NaN instead."""
    if not index.numel() or index.dtype.is_floating_point or index.dtype.is_complex:
        return None   # (the op itself raises PyTorch's index dtype error)
    arr = np.asarray(index._data).reshape(-1)
    bad = (arr < low) | (arr >= high)
    return int(arr[bad][0]) if bad.any() else None


def _gather_bounds_check(compute, input, index, *args, dim, **kw):
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    v = _first_outside(index, 0, n)
    if v is not None:
        return RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return None


def _index_bounds_check(message, error=IndexError, negative=False):
    """A `check` for the index_* ops: `message` formats v (the index), d and n."""
    def check(compute, input, index, *args, dim, **kw):
        d = _dim(dim, input.ndim)
        n = input.shape[d] if input.ndim else 1
        v = _first_outside(index, -n if negative else 0, n)
        return None if v is None else error(message.format(v=v, d=d, n=n))
    return check


def _index_select_check(compute, input, index, *, dim):
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    v = _first_outside(index, 0, n)
    if v is None:
        return None
    if input.ndim > 1 and d == 1:  # PyTorch's CPU kernel for dim 1 has its own message
        return RuntimeError(f"INDICES element is out of DATA bounds, id={v} axis_dim={n}")
    return IndexError("index out of range in self")


def _take_check(compute, input, index):
    n = input.numel()
    v = _first_outside(index, -n, n)
    if v is None:
        return None
    return IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")


# PyTorch's gather backward takes `input` itself, not only its sizes (changing it in place
# before backward raises); its node saves `index` first (the order pack hooks see)
@op(promote=P.NONE, grad_fn="GatherBackward0", saves=("index", "input"),
    check=_gather_bounds_check)
def gather(input, dim, index, *, sparse_grad=False):
    d = _dim(dim, input.ndim)
    _gather_check("gather", input, d, index)
    if not index.size:
        return jnp.zeros(index.shape, input.dtype)
    if input.ndim == 0:
        return input.reshape(index.shape)
    return input[_grid(index, d)]


def take_along_dim(input, indices, dim=None):
    """PyTorch's composite: input and indices broadcast to each other (but along `dim`), then
    `gather` (a GatherBackward0 node over ExpandBackward0); without `dim`, a gather from the
    flattened input."""
    from .errors import broadcast_error
    for position, (name, value) in enumerate((("input", input), ("indices", indices)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"take_along_dim(): argument '{name}' (position {position}) must "
                            f"be Tensor, not {type(value).__name__}")
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype._legacy}")
    if dim is None:
        return gather(input.view(-1), 0, indices.view(-1))
    if indices.ndim != input.ndim:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
            f"dimensions for indices")
    d = _dim(dim, input.ndim)
    if not input.ndim:   # (PyTorch names the dim once wrapped)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")

    def common(shape, size_at_d, other):
        shape = list(shape)
        shape[d] = size_at_d
        error = broadcast_error([shape, other])
        if error:
            raise RuntimeError(error)
        return jnp.broadcast_shapes(tuple(shape), tuple(other))
    indices = indices.broadcast_to(common(input.shape, indices.shape[d], indices.shape))
    if input.shape[d]:   # along `dim`, PyTorch takes every index modulo the size
        indices = indices.remainder(input.shape[d])
    return gather(input.broadcast_to(common(indices.shape, input.shape[d], input.shape)), d,
                  indices)


def _src_part(src, index):
    if jnp.ndim(src) == 0:
        return src
    if index.ndim == 0:   # a 0-d index reads src's first element
        return src.reshape(-1)[0]
    return src[tuple(slice(0, n) for n in index.shape)]


def _scatter_dim(input, dim, index, src, number_src=False):
    """The checks scatter, scatter_add and scatter_reduce share, in ATen's order (its messages
    say `scatter()` for all three); the wrapped `dim`. `number_src`: a 0-d `src` stands for a
    number (scatter's value overload; its 0-d Tensor case is checked in `_scatter_check`)."""
    d = _dim(dim, input.ndim)
    _gather_check("scatter", input, d, index, src)
    if src is not None and not (number_src and jnp.ndim(src) == 0) and src.dtype != input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return d


def _scatter_name(kinds, statics):
    if value_of(statics.get("reduce")) is not None:   # no derivative for the `reduce` overloads
        return NOT_IMPLEMENTED
    return "ScatterBackward1" if isinstance(kinds[2], type) else "ScatterBackward0"


def _check_scatter_reduce(reduce):
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")


def _scatter_check(compute, input, index, src=None, *args, dim, **kw):
    if kw.get("reduce") is not None and isinstance(src, Tensor):
        warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use torch.scatter_reduce instead "
                  "for more reduction options. (Triggered internally at /__w/pytorch/pytorch/"
                  "aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)")
    # a 0-d tensor `src` is a tensor (the src overload), though the body sees a 0-d array as
    # for a number (the value overload)
    if isinstance(src, Tensor) and src.ndim == 0 and index.numel():
        if src.dtype != input.dtype:
            return RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        # ATen reads a 0-d src as one of size [1]
        if index.ndim > 1:
            return RuntimeError("Index tensor must have the same number of dimensions as src "
                                "tensor")
        if index.numel() > 1:
            return RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                                f"{list(input.shape)} apart from dimension "
                                f"{_dim(dim, input.ndim)} and to be no larger size than src []")
    try:   # after the 0-d src's own checks, before the bounds: ATen's order
        _check_scatter_reduce(kw.get("reduce"))
    except RuntimeError as e:
        return e
    return _gather_bounds_check(compute, input, index, src, *args, dim=dim, **kw) or \
        scalar_overflow(src if kw.get("value") is None else kw["value"], input.dtype)


@op(promote=P.NONE, grad_fn=_scatter_name, inplace=True, saves=("index",),
    tensors=("input", "index", "src"), scalar_operands=("src",), check=_scatter_check,
    optional_tensors=())   # (src absent: the `value` overload, with no edge for it)
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    d = _scatter_dim(input, dim, index, src, number_src=True)
    if jnp.ndim(value if src is None else src):   # (a 0-d src: `_scatter_check`, in order)
        _check_scatter_reduce(reduce)
    if not index.size:  # nothing to write (PyTorch skips the shape checks too)
        return input
    s = value if src is None else src
    s = _src_part(jnp.asarray(s).astype(input.dtype), index)
    if input.ndim == 0:
        return _add_at(input.reshape(1).at[index.reshape(-1)], s.reshape(-1)).reshape(()) \
            if reduce == "add" else s.reshape(()) if index.size else input
    where = input.at[_grid(index, d)]
    if reduce == "add":
        return _add_at(where, s)
    if reduce == "multiply":
        return where.multiply(s)
    return where.set(s)


@op(promote=P.NONE, grad_fn="ScatterAddBackward0", inplace=True, saves=("index",),
    check=_gather_bounds_check)
def scatter_add(input, dim, index, src):
    d = _scatter_dim(input, dim, index, src)
    if not index.size:
        return input
    if input.ndim == 0:
        return _add_at(input.reshape(1).at[index.reshape(-1)], src.reshape(-1)).reshape(())
    return _add_at(input.at[_grid(index, d)], _src_part(src, index))


def _add_at(ref, values):
    """ref.add(values); for bool tensors PyTorch's sum is a logical or."""
    return ref.max(values) if values.dtype == jnp.bool_ else ref.add(values)


@jax.custom_vjp
def _scatter_prod(base, grid, s):
    return base.at[grid].multiply(s)


def _scatter_prod_fwd(base, grid, s):
    out = _scatter_prod(base, grid, s)
    return out, (base, grid, s, out)


def _scatter_prod_bwd(res, g):
    # PyTorch's scatter_reduce_backward for "prod" (JAX differentiates a scatter-multiply
    # only with unique indices): exclusive products, a single zero handled explicitly
    base, grid, s, out = res
    masked = jnp.where(base == 0, 1, base)
    g_base = g * masked.at[grid].multiply(s) / masked
    zero = s == 0
    zeros_at = jnp.zeros(base.shape, jnp.int32).at[grid].add(zero.astype(jnp.int32))[grid]
    single = zero & (zeros_at == 1)
    without = base.at[grid].multiply(jnp.where(single, 1, s))
    g_s = jnp.where(single, (g * without)[grid], (g * out)[grid] / jnp.where(zero, 1, s))
    return g_base, None, g_s


_scatter_prod.defvjp(_scatter_prod_fwd, _scatter_prod_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _scatter_extremal(input, grid, s, reduce, include_self):
    fill = -jnp.inf if reduce == "amax" else jnp.inf
    base = input if include_self else input.at[grid].set(fill)
    return base.at[grid].max(s) if reduce == "amax" else base.at[grid].min(s)


def _scatter_extremal_fwd(input, grid, s, reduce, include_self):
    out = _scatter_extremal(input, grid, s, reduce, include_self)
    return out, (input, grid, s, out)


def _scatter_extremal_bwd(reduce, include_self, res, g):
    # PyTorch's scatter_reduce_backward (and index_reduce_backward) for amax/amin: the
    # gradient split evenly among the elements equal to the result, counting the original
    # `self` even where include_self=False leaves it out of the result (and then drops its
    # share); JAX's scatter-max derivative counts otherwise and rounds the split
    input, grid, s, out = res
    self_is = (input == out).astype(g.dtype)
    src_is = (s == out[grid]).astype(g.dtype)
    share = g / self_is.at[grid].add(src_is)
    g_input = self_is * share
    if not include_self:
        g_input = g_input.at[grid].set(0)
    return g_input, None, src_is * share[grid]


_scatter_extremal.defvjp(_scatter_extremal_fwd, _scatter_extremal_bwd)


def _scatter_reduce(input, d, index, src, reduce, include_self):
    if input.ndim == 0:
        out = _scatter_reduce(input.reshape(1), 0, index.reshape(-1), src.reshape(-1),
                              reduce, include_self)
        return out.reshape(())
    grid = _grid(index, d)
    s = _src_part(src, index)
    boolean = input.dtype == jnp.bool_
    if reduce == "sum":
        base = input if include_self else input.at[grid].set(0)
        return _add_at(base.at[grid], s)
    if reduce == "prod":
        base = input if include_self else input.at[grid].set(1)
        return base.at[grid].min(s) if boolean else _scatter_prod(base, grid, s)
    if reduce in ("amax", "amin") and jnp.issubdtype(input.dtype, jnp.floating):
        return _scatter_extremal(input, grid, s, reduce, include_self)
    if reduce in ("amax", "amin"):
        fill = -jnp.inf if reduce == "amax" else jnp.inf
        if boolean:
            fill = reduce == "amin"
        elif not jnp.issubdtype(input.dtype, jnp.floating):
            info = jnp.iinfo(input.dtype)
            fill = info.min if reduce == "amax" else info.max
        base = input if include_self else input.at[grid].set(fill)
        return base.at[grid].max(s) if reduce == "amax" else base.at[grid].min(s)
    if reduce == "mean":
        if boolean:
            raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not '
                                      "implemented for 'Bool'")
        base = input if include_self else input.at[grid].set(0)
        total = base.at[grid].add(s)
        count = jnp.ones_like(input).at[grid].add(1) if include_self else \
            jnp.zeros_like(input).at[grid].add(1)
        count = jnp.where(count == 0, 1, count)
        out = total / count
        return out if jnp.issubdtype(input.dtype, jnp.inexact) else jnp.floor_divide(total, count)
    raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                       f"{reduce}")


@op(promote=P.NONE, grad_fn="ScatterReduceBackward0", inplace=True,
    saves=("input", "index", "src", "result"),
    check=_gather_bounds_check)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    d = _scatter_dim(input, dim, index, src)
    if not index.size:
        return input
    # PyTorch's forward also takes "max"/"min" (its backward then refuses them)
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce in ("amax", "amin"):   # (complex numbers have no order; sum/prod/mean compute)
        _reject("scatter_gather_tensor_cpu_reduce_" + reduce, input, "c")
    return _scatter_reduce(input, d, index, src, reduce, include_self)


@op(promote=P.NONE, grad_fn="IndexSelectBackward0", saves=("index",),
    check=_index_select_check)
def index_select(input, dim, index):
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _index_dtype("index_select", index, "int32 or int64")
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        if index.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{index.size} value(s)")
        return input
    return jnp.take(input, index.reshape(-1), axis=d)


def _index_along(input, d, index):
    idx = [slice(None)] * input.ndim
    idx[d] = index.reshape(-1)
    return tuple(idx)


def index_vector_check(name, index):
    """The index checks of index_add_ / index_copy_ / index_fill_ / index_reduce_, each with
    PyTorch's order, exception type and text (they differ)."""
    from .pointwise import legacy_name
    if name == "index_fill_":
        if index.dtype != jnp.int64:
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        if index.ndim > 1:
            raise RuntimeError("Index has to be a vector/scalar")
    elif name == "index_copy_":
        if index.ndim > 1:
            raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                             f"{index.ndim})")
        if index.dtype != jnp.int64:
            raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                               f"{legacy_name(index)}")
    else:
        if index.ndim > 1:
            raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                             f"{index.ndim} with type: {legacy_name(index)} and size: "
                             f"{list(index.shape)}")
        if index.dtype not in (jnp.int64, jnp.int32):
            raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                               f"{legacy_name(index)}")


def _index_copy_checks(input, d, index, source):
    """index_copy_'s own checks, in ATen's order: its scalar-source and dimensionality checks
    come between the index's rank and its dtype; the index count comes last."""
    from .pointwise import legacy_name
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n = index.size
    if source.ndim == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    index_vector_check("index_copy_", index)
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {legacy_name(input)} and (source) "
                           f"{legacy_name(source)}")
    # both slice shapes drop `dim` (a 0-dim tensor has nothing to drop)
    mine, theirs = list(input.shape), list(source.shape)
    del mine[d:d + 1], theirs[d:d + 1]
    if mine != theirs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, mine))} at "
                           f"dimension {d} and source slice shape: "
                           f"{' '.join(map(str, theirs))} at dimension 0.")
    if source.ndim and n != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source.shape[d]})")


def index_source_check(name, input, d, index, source):
    """The source checks index_add_ and index_reduce_ share (after `index_vector_check`), in
    ATen's order; `d` is the wrapped dim."""
    from .pointwise import legacy_name
    if source.dtype != input.dtype:
        raise RuntimeError(f"{name}(): self ({legacy_name(input)}) and source "
                           f"({legacy_name(source)}) must have the same scalar type")
    if d != 0 and d >= source.ndim:
        raise RuntimeError(f"{name}(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {source.ndim}")
    n = index.size
    if n != (source.shape[d] if source.ndim else 1):
        if not source.ndim:   # (ATen fails reading a 0-dim source's size for its message)
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({source.shape[d]}), for dim: {d}")
    mine, theirs = list(input.shape), list(source.shape)
    if input.ndim and source.ndim:   # (so a 0-dim one only matches a 0-dim one)
        del mine[d], theirs[d]
    if mine != theirs:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")


def _index_update(name, input, dim, index, source, update):
    """Apply `update(ref, source)` at `index` along `dim` (a 0-dim input acts as 1-D)."""
    if name == "index_fill_":   # (it checks its index before its dim, the others after)
        index_vector_check(name, index)
    d = _dim(dim, input.ndim)
    if name == "index_copy_":
        _index_copy_checks(input, d, index, source)
    else:
        index_vector_check(name, index)
        if source is not None:
            index_source_check(name, input, d, index, source)
    if input.ndim == 0:
        src = source if source is None or not jnp.ndim(source) else source.reshape(-1)
        return update(input.reshape(1).at[index.reshape(-1)], src).reshape(())
    return update(input.at[_index_along(input, d, index)], source)


def _index_add_bounds_check(compute, input, index, *args, dim, **kw):
    # ATen's CPU index_add takes a strided loop over the first or last dim of a >1-D tensor
    # (errors naming the index), an element loop otherwise
    d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    v = _first_outside(index, 0, n)
    if v is None:
        return None
    if input.ndim > 1 and d in (0, input.ndim - 1):
        return RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return IndexError("index out of range in self")


@op(promote=P.NONE, grad_fn="IndexAddBackward0", inplace=True, saves=("index",),
    check=_index_add_bounds_check)
def index_add(input, dim, index, source, *, alpha=1):
    # ATen converts alpha to self's type before scaling: an integral tensor truncates a float
    # alpha; a complex one must fit a real tensor (the plan's Scalar check leaves complex here)
    if isinstance(alpha, complex) and not jnp.iscomplexobj(input):
        error = scalar_overflow(alpha, dt.from_np(input.dtype))
        if error is not None:
            raise error
        alpha = alpha.real
    if jnp.issubdtype(input.dtype, jnp.integer) and isinstance(alpha, float):
        alpha = int(alpha)
    return _index_update("index_add_", input, dim, index, source,
                         lambda ref, src: _add_at(ref, src if alpha == 1 else src * alpha))


@op(promote=P.NONE, grad_fn="IndexCopyBackward0", inplace=True, saves=("index",),
    check=_index_bounds_check("index_copy_(): index {v} is out of bounds for dimension {d} "
                              "with size {n}"))
def index_copy(input, dim, index, source):
    return _index_update("index_copy_", input, dim, index, source,
                         lambda ref, src: ref.set(src))


_index_fill_bounds = _index_bounds_check(
    "index {v} is out of bounds for dimension {d} with size {n}", negative=True)


@op(promote=P.NONE, grad_fn=_overload("IndexFillBackward", 2), inplace=True, saves=("index",),
    scalar_operands=("value",), check=lambda compute, input, index, value, *, dim: (
        scalar_overflow(value, input.dtype) or (  # (a non-long index: the op's dtype error)
            index.dtype is dt.int64 and _index_fill_bounds(compute, input, index, dim=dim)) or
        None))
def index_fill(input, dim, index, value):
    # the value is a Scalar (or 0-dim tensor) converted to the tensor's dtype
    v = jnp.asarray(value).astype(input.dtype)
    return _index_update("index_fill_", input, dim, index, None, lambda ref, _: ref.set(v))


@op(promote=P.NONE, grad_fn="TakeBackward0", saves=("index",), check=_take_check)
def take(input, index):
    if index.dtype != jnp.int64:
        from .pointwise import legacy_name
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{legacy_name(index)}")
    return jnp.take(input.reshape(-1), index)


Tensor.take_along_dim = take_along_dim

PLAIN = ["take_along_dim"]


def _with_sparse_grad(fused, method):
    """gather's bindings: with `sparse_grad=True`, a leaf input's gradient is sparse COO."""
    def binding(*args, **kwargs):
        out = fused(*args, **kwargs)
        if kwargs.get("sparse_grad") and out.grad_fn is not None:
            from ..autograd import sparse_grad
            input, dim, index = _gather_args(*args, **kwargs)
            data = index._data   # (traced: no values to build the entries from)
            concrete = None if isinstance(data, (jax.core.Tracer, jax.ShapeDtypeStruct)) \
                else np.asarray(data)
            sparse_grad.gather(out, input, _dim(dim, input.ndim), concrete)
        return out
    return binding


def _gather_args(input, dim, index, **_):
    return input, dim, index


_fns = rebind("gather", _with_sparse_grad, out=lambda alias: alias in OUT_NAMES)
globals().update(_fns)
PLAIN += list(_fns)
