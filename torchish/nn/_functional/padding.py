"""`F.pad`: constant (negative pads crop), reflect, replicate and circular modes."""
import math

import torchish
from ... import _dtype as dt
from ..._ops import float8
from ..._ops.argcheck import int_list
from ..._ops import nn_ops as _nn
from ...autograd import grad_mode as _grad_mode

__all__ = ["pad"]

_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


# c10's names of the types a pad value converts to
_CTYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
           "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "float32": "float", "float64": "double"}


def _check_value(value, dtype):
    """ATen converts the pad value (a double) to the tensor's type with an overflow check: an
    integer type takes values within its range (fractions truncate), a floating one finite
    values up to its largest (and inf, NaN); bool anything."""
    if isinstance(value, torchish.Tensor):
        return
    if dtype in dt.FLOAT8:
        error = float8.scalar_overflow(float(value), dtype.np)
        if error is not None:
            raise error
        return
    ctype = _CTYPES.get(dtype.name)
    if ctype is None:
        return
    v = float(value)
    if dtype.is_floating_point:
        fits = not math.isfinite(v) or abs(v) <= float(torchish.finfo(dtype).max)
    else:
        info = torchish.iinfo(dtype)
        fits = float(info.min) <= v <= float(info.max)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")


def pad(input, pad, mode="constant", value=None):
    if pad.__class__ is not tuple or any(p.__class__ is not int for p in pad):
        pad = int_list("pad", "pad", pad, 2, scalar=False, symint=True)   # (the parser's checks)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode == "constant":
        if type(value) is complex:   # (a double parameter: NumPy's complex is read as one)
            raise TypeError("pad(): argument 'value' (position 4) must be float, not complex")
        value = 0.0 if value is None else value
        _check_value(value, input.dtype)   # (0 does not fit float8_e8m0fnu)
        return _nn._pad(input, pad, "constant", value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.ndim}D input tensor.\n" + _SUPPORTED)
    for i in range(k):
        d = input.ndim - 1 - i
        size = input.shape[d]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and size == 0:
            raise RuntimeError("input tensor must have non-empty spatial dimensions")
    if mode != "circular" and input.dtype in (torchish.bool, torchish.uint16, torchish.uint32,
                                              torchish.uint64):
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kernel}_pad{k}d" not implemented for '
                                  f"'{input.dtype._legacy}'")
    if mode == "circular" and input.requires_grad and _grad_mode.is_grad_enabled() and all(
            input.shape[input.ndim - 1 - i] + pad[2 * i] + pad[2 * i + 1] > 0
            for i in range(k)):
        return _circular_steps(input, pad)
    return _nn._pad(input, pad, mode, 0.0)


def _circular_steps(input, pad):
    """ATen's circular pad op by op (the graph it records: slices copied into a new tensor,
    CopySlices nodes): the input into the middle, then each end from the other side."""
    k = len(pad) // 2
    dims = [input.ndim - 1 - i for i in range(k)]
    shape = list(input.shape)
    for i, d in enumerate(dims):
        shape[d] += pad[2 * i] + pad[2 * i + 1]
    out = input.new_empty(shape)
    out_slice, in_slice = out, input
    for i, d in enumerate(dims):
        lo, hi = max(pad[2 * i], 0), max(pad[2 * i + 1], 0)
        out_slice = out_slice.narrow(d, lo, shape[d] - hi - lo)
        start = max(-pad[2 * i], 0)
        in_slice = in_slice.narrow(d, start, input.shape[d] - max(-pad[2 * i + 1], 0) - start)
    out_slice.copy_(in_slice)
    for i, d in enumerate(dims):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, shape[d] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, shape[d] - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out
