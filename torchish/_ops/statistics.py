"""Statistics over samples: cov/corrcoef (composites, as PyTorch writes them, so their
grad_fn chains match), histogram and the finite-difference `gradient`."""
import builtins
import math
import warnings

import jax
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .._warnings import user_stacklevel
from . import overloads
from .errors import _parser_type
from .pointwise import CPP_NAMES
from .registry import Promote, op
from .return_types import RETURN_TYPES, _rt
from .shape import _wrap_dim

P = Promote
_HISTOGRAM = RETURN_TYPES["histogram"]


# ---- cov / corrcoef ----------------------------------------------------------------------

def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but "
                               f"got fweights with {fweights.ndim} dimensions")
        if fweights.dtype.is_floating_point or fweights.dtype.is_complex:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {fweights.dtype._legacy} dtype")
        _numel_check("fweights", fweights, n)
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but "
                               f"got aweights with {aweights.ndim} dimensions")
        if not aweights.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {aweights.dtype._legacy} dtype")
        _numel_check("aweights", aweights, n)
        w = aweights if w is None else w * aweights
    if w is not None:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    else:
        w_sum = n
        avg = x.sum(1) / n   # a true division: integer samples give float moments
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    # a non-positive normalizer gives inf/nan, as PyTorch, which warns (on a value: not
    # when the weights are traced)
    concrete = not isinstance(norm, Tensor) or not isinstance(norm._data, jax.core.Tracer)
    if concrete and norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning,
                      stacklevel=user_stacklevel())
    norm = norm.clamp_min(0) if isinstance(norm, Tensor) else builtins.max(norm, 0)
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return c.div(norm).squeeze()


def _numel_check(name, w, n):
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    # a value check, so only on concrete weights (skipped when traced)
    if not isinstance(w._data, jax.core.Tracer) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input):
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.view(-1, 1)
    c = c / std.view(1, -1)
    if c.is_complex():
        from .creation import complex as complex_
        return complex_(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---- histogram ----------------------------------------------------------------------------

def _count(input, edges, weight, density):
    """Counts of `input` in bins [e_i, e_i+1) (the last one closed); outside ones dropped."""
    x = input.reshape(-1)
    nb = edges.shape[0] - 1
    idx = jnp.searchsorted(edges, x, side="right") - 1
    idx = jnp.where(x == edges[-1], nb - 1, idx)
    inside = (x >= edges[0]) & (x <= edges[-1])
    w = jnp.ones_like(x) if weight is None else weight.reshape(-1).astype(x.dtype)
    hist = jnp.zeros(nb, x.dtype).at[jnp.where(inside, idx, 0)].add(jnp.where(inside, w, 0))
    if density:
        hist = hist / (hist.sum() * jnp.diff(edges))
    return hist


def _linspace_edges(lo, hi, bins, dtype):
    same = lo == hi
    lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
    # PyTorch's linspace: from both ends, so the last edge is exactly `hi`
    i = jnp.arange(bins + 1)
    step = (hi - lo) / bins
    return jnp.where(i < (bins + 1) // 2, lo + step * i, hi - step * (bins - i)).astype(dtype)


def _not_implemented(kernel, input):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype._legacy}'")


def _edge_checks(input, edges, weight, flat_weight):
    """PyTorch's checks of given bin edges (one 1-d tensor per dim) and of the weight, in its
    order. `flat_weight`: torch.histogram compares the flattened weight with its flattened
    input; histogramdd compares shapes (the input's without its last dim)."""
    cname = CPP_NAMES[input.dtype.name]
    for d, e in enumerate(edges):
        if e.dtype != input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                               f"same dtype, but got input with dtype {cname} and bins for "
                               f"dimension {d} with dtype {CPP_NAMES[e.dtype.name]}")
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.numel() == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {d}")
    if weight is None:
        return
    if weight.dtype != input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got input({cname}), "
                           f"and weight({CPP_NAMES[weight.dtype.name]})")
    rows = [input.numel()] if flat_weight else list(input.shape[:-1])
    wshape = [weight.numel()] if flat_weight else list(weight.shape) or [1]
    if rows != wshape:
        shown = [input.numel(), 1] if flat_weight else list(input.shape)
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape {shown} and weight with shape {wshape}")


def _bins_positive(counts):
    for d, b in enumerate(counts):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension "
                               f"{d}")


def _outer_edges(input, rows, D, range):
    """PyTorch's checks of each dim's (lo, hi): a given range must be ordered and finite, as
    must the data's own extent (checked on concrete data only: it reads values)."""
    if range is None:
        if input.dtype not in (_dtype.float32, _dtype.float64):
            raise _not_implemented("histogramdd", input)   # (its min/max kernel's types)
        if isinstance(rows, jax.core.Tracer) or rows.size == 0:
            return
        lo, hi = jnp.min(rows, axis=0).tolist(), jnp.max(rows, axis=0).tolist()
        bounds = list(zip(lo, hi))
    else:
        bounds = [(range[2 * d], range[2 * d + 1]) for d in builtins.range(D)]
    for d, (lo, hi) in enumerate(bounds):
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension {d}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is "
                               f"not finite")
    if range is not None and input.dtype.is_floating_point:   # bounds in the input's type
        top = float(jnp.finfo(input._data.dtype).max)
        if builtins.any(abs(v) > top for v in range):
            raise RuntimeError(f"value cannot be converted to type "
                               f"{CPP_NAMES[input.dtype.name]} without overflow")


@op(promote=P.NONE, differentiable=False, function=False, method=False,
    tensors=("input", "weight"))
def _histogram_count(input, weight, bins, range=None, density=False):
    if range is not None:
        lo, hi = jnp.asarray(range[0], input.dtype), jnp.asarray(range[1], input.dtype)
    elif input.size:
        lo, hi = input.min(), input.max()
    else:   # PyTorch bins no data over [0, 1]
        lo, hi = jnp.zeros((), input.dtype), jnp.ones((), input.dtype)
    edges = _linspace_edges(lo, hi, bins, input.dtype)
    return _count(input, edges, weight, density), edges


@op(promote=P.NONE, differentiable=False, function=False, method=False,
    tensors=("input", "bins", "weight"))
def _histogram_edges(input, bins, weight, density=False):
    return _count(input, bins, weight, density), bins


def _parsed(name, args, kwargs, method=False):
    """PyTorch's argument parser on a call of its `name` (with several overloads): the overload
    taken and its arguments by name, or the parser's TypeError. The parser tests a list's
    first element only, then reads every element of the overload taken (its own errors)."""
    index, bound = overloads.parse(name, overloads.table(name, method), args, kwargs)
    if bound.get("range") is not None:
        for i, v in enumerate(bound["range"]):
            if not overloads._fits("float", v):
                raise TypeError(f"{name}(): argument 'range' must be tuple of floats, but found "
                                f"element of type {_parser_type(v)} at pos {i + 1}")
        bound["range"] = tuple(float(v) for v in bound["range"])
    return index, bound


def histogram(*args, **kwargs):
    _, bound = _parsed("histogram", args, kwargs)
    return _histogram(**bound)


def _histogram_method(self, *args, **kwargs):
    _, bound = _parsed("histogram", args, kwargs, method=True)
    return _histogram(self, **bound)


_histogram_method.__name__ = _histogram_method.__qualname__ = "histogram"


def _histogram(input, bins=100, *, range=None, weight=None, density=False):
    # PyTorch's histogram is a 1-d histogramdd of the values (its messages say so)
    if isinstance(bins, Tensor):
        _edge_checks(input, [bins], weight, True)
        _bins_positive([bins.numel() - 1])
        if not input.dtype.is_floating_point:
            raise _not_implemented("histogram_cpu", input)
        return _HISTOGRAM(*_histogram_edges(input, bins, weight, density))
    _bins_positive([bins])
    if range is not None and len(range) != 2:
        raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range should have "
                           f"2 elements, but got {len(range)}")
    _outer_edges(input, input._data.reshape(-1, 1), 1, range)
    _edge_checks(input, [], weight, True)
    if not input.dtype.is_floating_point:
        raise _not_implemented("histogram_cpu", input)
    return _HISTOGRAM(*_histogram_count(input, weight, bins, range, density))


_HISTOGRAMDD = _rt("histogramdd", ("hist", "bin_edges"))


@op(promote=P.NONE, differentiable=False, function=False, method=False,
    tensors=("input", "weight", "edges"))
def _histogramdd_count(input, weight, edges, bins, range=None, density=False):
    """The D-dimensional counts of the rows of `input` (..., D): a dim's edges are given
    (`edges[d]` an array) or `bins[d]` evenly spaced over `range` or the data's extent."""
    x = input.reshape(-1, input.shape[-1])
    all_edges, given = [], iter(edges)
    for d in builtins.range(x.shape[1]):
        if not bins[d]:   # this dim's edges were given
            all_edges.append(next(given))
            continue
        if range is not None:
            lo = jnp.asarray(range[2 * d], input.dtype)
            hi = jnp.asarray(range[2 * d + 1], input.dtype)
        elif x.shape[0]:
            lo, hi = x[:, d].min(), x[:, d].max()
        else:   # PyTorch bins no data over [0, 1]
            lo, hi = jnp.zeros((), input.dtype), jnp.ones((), input.dtype)
        all_edges.append(_linspace_edges(lo, hi, bins[d], input.dtype))
    shape = tuple(e.shape[0] - 1 for e in all_edges)
    flat = jnp.zeros(x.shape[0], jnp.int64)
    inside = jnp.ones(x.shape[0], bool)
    for d, e in enumerate(all_edges):
        nb = e.shape[0] - 1
        idx = jnp.searchsorted(e, x[:, d], side="right") - 1
        idx = jnp.where(x[:, d] == e[-1], nb - 1, idx)
        inside = inside & (x[:, d] >= e[0]) & (x[:, d] <= e[-1])
        flat = flat * nb + jnp.clip(idx, 0, nb - 1)
    w = jnp.ones(x.shape[0], x.dtype) if weight is None else weight.reshape(-1).astype(x.dtype)
    size = 1
    for n in shape:
        size *= n
    hist = jnp.zeros(size, x.dtype).at[jnp.where(inside, flat, 0)].add(jnp.where(inside, w, 0))
    hist = hist.reshape(shape)
    if density:
        volume = jnp.ones(shape, x.dtype)
        for d, e in enumerate(all_edges):
            volume = volume * jnp.diff(e).reshape([-1 if i == d else 1
                                                   for i in builtins.range(len(shape))])
        hist = hist / (hist.sum() * volume)
    return (hist,) + tuple(all_edges)


def _tensor_list(bins):
    """The parser's refusal of a list taken as `tuple of Tensors` (its first element is no int)
    with an element that is no Tensor."""
    for i, b in enumerate(bins):
        if not isinstance(b, Tensor):
            return TypeError(f"expected Tensor as element {i} in argument 1, but got "
                             f"{_parser_type(b)}")
    return None


def _int_list(name, bins):
    """The ints of a list taken as `tuple of ints`, read as the parser reads them (a bool is
    one; the first element alone was tested)."""
    out = []
    for i, b in enumerate(bins):
        if not (isinstance(b, bool) or overloads._fits("int", b)):
            raise TypeError(f"{name}(): argument 'bins' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{_parser_type(b)}\"")
        out.append(int(b))
    return out


def histogramdd(*args, **kwargs):
    """torch.histogramdd: the histogram of the rows of `input` (..., D) over D dims; `bins` an
    int, one int per dim, or one edges tensor per dim."""
    bins = args[1] if len(args) > 1 else kwargs.get("bins")
    if isinstance(bins, (list, tuple)) and bins and not overloads._fits("int", bins[0]):
        error = _tensor_list(bins)
        if error is not None:
            raise error
    index, bound = _parsed("histogramdd", args, kwargs)
    if index == 1:
        bound["bins"] = _int_list("histogramdd", bound["bins"])
    return _histogramdd(**bound)


def _histogramdd(input, bins, range=None, weight=None, density=False):
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = input.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * D
    bins = list(bins)
    if bins and isinstance(bins[0], Tensor):   # PyTorch's tensor-list overload
        if len(bins) != D:
            raise RuntimeError(f"torch.histogramdd: expected {D} sequences of bin edges for a "
                               f"{D}-dimensional histogram but got {len(bins)}")
        _edge_checks(input, bins, weight, False)
        _bins_positive([b.numel() - 1 for b in bins])
        if not input.dtype.is_floating_point:
            raise _not_implemented("histogram_cpu", input)
        out = _histogramdd_count(input, weight, bins, (0,) * D, None, density)
        return _HISTOGRAMDD(out[0], tuple(out[1:]))
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range "
                           f"should have {2 * D} elements, but got {len(range)}")
    if range is None and input.dtype not in (_dtype.float32, _dtype.float64):
        raise _not_implemented("histogramdd", input)
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    _outer_edges(input, input._data.reshape(-1, D), D, range)
    _bins_positive(bins)
    _edge_checks(input, [], weight, False)
    if not input.dtype.is_floating_point:
        raise _not_implemented("histogram_cpu", input)
    edges, counts = [], tuple(int(b) for b in bins)
    out = _histogramdd_count(input, weight, edges, counts, range, density)
    return _HISTOGRAMDD(out[0], tuple(out[1:]))


# ---- gradient -----------------------------------------------------------------------------

def _gradient_dims(input, spacing, dim):
    if dim is None:
        dims = list(builtins.range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, input.ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("dim " + str(dims[0]) + " appears multiple times in the list of "
                               "dims")
        if not input.ndim and dims:   # (PyTorch names the dim as given)
            first = dim if isinstance(dim, int) else list(dim)[0]
            raise IndexError(f"Dimension specified as {first} but tensor has no dimensions")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a "
                                   f"scalar, or a list of length equal to 'self.dim() = "
                                   f"{input.ndim}', since dim argument was not given, but got "
                                   f"a list of length {len(spacing)}")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        for h in spacing:   # a list of tensors holds coordinates (a 0-d one is no scalar here)
            if isinstance(h, Tensor) and h.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have "
                                   f"one dimension, but got an element with {h.ndim} "
                                   f"dimensions!")
        spacing = list(spacing)
    else:
        spacing = [spacing] * len(dims)
    return dims, spacing


def _edge(a, d, i, n=1):
    return a.narrow(d, i if i >= 0 else a.shape[d] + i, n)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    from .pointwise import _div_scalar, _mul_scalar
    """Finite differences along each dim: central inside, one-sided of `edge_order` at the
    ends; `spacing` a scalar, one per dim, or coordinate tensors."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, spacing = _gradient_dims(input, 1 if spacing is None else spacing, dim)
    out = []
    for d, h in zip(dims, spacing):
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        a = input
        n = a.shape[d]
        if isinstance(h, Tensor) and h.ndim:   # coordinates along d
            shape = [1] * a.ndim
            shape[d] = -1
            dx = h.diff().view(shape)
            dl, dr = _edge(dx, d, 0, n - 2), _edge(dx, d, 1, n - 2)
            center = (dl * dl * _edge(a, d, 2, n - 2) - dr * dr * _edge(a, d, 0, n - 2)
                      + (dr * dr - dl * dl) * _edge(a, d, 1, n - 2)) / (dl * dr * (dl + dr))
            h0, h1 = _edge(dx, d, 0), _edge(dx, d, -1)
        else:
            # as ATen: differences over the spacing (a C++ scalar: DivBackward1), the
            # central ones then halved
            h = h.item() if isinstance(h, Tensor) else h
            center = _div_scalar(_div_scalar(_edge(a, d, 2, n - 2) - _edge(a, d, 0, n - 2), h),
                                 2)
            h0 = h1 = h
        if edge_order == 1 and not isinstance(h, Tensor):
            first = _div_scalar(_edge(a, d, 1) - _edge(a, d, 0), h)
            last = _div_scalar(_edge(a, d, -1) - _edge(a, d, -2), h)
        elif edge_order == 1:
            first = (_edge(a, d, 1) - _edge(a, d, 0)) / h0
            last = (_edge(a, d, -1) - _edge(a, d, -2)) / h1
        elif isinstance(h, Tensor) and h.ndim:
            # second-order one-sided differences on uneven coordinates: the three-point
            # Lagrange derivative at each end (equal to the uniform formula when steps agree)
            d1, d2 = _edge(dx, d, 0), _edge(dx, d, 1)
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * _edge(a, d, 0)
                     + (d1 + d2) / (d1 * d2) * _edge(a, d, 1)
                     - d1 / (d2 * (d1 + d2)) * _edge(a, d, 2))
            d1, d2 = _edge(dx, d, -2), _edge(dx, d, -1)
            last = (d2 / (d1 * (d1 + d2)) * _edge(a, d, -3)
                    - (d1 + d2) / (d1 * d2) * _edge(a, d, -2)
                    + (2 * d2 + d1) / (d2 * (d1 + d2)) * _edge(a, d, -1))
        else:
            first = _div_scalar(_mul_scalar(_edge(a, d, 0), -1.5) + _mul_scalar(_edge(a, d, 1), 2)
                                - _mul_scalar(_edge(a, d, 2), 0.5), h)
            last = _div_scalar(_mul_scalar(_edge(a, d, -3), 0.5)
                               - _mul_scalar(_edge(a, d, -2), 2)
                               + _mul_scalar(_edge(a, d, -1), 1.5), h)
        from .shape_copies import cat
        out.append(cat([first, center, last], d))
    return tuple(out)


def _bind():
    Tensor.cov = cov
    Tensor.corrcoef = corrcoef
    Tensor.histogram = _histogram_method


_bind()
PLAIN = ["cov", "corrcoef", "histogram", "histogramdd", "gradient"]
