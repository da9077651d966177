"""Pointwise selection ops: clamp/clip, clamp_min, clamp_max, where, masked_fill, nan_to_num.
Declared like the other pointwise families (`pointwise.py` imports this module once its own ops
are declared); their default result layout is TensorIterator's (see `result_layout._BY_MODULE`)."""
import jax.numpy as jnp

from .. import _dtype as dt
from .errors import scalar_overflow
from .pointwise import _is_bool, _overload, cpp_name, legacy_name
from .registry import Promote, op

P = Promote


def _clamp_name(kinds, statics):
    # the Tensor overload unless a bound is a number (0-d tensors then count as numbers)
    return "ClampBackward1" if any(isinstance(k, type) for k in kinds[1:]) or not any(
        isinstance(k, tuple) for k in kinds[1:]) else "ClampBackward0"


def _scalar_bounds(kinds):
    """clamp's Scalar overloads name the in-place result's dtype as C++ does ("long int")."""
    return any(isinstance(k, type) for k in kinds[1:])


def _bounds_check(compute, input, *bounds):
    # number bounds are converted to the result's type (an int8 tensor's clamp(max=300))
    for bound in bounds:
        error = scalar_overflow(bound, compute)
        if error is not None:
            return error
    return None


def _clamp_promote(statics, kinds):
    """clamp's Scalar overload (a number bound, a 0-d tensor beside it read as a number) keeps
    a floating input's type: its bounds are read as doubles and converted to it, so a complex
    number bound without an imaginary part is taken (`_clamp_check` refuses the others); an
    integer input promotes with them."""
    if not (isinstance(kinds[0], tuple) and _scalar_bounds(kinds)):
        return P.DEFAULT
    if kinds[0][0].is_floating_point:
        return P.DEFAULT, (kinds[0], None, None)
    return P.DEFAULT, (kinds[0], *[_number_kind(k) for k in kinds[1:]])


def _number_kind(kind):
    if not isinstance(kind, tuple):
        return kind
    dtype = kind[0]
    return complex if dtype.is_complex else float if dtype.is_floating_point else \
        bool if dtype is dt.bool else int


def _clamp_check(compute, input, min=None, max=None):
    # (here, not in kinds_check: an in-place clamp_'s result type check comes first; raised,
    # not returned: the body's own refusal would come first)
    numbers = [b for b in (min, max) if b is not None]
    if all(hasattr(b, "_data") for b in numbers):   # the Tensor overload
        if compute is not None and compute.is_complex and hasattr(input, "_data") and \
                not input.dtype.is_complex:
            kernel = "clamp_cpu" if min is not None and max is not None else \
                "maximum_cpu" if max is None else "minimum_cpu"
            raise NotImplementedError(f'"{kernel}" not implemented for \'{compute._legacy}\'')
        return _bounds_check(compute, input, min, max)
    # the Scalar overload reads a 0-d tensor bound as a number, and every bound as a double
    # (both, before either is converted to the result's type)
    numbers = [b.item() if hasattr(b, "_data") else b for b in numbers]
    if compute is not None and not compute.is_complex and any(
            isinstance(b, complex) and b.imag != 0 for b in numbers):
        return RuntimeError("value cannot be converted to type double without overflow")
    return _bounds_check(compute, input, *numbers)


_COMPLEX_NAMES = {"float16": "ComplexHalf", "float64": "ComplexDouble"}   # (else ComplexFloat)


def _clamp_backward_refusal(kinds, statics):
    """clamp's Scalar overload (a number among the bounds) with a complex bound on a real input:
    ClampBackward1 compares the input with the bounds in the promoted complex type, which has
    no ge/le kernel, so PyTorch's backward raises (min's comparison first)."""
    first = kinds[0]
    if not (isinstance(first, tuple) and first[0].is_floating_point):
        return None
    bounds = kinds[1:3]
    if not any(isinstance(k, type) for k in bounds):
        return None   # (the Tensor overload: its forward refuses complex bounds)
    for kernel, kind in zip(("ge_cpu", "le_cpu"), bounds):
        if kind is complex or (isinstance(kind, tuple) and kind[0].is_complex):
            name = _COMPLEX_NAMES.get(first[0].name, "ComplexFloat")
            return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')
    return None


def _complex_scalar_bound(kinds):
    """clamp_min/clamp_max's Scalar overload refuses any complex number, before its in-place
    result type check."""
    if complex in kinds[1:]:
        raise NotImplementedError("clamp is not supported for complex types")


def _no_complex_clamp(input):
    if jnp.iscomplexobj(input):
        raise NotImplementedError("clamp is not supported for complex types")


@op(grad_fn=_clamp_name, inplace=True, tensors=("input", "min", "max"), aliases=("clip",),
    scalar_operands=("min", "max"), joint_scalars=True, check=_clamp_check,
    cpp_out_name=_scalar_bounds, promote=_clamp_promote,
    backward_refusal=_clamp_backward_refusal)
def clamp(input, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _no_complex_clamp(input)
    out = input
    # PyTorch's gradient passes where min <= x <= max (inclusive), unlike jnp.clip's ties;
    # a NaN bound gives NaN
    if min is not None:
        out = jnp.where((out < min) | (min != min), min, out)
    if max is not None:
        out = jnp.where((out > max) | (max != max), max, out)
    return out


@op(grad_fn=_overload("ClampMinBackward", 1), inplace=True, scalar_operands=("min",),
    check=_bounds_check, cpp_out_name=_scalar_bounds, kinds_check=_complex_scalar_bound)
def clamp_min(input, min):
    _no_complex_clamp(input)
    return jnp.where((input < min) | (min != min), min, input)


@op(grad_fn=_overload("ClampMaxBackward", 1), inplace=True, scalar_operands=("max",),
    check=_bounds_check, cpp_out_name=_scalar_bounds, kinds_check=_complex_scalar_bound)
def clamp_max(input, max):
    _no_complex_clamp(input)
    return jnp.where((input > max) | (max != max), max, input)


@op(grad_fn="WhereBackward0", method="input", promoted=("input", "other"), saves=("condition",),
    scalar_operands=("input", "other"), scalars_as_tensors=True,
    check=lambda compute, condition, input, other: _bounds_check(compute, condition, input, other))
def where(condition, input, other):
    if condition.dtype not in (jnp.bool_, jnp.uint8):   # (uint8: deprecated, still taken)
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {legacy_name(condition)}")
    return jnp.where(condition, input, other)


@op(promote=P.NONE, grad_fn=_overload("MaskedFillBackward", 2), inplace=True, saves=("mask",),
    scalar_operands=("value",), check=lambda compute, input, mask, value: (
        scalar_overflow(value, input.dtype)))
def masked_fill(input, mask, value):
    if not _is_bool(mask):
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_name(mask)}")
    if jnp.ndim(value):
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {jnp.ndim(value)} dimension(s).")
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(input) and not _is_bool(input):
        from .errors import _SCALAR_CTYPES   # (c10's Scalar conversion names: int64_t; a
        from .._dtype import from_np          # bool takes any complex: nonzero is True)
        ctype = _SCALAR_CTYPES[from_np(input.dtype).name]
        raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
    from .errors import broadcast_error
    msg = broadcast_error([mask.shape, input.shape])
    if msg:
        raise RuntimeError(msg)
    # the value is a Scalar in PyTorch: converted to the tensor's dtype (2.7 -> 2 for ints)
    return jnp.where(mask, jnp.asarray(value).astype(input.dtype), input)


@op(promote=P.NONE, grad_fn="NanToNumBackward0", inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)
