"""`make_tensor`: random test tensors drawn as PyTorch's are (same generator calls, so the
same values for the same seed)."""
import collections.abc
import math
import warnings

from .. import _dtype as dt

_INTEGRAL = (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64)
_FLOATING = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
_COMPLEX = (dt.complex64, dt.complex128)


def _bounds(low, high, dtype, lowest, highest, default_low, default_high):
    """The [low, high) actually sampled: defaults filled, clamped to the dtype's range."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if dtype is dt.bool or dtype in _INTEGRAL:
        # randint's high is exclusive: both bounds round up so no value falls below `low`
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform_(t, low, high, finfo_max):
    # uniform_ needs high - low to be representable: sample half the range, then double
    if high - low >= finfo_max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """torch.testing.make_tensor: a tensor of `shape` with values uniform in [low, high)
    (defaults [-9, 9] for floats, [-9, 10) for integers, {False, True} for bool)."""
    import torchish
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and (dtype is dt.bool or dtype in _INTEGRAL):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dim, then every other element (offset by one)
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is dt.bool:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        result = torchish.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = torchish.iinfo(dtype)
        # randint cannot draw int64's maximum, so int64's range stops one short
        low, high = _bounds(low, high, dtype, info.min,
                            info.max + (1 if dtype is not dt.int64 else 0), -9, 10)
        result = torchish.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING or dtype in _COMPLEX:
        real = dtype.to_real() if dtype in _COMPLEX else dtype
        info = torchish.finfo(dtype)
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        if dtype in _COMPLEX:
            # PyTorch fills the interleaved (real, imag) view of the complex tensor
            parts = _uniform_(torchish.empty(*shape, 2, device=device, dtype=real), low, high,
                              info.max)
            result = torchish.complex(parts[..., 0], parts[..., 1])
        else:
            result = _uniform_(torchish.empty(shape, device=device, dtype=dtype), low, high,
                               info.max)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype is dt.bool or dtype in _INTEGRAL else \
            torchish.finfo(dtype).tiny
    if dtype in _FLOATING or dtype in _COMPLEX:
        result.requires_grad = requires_grad
    return result
