"""Searching and histograms: searchsorted/bucketize (with PyTorch's warnings on non-contiguous
operands), histc, isin."""
import math

import jax
import jax.numpy as jnp

from .composite import rebind
from .registry import Promote, op

P = Promote

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
    if jnp.ndim(values) == 0 and seq.ndim != 1:
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and input value's "
            "dim(0) numel(1)")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq.ndim > 1 and (jnp.ndim(values) != seq.ndim or
                         tuple(seq.shape[:-1]) != tuple(jnp.shape(values)[:-1])):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor "
            f"{list(jnp.shape(values))}")


def _sorter_range_check(compute, sorted_sequence, input, sorter=None, *args, **kw):
    # a value check, so on concrete operands only (the forward gathers out of range silently)
    n = sorted_sequence.shape[-1] if sorted_sequence.ndim else 0
    if sorter is not None and sorter.numel() and (
            int(sorter.min()) < 0 or int(sorter.max()) >= n):
        return RuntimeError("torch.searchsorted(): sorter index out of range")
    return None


@op(promote=P.NONE, differentiable=False, method=False,
    tensors=("sorted_sequence", "input", "sorter"), scalar_operands=("input",),
    check=_sorter_range_check)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(sorted_sequence.shape)}and "
                               f"got sorter tensor {list(sorter.shape)}")   # (sic: no space)
        if sorter.dtype != jnp.int64:
            from .pointwise import legacy_name
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {legacy_name(sorter)}")
    _check_search(sorted_sequence, input)
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

PLAIN = []


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
