"""The functions of `torch.masked` on dense tensors (see the package docstring)."""
import builtins
import math

import torchish

_TO_INT64 = ("uint8", "bool", "int8", "int16", "int32")


def _identity(op, input, ord=2.0):
    """The 0-d tensor a masked-out element becomes for `op`, or None where it has none."""
    dtype = input.dtype
    integral = not (dtype.is_floating_point or dtype.is_complex)
    # (an integer type's extreme serves as an infinity for signed types and uint8 only)
    bounded = integral and (dtype.is_signed or dtype.name == "uint8")

    def fill(value):
        return torchish.tensor(value, dtype=dtype, device=input.device)
    if op in ("sum", "cumsum"):
        return fill(0)
    if op in ("prod", "cumprod"):
        return fill(1)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if dtype.is_floating_point or op == "logsumexp" and dtype.is_complex:
            return fill(-math.inf)
        if bounded:
            return fill(torchish.iinfo(dtype).min)
    elif op in ("amin", "argmin"):
        if dtype.is_floating_point:
            return fill(math.inf)
        if bounded:
            return fill(torchish.iinfo(dtype).max)
    elif op == "norm":
        if ord == -math.inf:
            if not dtype.is_floating_point:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return fill(math.inf)
        return fill(0)
    elif op == "median":
        return torchish.tensor(math.nan, device=input.device,
                               dtype=dtype if dtype.is_floating_point else torchish.float32)
    raise NotImplementedError(f"identity of {op} on {dtype} input")


def _dims(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims (None or () mean all of them)."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    ndim = builtins.max(ndim, 1)
    found = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in found:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                             f"{ndim - 1}], but got {d})")
        found.append(d % ndim)
    return tuple(sorted(found))


def _input_mask(input, mask):
    """`mask` broadcast to the input's shape, as bool."""
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = torchish.broadcast_to(mask.clone(), input.shape)
    return mask.to(dtype=torchish.bool)


def _masked(op, input, mask, ord=2.0):
    """`input` with its masked-out elements replaced by `op`'s identity."""
    if not isinstance(input, torchish.Tensor) or input.layout is not torchish.strided:
        raise ValueError(f"masked {op} expects strided tensor (got "
                         f"{getattr(input, 'layout', type(input).__name__)} tensor)")
    if mask is None:
        return input
    return torchish.where(_input_mask(input, mask), input, _identity(op, input, ord))


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = torchish.int64 if input.dtype.name in _TO_INT64 else input.dtype
    return torchish.sum(_masked("sum", input, mask), _dims(dim, input.ndim), bool(keepdim),
                        dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = torchish.int64 if input.dtype.name in _TO_INT64 else input.dtype
    result = _masked("prod", input, mask).to(dtype=dtype)
    for d in reversed(_dims(dim, input.ndim)):   # (prod takes one dim at a time)
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.cumsum(_masked("sum", input, mask), _dims(dim, input.ndim)[0],
                           dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.cumprod(_masked("prod", input, mask), _dims(dim, input.ndim)[0],
                            dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.amax(_masked("amax", input, mask), _dims(dim, input.ndim),
                         bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.amin(_masked("amin", input, mask), _dims(dim, input.ndim),
                         bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    # (the indices come back in `dtype`, by default the input's: PyTorch's choice)
    dtype = input.dtype if dtype is None else dtype
    return torchish.argmax(_masked("argmax", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.argmin(_masked("argmin", input, mask), dim, bool(keepdim)).to(dtype=dtype)


def _count_and_total(input, dim, keepdim, dtype, mask):
    """(how many elements each reduction keeps, their masked sum)."""
    if mask is None:
        ones = torchish.ones(input.shape, dtype=torchish.int64, device=input.device)
        return sum(ones, dim, keepdim=keepdim), sum(input, dim, keepdim=keepdim, dtype=dtype)
    kept = _input_mask(input, mask)
    return kept.sum(dim=dim, keepdim=bool(keepdim)), sum(input, dim, keepdim=keepdim,
                                                         dtype=dtype, mask=kept)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    _masked("mean", input, None)
    count, total = _count_and_total(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=torchish.float32)
    out = torchish.nanmedian(_masked("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if torchish.isnan(out).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.logsumexp(_masked("logsumexp", input, mask), _dims(dim, input.ndim),
                              keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.logaddexp(_masked("logaddexp", input, input_mask),
                              _masked("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.linalg.vector_norm(_masked("norm", input, mask, ord), ord,
                                       _dims(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = float(correction) if correction is not None else \
        (1.0 if unbiased is None or unbiased else 0.0)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torchish.float32
    compute = dtype if dtype.is_floating_point or dtype.is_complex else torchish.float32
    _masked("std/var", input, None)
    count, total = _count_and_total(input, dim, True, dtype, mask)
    x = torchish.subtract(input, torchish.divide(total, count))
    kept = None if mask is None else _input_mask(input, mask)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=kept)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = torchish.subtract(count.to(real), correction)
        count = torchish.maximum(count, count.new_zeros([]))
    out = torchish.divide(total, count).to(dtype=dtype)
    return torchish.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.nn.functional.softmax(_masked("amax", input, mask),
                                          _dims(dim, input.ndim)[0], dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.nn.functional.log_softmax(_masked("amax", input, mask),
                                              _dims(dim, input.ndim)[0], dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torchish.nn.functional.softmin(_masked("amin", input, mask),
                                          _dims(dim, input.ndim)[0], dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    kept = _masked("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torchish.divide(kept, torchish.maximum(nrm, nrm.new_full([], eps)))
