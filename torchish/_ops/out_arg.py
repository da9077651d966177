"""`out=` arguments: which public functions take one, and writing a result into it.

PyTorch's functions (not methods, not in-place variants) accept `out=`: the result is computed,
then written into `out` in place (resizing it, casting to its dtype where allowed, bumping its
version) and `out` itself is returned. The registry (`registry.dispatch_out`) and the Python-level
functions (`accept_out`) both end here, so the rules live in one place.
"""
import functools
import inspect
import math
import sys
import warnings

import jax
import jax.numpy as jnp

from .. import _dtype as dt
from .._tensor import Tensor, _check_versioned
from .._storage import InferenceStorage, Storage, holders_of, reseat_holders
from .._views import base_view, contiguous_strides, extend
from .._warnings import user_stacklevel
from ..autograd import grad_mode
from .inplace import OVERLAP_RULES, check_overlap
from .return_types import _rt

__all__ = ["OUT_NAMES", "accept_out", "check_out", "write_out", "resize_", "resize_as_"]

# The torch.* functions that take `out=` in at least one overload (PyTorch 2.13, checked by
# calling each with out= under real torch). Methods and in-place variants never do.
OUT_NAMES = frozenset("""
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax
angle any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort
asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and bitwise_left_shift bitwise_not
bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ceil cholesky clamp clamp_max
clamp_min clip column_stack complex concat concatenate copysign cos cosh cross cummax cummin
cumprod cumsum deg2rad diag diff digamma div divide dot dstack empty eq erf erfc erfinv exp
exp2 expm1 eye fix floor floor_divide fmax fmin fmod frac frexp full gather ge ger greater
greater_equal gt heaviside histc hstack hypot i0 index_add index_copy index_select inverse
isin isneginf isposinf kron kthvalue ldexp le lerp less less_equal lgamma linspace log log10
log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or
logical_xor logit logspace logsumexp lt masked_select matmul matrix_power max maximum mean
median min minimum mm mode msort mul multinomial multiply mv nan_to_num nanmean nanmedian
nanquantile nansum ne neg negative nonzero norm normal not_equal ones outer polar polygamma
pow prod quantile rad2deg rand randint randn randperm range reciprocal remainder round
row_stack rsqrt scatter scatter_add scatter_reduce searchsorted sgn sigmoid sign signbit sin
sinc sinh softmax sort sqrt square stack std sub subtract sum take take_along_dim tan tanh
tensordot threshold topk tril triu true_divide trunc var vdot vstack where xlogy zeros
alias_copy as_strided_copy cholesky_inverse cholesky_solve conj_physical diagonal_copy
expand_copy float_power gcd geqrf histogram histogramdd igamma igammac index_reduce inner lcm
lu lu_solve lu_unpack mvlgamma narrow_copy nextafter orgqr ormqr permute_copy qr renorm slice_scatter
select_copy slice_copy split_copy split_with_sizes_copy squeeze_copy svd t_copy transpose_copy triangular_solve unbind_copy
unfold_copy unsqueeze_copy view_copy
lstsq matrix_rank solve symeig
""".split())

# Reductions that accumulate in out's dtype when no `dtype=` is given.
DTYPE_FROM_OUT = frozenset(("sum", "prod", "cumsum", "cumprod"))

# Factory functions: `out` gives the dtype and device when none is asked for.
FACTORIES = frozenset("zeros ones empty full arange range linspace logspace eye rand randn "
                      "randint randperm normal".split())
# these resize `out` before anything else, so a grad-requiring `out` fails there
_RESIZE_FIRST = frozenset(("empty", "randn"))

# The aten name PyTorch's autograd error gives for an alias.
_ATEN_NAME = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "clip": "clamp", "concat": "cat", "concatenate": "cat", "column_stack": "cat",
    "hstack": "cat", "vstack": "cat", "dstack": "cat", "row_stack": "cat", "divide": "div",
    "true_divide": "div", "multiply": "mul", "subtract": "sub", "negative": "neg",
    "fix": "trunc", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "not_equal": "ne", "norm": "linalg_vector_norm", "cross": "linalg_cross", "ger": "outer",
}

# Ops whose `out` must have the result's dtype exactly (no casting), with PyTorch's message;
# {res}/{out} are C type names ("float"), {Res}/{Out} PyTorch's ("Float").
_EXPECTED = "Expected out tensor to have dtype {res}, but got {out} instead"
_FOUND = "Found dtype {Out} but expected {Res}"
_SAME_DTYPE = dict.fromkeys(
    "addmm addmv baddbmm bmm mm mv cross diag gather index_add index_copy log_softmax softmax "
    "msort norm scatter scatter_add scatter_reduce take_along_dim tril triu".split(), _EXPECTED)
_SAME_DTYPE.update(dict.fromkeys(
    "abs absolute ceil floor frac neg negative round sgn sign trunc fix".split(), _FOUND))
_SAME_DTYPE.update({
    "matmul": _EXPECTED,  # (1-d operands give dot's text)
    "dot": "result dtype {Out} does not match input dtype {Res}",
    "vdot": "result dtype {Out} does not match input dtype {Res}",
    "index_select": "index_select(): self and result must have the same scalar type",
    "masked_select": "masked_select(): self and result must have the same scalar type",
    "amax": "Expected the dtype for input and out to match, but got {Res} for input's dtype "
            "and {Out} for out's dtype.",
    "amin": "Expected the dtype for input and out to match, but got {Res} for input's dtype "
            "and {Out} for out's dtype.",
    "diff": "expected scalar_type {Res} but found {Out}",
    "logcumsumexp": "expected scalar_type {Res} but found {Out}",
    "quantile": "quantile() out tensor must be same dtype as the input tensor",
    "nanquantile": "quantile() out tensor must be same dtype as the input tensor",
    "nan_to_num": "nan_to_num: dtype of out: {Out} should be same as input: {Res}",
})
_HIST = ("torch.histogram: input tensor and hist tensor should have the same dtype, but got "
         "input {res} and hist {out}")
_SEARCH = ("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
           "Long(int64) depending on whether out_int32 flag is True, but we got output "
           "tensor's dtype {Out} and out_int32 flag is {int32}")
_SAME_DTYPE.update({   # a tuple: one template per output
    "histc": _HIST,
    "histogram": (_HIST, "torch.histogram: input tensor and bin_edges tensor should have the "
                         "same dtype, but got input {res} and bin_edges {out} for dimension 0"),
    "searchsorted": _SEARCH, "bucketize": _SEARCH,
    "kthvalue": ("output values must be of same type as input",
                 "output indices must be of scalar type Long"),
    "median": ("Expected tensor for 'values' to have the same type as tensor for argument #2 "
               "'self'; but type torch.{Out}Tensor does not equal torch.{Res}Tensor (while "
               "checking arguments for median)",
               "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
               "torch.{Out}Tensor instead (while checking arguments for median)"),
    "cummax": "expected scalar_type {Res} but found {Out}",
    "cummin": "expected scalar_type {Res} but found {Out}",
})

# Ops whose `out` may have another dtype the result casts to, with PyTorch's own error where
# it cannot: (exception type, message template as above).
_NANSUM = (NotImplementedError, '"nansum_cpu" not implemented for \'{Out}\'')
_CAST_REFUSAL = {
    "logsumexp": (RuntimeError, "logsumexp(): Expected floating point type for result tensor, "
                                "but got: {Out}"),
    "nansum": _NANSUM, "nanmean": _NANSUM,
}

_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def expected_dtype(res, got):
    return _EXPECTED.format(res=_C_NAMES[res.name], out=_C_NAMES[got.name])


# Ops whose out= overload PyTorch generates from the functional op: an input that requires grad
# gives `out` a node whose backward raises (`finish_autogen_out`), instead of the refusal; an
# `out` that requires grad is refused under the op's schema name.
AUTOGEN_OUT = frozenset({
    "alias_copy", "diagonal_copy", "expand_copy", "permute_copy", "select_copy", "slice_copy",
    "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
    "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"})


def _grad_error(name):
    return RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                        "differentiation, but one of the arguments requires grad.")


def _tensors_in(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, Tensor))


def check_out(name, out, inputs, multi=None):
    """The `out` tensors as a tuple, after PyTorch's checks that need no result: its type and,
    in grad mode, that neither it nor an input requires grad. `multi`: whether the op
    returns several tensors (None: either is accepted)."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if multi is not None and isinstance(out, (tuple, list)) != multi or not all(
            isinstance(o, Tensor) for o in outs):
        what = "tuple of Tensors" if multi else "Tensor"
        raise TypeError(f"{name}(): argument 'out' must be {what}, not "
                        f"{type(out).__name__}")
    if grad_mode.GRAD_ENABLED[0]:
        if name in AUTOGEN_OUT:
            if any(o.requires_grad for o in outs):
                raise _grad_error("aten::" + name)
        elif any(o.requires_grad for o in outs) or any(
                t.requires_grad for t in _tensors_in(inputs)):
            raise _grad_error(_ATEN_NAME.get(name, name))
    rule = OVERLAP_RULES.get(_ATEN_NAME.get(name, name))
    if rule is not None:   # (PyTorch's kernel checks this before it computes or resizes)
        operands = list(_tensors_in(inputs))
        for o in outs:
            check_overlap(o, operands, rule)
    return outs


def finish_autogen_out(name, outs, inputs, result):
    """What an AUTOGEN_OUT op's out= overload returns once `result` (from `write_out`) is
    written: a TensorList `out` gives None (its tensors get no node); a Tensor `out` is
    returned, with PyTorch's node that cannot differentiate when an input requires grad."""
    if isinstance(result, (tuple, list)):
        return None
    from .call_jax import record_not_implemented
    from .recording import NOT_IMPLEMENTED
    record_not_implemented(NOT_IMPLEMENTED, RuntimeError(
        f"derivative for aten::{name} is not implemented"), list(_tensors_in(inputs)), outs)
    return result


def _check_dtype(name, result, out, exact, index=0):
    res, got = result.dtype, out.dtype
    if res is got:
        return
    template = _SAME_DTYPE.get(name, _EXPECTED if exact else None)
    if isinstance(template, tuple):
        template = template[index]
    error = RuntimeError
    if template is None:
        if dt.can_cast(res, got):
            return
        error, template = _CAST_REFUSAL.get(name, (
            RuntimeError, "result type {Res} can't be cast to the desired output type {Out}"))
    raise error(template.format(res=_C_NAMES[res.name], out=_C_NAMES[got.name],
                                Res=res._legacy, Out=got._legacy, int32=res.name == "int32"))


def write_out(name, outs, result, stacklevel=None):
    """Write `result` (a Tensor or a tuple of them) into the `outs` from `check_out` and
    return what PyTorch returns: `out` itself, or a named tuple `<op>_out` of the outs.
    (`stacklevel` is unused: the resize warning finds the user's frame itself.)"""
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(f"{name}(): expected {len(results)} out tensors, got {len(outs)}")
    for i, (o, r) in enumerate(zip(outs, results)):
        if o.device != r.device:
            raise RuntimeError(f"Attempting to copy from device {r.device} to device "
                               f"{o.device}, but cross-device copies are not allowed!")
        _check_dtype(name, r, o, exact=len(results) > 1, index=i)
    for o, r in zip(outs, results):
        shape = tuple(r.shape)
        if tuple(o.shape) != shape:
            if o.numel():
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape "
                    f"{list(o.shape)}, which does not match the required output shape "
                    f"{list(shape)}. This behavior is deprecated, and in a future PyTorch "
                    "release outputs will not be resized unless they have zero elements. You "
                    "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                    "elements with t.resize_(0).", UserWarning, stacklevel=user_stacklevel())
            _resize(o, shape)
        o._set_data(r._data)  # casts to out's dtype; bumps the version once
    for o in outs:
        _check_versioned(o)
    if not isinstance(result, (tuple, list)):
        return outs[0]
    cls = type(result)
    if hasattr(cls, "_fields"):   # a torch.return_types named tuple: its `<op>_out` twin
        return _out_type(cls.__name__, cls._fields)(*outs)
    return outs


@functools.lru_cache(maxsize=None)
def _out_type(name, fields):
    return _rt(name + "_out", fields)


# ---- resizing ------------------------------------------------------------------------------

_ONLY_T = 3   # references to a storage held by one tensor, seen inside `_resize`: its slot,
#              the local name and getrefcount's argument


def _resize(t, shape):
    """Give `t` the contiguous shape `shape`, keeping its leading elements, as PyTorch's
    resize: within its storage it stays a view of it; past its end the storage grows (new
    elements are zeros: JAX has no uninitialised memory)."""
    n = math.prod(shape)
    storage = t._storage
    total = storage.data.size
    # (a storage only `t` holds may change shape; one shared with view-less aliases, as
    # `x.detach()` is, keeps it and `t` becomes a view: the aliases keep their shapes)
    if t._view is None and sys.getrefcount(storage) <= _ONLY_T:
        if n == total:
            storage.data = storage.data.reshape(shape)
            return
        if n > total and storage.device.type == "meta":   # (no elements to keep)
            storage.data = storage.data.reshape(shape)
            return
        if n > total:
            flat = jnp.concatenate([storage.data.reshape(-1),
                                    jnp.zeros(n - total, storage.data.dtype)])
            storage.data = flat.reshape(shape)
            return
    offset = t.storage_offset()
    if offset + n <= total:
        t._view = extend(base_view(storage.data.shape),
                         ("as_strided", shape, contiguous_strides(shape), offset))
        t._cache, t._cache_base = None, None
        return
    if _grow_shared(t, storage, offset + n):
        t._view = extend(base_view(storage.data.shape),
                         ("as_strided", shape, contiguous_strides(shape), offset))
        t._cache, t._cache_base = None, None
        return
    # (a storage we cannot grow in place) it keeps its own elements, in a storage of its own
    flat = t._data.reshape(-1)
    keep = min(flat.size, n)
    value = jnp.concatenate([flat[:keep], jnp.zeros(n - keep, flat.dtype)]).reshape(shape)
    kind = InferenceStorage if type(storage) is InferenceStorage else Storage   # (stays one)
    t._storage = kind(value, storage.device)
    t._view, t._base, t._cache, t._cache_base = None, None, None, None


def _grow_shared(t, storage, needed):
    """Grow a view's storage in place to hold `needed` elements, as PyTorch does, so its base
    and other views keep reading (and seeing writes to) the elements they had. The array grows
    along its leading dimension (flat offsets of the old elements are unchanged); every other
    tensor on the storage then reads its old rows through a leading slice (`holders_of`: a
    heap scan, paid only on this rare path; PyTorch deprecates resizing outputs that have
    elements). False where the storage cannot grow so."""
    data = storage.data
    if type(storage) not in (Storage, InferenceStorage) or data.ndim == 0 or \
            isinstance(data, jax.core.Tracer) or storage.device.type == "meta":
        return False
    row = math.prod(data.shape[1:])
    holders = [x for x in holders_of(storage) if x is not t]
    if row == 0 or any(x._view is not None and x._view.steps and x._view.steps[0][0] == "dtype"
                       for x in holders + [t]):
        return False   # (a dtype view reinterprets the whole array: no slice may precede it)
    storage.data = jnp.concatenate([data, jnp.zeros((-(-needed // row) - data.shape[0],)
                                                    + data.shape[1:], data.dtype)])
    reseat_holders(storage, ("slice", 0, 0, data.shape[0], 1), holders)
    return True


def _check_resizable(t):
    if t.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def resize_(self, *sizes, memory_format=None):
    """`Tensor.resize_`: reshape in place to `sizes` (contiguous), keeping leading elements."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: {list(shape)}")
    _check_resizable(self)
    if tuple(self.shape) != shape or not self.is_contiguous():
        _resize(self, shape)
        self._vc[0] += 1
        _check_versioned(self)
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, tuple(the_template.shape))


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_


# ---- Python-level functions ----------------------------------------------------------------

def accept_out(name, fn):
    """`fn` (a function written in Python over ops) taking `out=` as PyTorch's `name` does
    (unless `fn` handles `out=` itself: `fn.handles_out`)."""
    if getattr(fn, "handles_out", False):
        return fn
    if name not in OUT_NAMES:
        return _reject_out(name, fn)
    factory = name in FACTORIES

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if factory and not any(_tensors_in(args)):
            return _factory_out(name, fn, out, args, kwargs)
        outs = check_out(name, out, args + tuple(kwargs.values()))
        return write_out(name, outs, fn(*args, **kwargs), 3)
    return with_out


def _reject_out(name, fn):
    """`fn` as is, unless its signature would silently take (and ignore) an `out=`."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "out" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn

    @functools.wraps(fn)
    def without_out(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        return fn(*args, **kwargs)
    return without_out


def _factory_out(name, fn, out, args, kwargs):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.GRAD_ENABLED[0] and out.requires_grad:
        if name in _RESIZE_FIRST:
            raise RuntimeError("cannot resize variables that require grad")
        raise _grad_error("aten::" + name)
    dtype = kwargs.get("dtype")
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtype._legacy} does not match dtype of out parameter "
                           f"({out.dtype._legacy})")
    kwargs = dict(kwargs, dtype=out.dtype)
    kwargs.setdefault("device", out.device)
    kwargs.pop("requires_grad", None)
    resized = tuple(out.shape)
    result = write_out(name, (out,), fn(*args, **kwargs), 4)
    if name == "randn" and resized != tuple(out.shape):  # resize_ then normal_ in PyTorch
        out._vc[0] += 1
    return result
