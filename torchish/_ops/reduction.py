"""Reductions and scans: sum/mean/prod, max/min (with the overloads PyTorch resolves in C++),
var/std, norm, logsumexp, cumulative ops, all/any and softmax. Sorting, selection and
counting live in `sorting.py`, `order_statistics.py`, `searching.py` and `counting.py`;
trapezoid and its kin in `integration.py`."""
import math
import warnings

import jax
import jax.numpy as jnp

from .._warnings import user_stacklevel
from .half_grad import HALF, pytorch_grad
from .composite import composite, rebind
from . import half_softmax, overloads, signed_ties
from .arg_parser import REQUIRED, numpy_axis
from .argcheck import _is_index
from .registry import REGISTRY, Promote, given, omitted, op
from .pointwise import _reject
from .return_types import RETURN_TYPES

P = Promote


def _range_error(d, ndim):
    n = max(ndim, 1)
    return IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                      f"but got {d})")


def _axes(dim, ndim):
    """Reduction axes for `dim` (None or () = all), with PyTorch's errors."""
    if dim is None:
        return None
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if len(dims) == 0:
        return None
    out = []
    n = max(ndim, 1)
    for d in dims:
        if not -n <= d < n:
            raise _range_error(d, ndim)
        a = d % n
        if a in out:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        out.append(a)
    return tuple(out) if ndim else ()


def axis1(dim, ndim):
    """The one axis of a single-dim op; None for a 0-dim input (where dim is -1 or 0)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise _range_error(dim, ndim)
    return dim % n if ndim else None


def check_nonempty(name, x, axis):
    """PyTorch's error for a reduction without identity over an empty dim (or input)."""
    if axis is None:
        if x.size == 0:
            if name in ("amax", "amin"):  # these say it with a hint, as a RuntimeError
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
    elif x.ndim and x.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")


def count_of(x, axis):
    """How many elements a reduction over `axis` (None: all) takes from `x`."""
    return x.size if axis is None else math.prod(x.shape[a] for a in axis)


def _unknown_count(n, like):
    """`n` (in `like`'s type and shape) computed from `like`'s bits as XLA cannot foresee:
    min(n, |bits| | n) is n. A division by a constant XLA rewrites as a product with 1 / n,
    an ulp off in a third of float32 cases (17 / 24); an optimization barrier does not stop
    it, since the eager kernels' pipeline forwards a constant through the barrier."""
    real = jax.lax.stop_gradient(like)
    ints = jnp.int64 if real.dtype.itemsize == 8 else jnp.int32
    bits = jax.lax.bitcast_convert_type(real, ints) & jnp.iinfo(ints).max
    return jnp.minimum(n, bits | n).astype(real.dtype)


def divide_by_count(s, n):
    """`s / n` correctly rounded, as PyTorch divides a sum by an element count; JAX's
    derivative divides the gradient by the same count, PyTorch's `grad / n`. (Real `s`.)"""
    return s / _unknown_count(n, s)


def mean_by_count(x, axis=None, keepdims=False):
    """PyTorch's mean: the sum divided by the count (a float16/bfloat16 one summed and divided
    in float32, rounded once); its backward, the gradient divided by the count. A complex
    mean keeps XLA's product with 1 / n: PyTorch's complex division by (n, 0) is that too."""
    if jnp.iscomplexobj(x):
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    acc = jnp.float32 if x.dtype in HALF else None
    s = jnp.sum(x, axis=axis, keepdims=keepdims, dtype=acc)
    return divide_by_count(s, count_of(x, axis)).astype(x.dtype)


def _by_dim(name0, name1):
    """PyTorch's overload without `dim`, or the one with (even `dim=None`)."""
    return lambda kinds, statics: name1 if given(statics["dim"]) else name0


@op(promote=P.INT_TO_LONG, grad_fn=_by_dim("SumBackward0", "SumBackward1"), saves=(),
    given_with={"keepdim": "dim"})
def sum(input, dim=omitted(None), keepdim=omitted(False), *, dtype=None):
    return jnp.sum(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


@op(promote=P.INT_TO_LONG, grad_fn="NansumBackward0")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if jnp.iscomplexobj(input):
        raise RuntimeError("nansum on CPU does not support complex inputs")
    return jnp.nansum(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


def _require_float(name, x):
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        from .._dtype import from_np
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{from_np(x.dtype)._legacy}")


def _mean_dtype(name, dtype):
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {dtype._legacy}")


@op(grad_fn=_by_dim("MeanBackward0", "MeanBackward1"), saves=(),
    given_with={"keepdim": "dim"}, saved_as={"self_sym_numel": "self"})
def mean(input, dim=omitted(None), keepdim=omitted(False), *, dtype=None):
    _mean_dtype("mean", dtype)
    _require_float("mean", input)
    return mean_by_count(input, _axes(dim, input.ndim), keepdim)


@op(grad_fn="NanmeanBackward0")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    _mean_dtype("nanmean", dtype)
    # (a `dtype` has already converted the input: PyTorch checks the input as passed)
    if not (jnp.issubdtype(input.dtype, jnp.floating)
            or jnp.issubdtype(input.dtype, jnp.complexfloating)):
        from .._dtype import from_np
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {from_np(input.dtype)._legacy}")
    return jnp.nanmean(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


def _nanmean_steps(input, dim=None, keepdim=False, *, dtype=None):
    """PyTorch's nanmean: nansum over the count of non-NaN elements (DivBackward0)."""
    _mean_dtype("nanmean", dtype)   # (an input that requires grad is floating point)
    count = input.isnan().logical_not().sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(count)


@op(promote=P.INT_TO_LONG, given_with={"keepdim": "dim"},
    grad_fn=lambda kinds, statics: "ProdBackward1" if given(statics["dim"])
    and statics["dim"] is not None else "ProdBackward0", saves=("input", "result"))
def prod(input, dim=omitted(None, nullable=False), keepdim=omitted(False), *, dtype=None):
    return jnp.prod(input, axis=_axes(dim, input.ndim), keepdims=keepdim)


def _extreme(fn, name, input, dim, keepdim):
    axes = _axes(dim, input.ndim)
    for a in (None,) if axes is None or input.ndim == 0 else axes:
        check_nonempty(name, input, a)
    if input.size:   # (an empty result runs no kernel, so PyTorch returns it even for complex)
        _reject({"amax": "max_values_cpu", "amin": "min_values_cpu"}[name], input, "c")
    return fn(input, axis=axes, keepdims=keepdim)


@op(promote=P.NONE, grad_fn="AmaxBackward0", saves=("input", "result"))
def amax(input, dim=(), keepdim=False):
    return _extreme(signed_ties.amax, "amax", input, dim, keepdim)


@op(promote=P.NONE, grad_fn="AminBackward0", saves=("input", "result"))
def amin(input, dim=(), keepdim=False):
    return _extreme(signed_ties.amin, "amin", input, dim, keepdim)


@op(promote=P.NONE, grad_fn="AminmaxBackward0", returns=RETURN_TYPES["aminmax"],
    saves=("input", "max", "min"))
def aminmax(input, *, dim=None, keepdim=False):
    if dim is None and input.size == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    a = None if dim is None else axis1(dim, input.ndim)
    if a is not None and input.shape[a] == 0:
        raise IndexError(f"aminmax(): Expected reduction dim {a} to have non-zero size.")
    _reject("aminmax_cpu", input, "c")
    if dim is None and keepdim:
        shape = (1,) * input.ndim
        return jnp.min(input).reshape(shape), jnp.max(input).reshape(shape)
    return (jnp.min(input, axis=a, keepdims=keepdim),
            jnp.max(input, axis=a, keepdims=keepdim))


def _all_reduction(name, fn):
    def body(input):
        if input.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        _reject(f"{name}_all", input, "c")
        return fn(input)
    return body


# (scalar_operands=False: checked although private, as `torchish.max`'s own operands)
_max_all = op("_max_all", promote=P.NONE, grad_fn="MaxBackward1", function=False,
              method=False, scalar_operands=False,
              saves=("input", "result"))(_all_reduction("max", jnp.max))
_min_all = op("_min_all", promote=P.NONE, grad_fn="MinBackward1", function=False,
              method=False, scalar_operands=False,
              saves=("input", "result"))(_all_reduction("min", jnp.min))


def _select_along(input, idx, axis, keepdim):
    # gather (not jnp.max) so the gradient goes to the returned index only, as in PyTorch
    values = jnp.take_along_axis(input, jnp.expand_dims(idx, axis), axis)
    return values if keepdim else jnp.squeeze(values, axis)


def _arg_extreme(arg, name, input, dim, keepdim):
    a = axis1(dim, input.ndim)
    if a is not None:
        check_nonempty(name, input, a)
    _no_complex_arg(name, input)
    if a is None:
        return input, jnp.zeros((), jnp.int64)
    idx = arg(input, axis=a)
    return _select_along(input, idx, a, keepdim), (jnp.expand_dims(idx, a) if keepdim else idx)


@op(promote=P.NONE, grad_fn="MaxBackward0", function=False, method=False,
    returns=RETURN_TYPES["max"], scalar_operands=False, saves=("indices",))
def _max_dim(input, dim, keepdim=False):
    return _arg_extreme(jnp.argmax, "max", input, dim, keepdim)


@op(promote=P.NONE, grad_fn="MinBackward0", function=False, method=False,
    returns=RETURN_TYPES["min"], scalar_operands=False, saves=("indices",))
def _min_dim(input, dim, keepdim=False):
    return _arg_extreme(jnp.argmin, "min", input, dim, keepdim)


def _no_complex_arg(name, input):
    if jnp.iscomplexobj(input):   # (complex numbers have no order)
        raise RuntimeError(f"{name}(): does not support complex input")


def _arg(fn, name, input, dim, keepdim):
    # (complex input: refused when the plan is made, dtype_refusals)
    if input.dtype == jnp.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        check_nonempty(name, input, None)
        r = fn(input.reshape(-1))
        return r.reshape((1,) * input.ndim) if keepdim else r
    a = axis1(dim, input.ndim)
    if a is None:
        return jnp.zeros((), jnp.int64)
    check_nonempty(name, input, a)
    return fn(input, axis=a, keepdims=keepdim)


@op(promote=P.NONE, differentiable=False)
def argmax(input, dim=None, keepdim=False):
    return _arg(jnp.argmax, "argmax", input, dim, keepdim)


@op(promote=P.NONE, differentiable=False)
def argmin(input, dim=None, keepdim=False):
    return _arg(jnp.argmin, "argmin", input, dim, keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var(input, dim, unbiased, keepdim, correction, name="std and var"):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):  # var(x, False) means unbiased=False
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    axis = _axes(dim, input.ndim)
    n = input.size if axis is None else jnp.prod(jnp.array([input.shape[a] for a in axis]))
    mu = jnp.mean(input, axis=axis, keepdims=True)
    dev = input - mu
    sq = (dev * jnp.conj(dev)).real if jnp.iscomplexobj(dev) else dev * dev
    return jnp.sum(sq, axis=axis, keepdims=keepdim) / jnp.maximum(n - c, 0)


def _mean_of(input, dim, keepdim):
    d = None if isinstance(dim, bool) else dim
    return jnp.mean(input, axis=_axes(d, input.ndim), keepdims=keepdim)


@op("var", opmath=True, promote=P.COMPLEX_TO_FLOAT, grad_fn="VarBackward0")
def _var_op(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(input, dim, unbiased, keepdim, correction)


def _std(var):
    """sqrt(var) whose gradient is 0 where var is 0, as PyTorch's std backward masks it (the
    plain sqrt's infinite slope there gave NaN gradients for a constant input)."""
    zero = var == 0
    return jnp.where(zero, 0, jnp.sqrt(jnp.where(zero, 1, var)))


@op("std", opmath=True, promote=P.COMPLEX_TO_FLOAT, grad_fn="StdBackward0",
    saves=("input", "result"))
def _std_op(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _std(_var(input, dim, unbiased, keepdim, correction))


@op("var_mean", promote=P.NONE, grad_fn="VarMeanBackward0", method=False)
def _var_mean_op(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (_var(input, dim, unbiased, keepdim, correction, "var_mean"),
            _mean_of(input, dim, keepdim))


@op("std_mean", promote=P.NONE, grad_fn="StdMeanBackward0", method=False,
    saves=("input", "result0"))
def _std_mean_op(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (_std(_var(input, dim, unbiased, keepdim, correction, "std_mean")),
            _mean_of(input, dim, keepdim))


def _warn_no_dof(name, input, dim, correction):
    """PyTorch warns (and returns nan or inf) when the reduced count minus the correction
    leaves no degrees of freedom."""
    shape = tuple(input.shape)
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        kept = 1
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        wrap = max(len(shape), 1)
        if [d for d in dims if not -wrap <= d < wrap]:   # (`any` is torch.any here)
            return   # (the op refuses the dim; PyTorch checks it before this warning)
        dims = {d % len(shape) for d in dims} if shape else set()
        kept = math.prod(s for i, s in enumerate(shape) if i not in dims)
    n = math.prod(shape) / max(kept, 1)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=user_stacklevel())


def _unbiased_overload(name, fn, method=False):
    """`var(x, True)` is the (input, unbiased) overload: resolved here so that the op's
    static `dim` is never a bool (True == 1 would share a compiled plan with dim=1)."""
    def resolved(input=REQUIRED, dim=None, unbiased=REQUIRED, keepdim=False, *, correction=None,
                 out=None, axis=REQUIRED, keepdims=REQUIRED):
        dim = numpy_axis(name, dim, axis, None)   # NumPy's names, as PyTorch's parser reads
        if keepdims is not REQUIRED:
            if keepdim is not False:
                raise TypeError(f"{name}() got an unexpected keyword argument 'keepdims'")
            keepdim = keepdims
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        if dim is not None and dim.__class__ is not int and not (
                isinstance(dim, (tuple, list)) and (not dim or _is_index(dim[0]))) or \
                unbiased.__class__ not in _BOOL_OR_REQUIRED or keepdim.__class__ is not bool or \
                input is REQUIRED:
            _refuse(name, method, locals())
        if unbiased is REQUIRED:   # (not passed: None is no bool to the parser)
            unbiased = None
        _warn_no_dof(name, input, dim, _correction(unbiased, correction))
        return fn(input, dim, unbiased, keepdim, correction=correction)
    resolved.__name__ = resolved.__qualname__ = name
    return resolved


_BOOL_OR_REQUIRED = (bool, type(REQUIRED))


def _refuse(name, method, values):
    """PyTorch's TypeError for var/std arguments no overload takes (none where one does)."""
    from .errors import _entry_name, _keywords_of_call
    keywords = [k for k in _keywords_of_call(_entry_name()[1]) if k in values]
    passed = [n for n in ("input", "dim", "unbiased", "keepdim") if n not in keywords]
    defaults = {"dim": None, "unbiased": REQUIRED, "keepdim": False}
    while passed[-1] != "input" and values[passed[-1]] is defaults[passed[-1]]:
        passed.pop()   # (trailing defaults: not passed)
    if values["input"] is REQUIRED:   # (then nothing was passed by position)
        passed = []
    error = overloads.parser_error(name, method, [values[n] for n in passed[method:]],
                                   {k: values[k] for k in keywords})
    if error is not None:
        raise error


var = _unbiased_overload("var", _var_op)
std = _unbiased_overload("std", _std_op)
var_mean = _unbiased_overload("var_mean", _var_mean_op)
std_mean = _unbiased_overload("std_mean", _std_mean_op)


def order_zero(p=None, **_):
    """`undefined_grad` of the norms: PyTorch's norm backward leaves order 0's undefined."""
    return p == 0


def _vector_norm(x, ord, axis, keepdim):
    ax = axis
    a = jnp.abs(x)
    if ord in (float("inf"), float("-inf")):
        # PyTorch's backward is sgn(x) times a share of the ties: 0 at a zero entry, also when
        # the norm is 0 (JAX's |x|' is 1 at 0 and max/min would share among the zeros)
        a = jnp.where(a == 0, 0, a)
        return (jnp.max if ord > 0 else jnp.min)(a, axis=ax, keepdims=keepdim)
    if ord == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis=ax, keepdims=keepdim)
    if ord == 2:
        sq = jnp.sum(a * a, axis=ax, keepdims=keepdim)
        # PyTorch's norm has gradient 0 (not nan) at the zero vector
        safe = jnp.where(sq == 0, 1, sq)
        return jnp.where(sq == 0, 0, jnp.sqrt(safe))
    if ord == 1:  # gradient sgn(x): 0 at 0 (JAX's |x|' is 1 there)
        return jnp.sum(jnp.where(a == 0, 0, a), axis=ax, keepdims=keepdim)
    # PyTorch's norm backward gives zero entries gradient 0 (not |0|^(p-1), inf for p < 1)
    zero = a == 0
    safe_a = jnp.where(zero, 1, a)
    s = jnp.sum(jnp.where(zero, 0.0 if ord > 0 else jnp.inf, safe_a ** ord), axis=ax,
                keepdims=keepdim)
    safe = jnp.where(s == 0, 1, s)
    return jnp.where(s == 0, 0, safe ** (1.0 / ord))


@op(opmath=True, promote=P.COMPLEX_TO_FLOAT, grad_fn="LinalgVectorNormBackward0",
    saves=("input", "result"), saved_as={"ord": lambda p, **_: 2 if p in ("fro", None) else p,
                                         "p": None}, undefined_grad=order_zero)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        from .pointwise import legacy_name
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {legacy_name(input)}")
    axis = _axes(dim, input.ndim)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return jnp.sum(jnp.linalg.svd(input, compute_uv=False), axis=-1, keepdims=keepdim)
    return _vector_norm(input, float(p), axis, keepdim)



@op(grad_fn="RenormBackward0", inplace=True, tensors=("input",))
def renorm(input, p, dim, maxnorm):
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled down to norm maxnorm."""
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if jnp.iscomplexobj(input) or not jnp.issubdtype(input.dtype, jnp.floating):
        from .pointwise import not_implemented
        raise not_implemented("renorm_out", input)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    from .shape import _wrap_dim
    d = _wrap_dim(dim, input.ndim)
    axes = tuple(i for i in range(input.ndim) if i != d)
    nrm = _vector_norm(input, float(p), axes, True)
    # PyTorch's factor; its 1e-7 keeps the division finite at tiny norms
    return input * jnp.where(nrm > maxnorm, maxnorm / (nrm + 1e-7), 1.0).astype(input.dtype)

_logsumexp_half = pytorch_grad(half_softmax.logsumexp, half_softmax.logsumexp_grad)


@op(promote=P.INT_TO_FLOAT, grad_fn="LogsumexpBackward0", saves=("input", "result"))
def logsumexp(input, dim, keepdim=False):
    axes = _axes(dim, input.ndim)
    if input.dtype in (jnp.float16, jnp.bfloat16):
        return _logsumexp_half(input, axes, keepdim, jnp.dtype(input.dtype).name)
    return jax.scipy.special.logsumexp(input, axis=axes, keepdims=keepdim)


@op(opmath=True, promote=P.INT_TO_LONG, grad_fn="CumsumBackward0", inplace=True, saves=())
def cumsum(input, dim, *, dtype=None):
    a = axis1(dim, input.ndim)
    return input if a is None else jnp.cumsum(input, axis=a)


@op(opmath=True, promote=P.INT_TO_LONG, grad_fn="CumprodBackward0", inplace=True,
    saves=("input", "result"))
def cumprod(input, dim, *, dtype=None):
    a = axis1(dim, input.ndim)
    return input if a is None else jnp.cumprod(input, axis=a)


def _cum_extreme(name, input, dim, better):
    if input.size:
        _reject(f"{name}_cpu", input, "c")
    if input.ndim == 0:
        if dim not in (-1, 0):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got "
                             f"{dim}")
        return input, jnp.zeros((), jnp.int64)
    axis = axis1(dim, input.ndim)
    n = input.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(n).reshape([-1 if i == axis else 1
                                                   for i in range(input.ndim)]), input.shape)

    def combine(a, b):
        # PyTorch keeps the last index among equal values; a NaN sticks once seen
        va, ia = a
        vb, ib = b
        take_b = better(vb, va) | (vb == va) | jnp.isnan(vb)
        take_b = take_b & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    v, i = jax.lax.associative_scan(combine, (input, idx), axis=axis)
    return v, i


@op(promote=P.NONE, grad_fn="CummaxBackward0", returns=RETURN_TYPES["cummax"],
    saves=("input", "indices"))
def cummax(input, dim):
    return _cum_extreme("cummax", input, dim, jnp.greater)


@op(promote=P.NONE, grad_fn="CumminBackward0", returns=RETURN_TYPES["cummin"],
    saves=("input", "indices"))
def cummin(input, dim):
    return _cum_extreme("cummin", input, dim, jnp.less)


@op(promote=P.NONE, grad_fn="LogcumsumexpBackward0", saves=("input", "result"))
def logcumsumexp(input, dim):
    _reject("logcumsumexp_out_cpu", input, "bi")   # (PyTorch's kernel is floating-only)
    a = axis1(dim, input.ndim)
    return input if a is None else jax.lax.cumlogsumexp(input, axis=a)


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
    return _axes(dim, max(ndim, 1))[0]  # a 0-d input takes dim 0 / -1, as a 1-element one


def _along(fn, x, dim):
    """fn(x, axis) along the softmax dim; a 0-d input computed as a 1-element vector."""
    axis = _softmax_dim(x.ndim, dim)
    if not jnp.issubdtype(x.dtype, jnp.floating) or x.dtype.itemsize == 1:
        # (x is already cast to `dtype=`; ATen's kernels are float-only, float8 excluded)
        from .pointwise import not_implemented
        last = "_lastdim" if axis == max(x.ndim, 1) - 1 else ""
        raise not_implemented(f"{fn.__name__}{last}_kernel_impl", x)
    if x.ndim == 0:
        return fn(x.reshape(1), 0).reshape(())
    return fn(x, axis)


# PyTorch's half kernels compute in float32 and round once; their backward reads the rounded
# output: softmax y * (t - sum(t * y)) and log_softmax t - sum(exp(y) * t) are transposed by
# JAX into PyTorch's y * (g - sum(g * y)) and g - exp(y) * sum(g) (see half_grad.py)
_softmax_grad = lambda t, x, y, r, axis, *_: y * (  # noqa: E731
    t - jnp.sum(t * y, axis=axis, keepdims=True))
_softmax = pytorch_grad(jax.nn.softmax, _softmax_grad, half_only=True)
_softmax_inner = pytorch_grad(half_softmax.softmax_inner, _softmax_grad, half_only=True)
_log_softmax_grad = lambda t, x, y, r, axis, *_: t - jnp.sum(  # noqa: E731
    jnp.exp(y) * t, axis=axis, keepdims=True)
_log_softmax = pytorch_grad(jax.nn.log_softmax, _log_softmax_grad, half_only=True)


def _log_softmax_half_lastdim(x, axis, half):
    """PyTorch's CPU half-precision log_softmax over the last dim: its kernel keeps the sum of
    exponentials, and then its log, in the half type (each rounded) before x - max - log."""
    def rounded(v):
        return v.astype(half).astype(v.dtype)
    shift = x - jax.lax.stop_gradient(jnp.max(x, axis, keepdims=True))
    return shift - rounded(jnp.log(rounded(jnp.sum(jnp.exp(shift), axis, keepdims=True))))


_log_softmax_lastdim = pytorch_grad(_log_softmax_half_lastdim, _log_softmax_grad,
                                    half_only=True, name="log_softmax")


def _log_softmax_of(x, axis):
    if x.dtype in (jnp.float16, jnp.bfloat16) and axis == x.ndim - 1:
        return _log_softmax_lastdim(x, axis, jnp.dtype(x.dtype).name)
    return _log_softmax(x, axis)


_log_softmax_of.__name__ = "log_softmax"   # (named by `_along`'s integer-input error)


def _softmax_of(x, axis):
    if x.dtype in (jnp.float16, jnp.bfloat16) and axis < x.ndim - 1:
        return _softmax_inner(x, axis, jnp.dtype(x.dtype).name)
    return _softmax(x, axis)


_softmax_of.__name__ = "softmax"


@op(grad_fn="SoftmaxBackward0", tensors=("input",), casts_input=True,
    saves="result")   # (backward reads the output only; the input may change in place)
def softmax(input, dim, dtype=None):
    return _along(_softmax_of, input, dim)


@op(grad_fn="LogSoftmaxBackward0", tensors=("input",), casts_input=True,
    saves="result")   # (backward reads the output only; the input may change in place)
def log_softmax(input, dim, dtype=None):
    return _along(_log_softmax_of, input, dim)


@op(promote=P.DEFAULT, grad_fn="TraceBackward0")
def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return jnp.trace(input)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    from .pointwise import isclose
    return bool(all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input, other):
    """True if both have the same size and elements (compared after promotion)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(all(REGISTRY["eq"].function(input, other)).item())


# ---- overloads resolved in Python (one op per PyTorch overload) --------------------------

def _overloaded(name, full, by_dim, binary=None, method=False):
    """`max`/`min`/`median`: the overload without `dim` (the whole tensor), with `dim`, or
    (max/min) with another tensor, chosen (or refused) as PyTorch's argument parser does."""
    sigs = []   # PyTorch's, in the order of `calls` (read on first use: not at import)
    calls = [lambda input: full(input), lambda input, other: binary(input, other),
             lambda input, dim, keepdim=False: by_dim(input, dim, keepdim)]
    if binary is None:
        del calls[1]

    def fn(*args, **kwargs):
        if method:
            input, args = args[0], args[1:]
        if not sigs:
            sigs.extend(overloads.table(name, method))
        index, bound = overloads.parse(name, sigs, args, kwargs)
        return calls[index](input, **bound) if method else calls[index](**bound)
    fn.__name__ = fn.__qualname__ = name
    # named so (in tracebacks, and for argument errors of its ops: `max(): argument ...`)
    fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name)
    return fn


def _bind_overloads():
    from .._tensor import Tensor
    from .pointwise import maximum, minimum
    from . import sorting, order_statistics, searching, counting
    stats = order_statistics
    overloads = {"max": (_max_all, _max_dim, maximum), "min": (_min_all, _min_dim, minimum),
                 "median": (stats._median_all, stats._median_dim),
                 "nanmedian": (stats._nanmedian_all, stats._nanmedian_dim)}
    out = {}
    for k, fns in overloads.items():
        out[k] = _overloaded(k, *fns)
        setattr(Tensor, k, _overloaded(k, *fns, method=True))
    out.update(allclose=allclose, equal=equal, var=var, std=std,
               var_mean=var_mean, std_mean=std_mean)
    Tensor.allclose, Tensor.equal = allclose, equal
    Tensor.var = _unbiased_overload("var", _var_op, method=True)
    Tensor.std = _unbiased_overload("std", _std_op, method=True)
    # the sorting family's Python-level functions (host-side: unique, bincount, ...) are
    # public too
    for mod in (sorting, order_statistics, searching, counting):
        out.update({name: getattr(mod, name) for name in mod.PLAIN})
    return out


OVERLOADS = _bind_overloads()
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
_fns = composite("nanmean", _nanmean_steps)
globals().update(_fns)
OVERLOADS.update(_fns)
# (declared after `axis1`, which it imports from here)
from . import integration  # noqa: E402
OVERLOADS.update(integration.OVERLOADS)


from .out_arg import OUT_NAMES  # noqa: E402


def _nuclear_norm_binding(fused, method):
    """`torch.norm(A, "nuc", dim, keepdim)` is PyTorch's `linalg.matrix_norm(A, "nuc", dim or
    all dims, keepdim)`: its nodes, its 2-tuple dim check. So is any other string norm but
    "fro" over at most two dims (a 3-dim "fro" or an unknown order get matrix_norm's errors);
    other norms are the op."""
    def binding(*args, **kwargs):
        names = ("input", "p", "dim", "keepdim")
        bound = dict(zip(names, args), **kwargs)
        p, dim = bound.get("p", "fro"), bound.get("dim")
        if not isinstance(p, str) or kwargs.get("out") is not None or (
                p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
            return fused(*args, **kwargs)
        from ..linalg import matrix_norm
        input = bound["input"]
        dim = tuple(range(input.ndim)) if dim is None else (dim,) if isinstance(dim, int) \
            else dim
        return matrix_norm(input, p, dim, bound.get("keepdim", False), dtype=bound.get("dtype"))
    return binding


_fns = rebind("norm", _nuclear_norm_binding, out=lambda alias: alias in OUT_NAMES)
globals().update(_fns)
OVERLOADS.update(_fns)
