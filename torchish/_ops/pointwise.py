"""Pointwise ops: arithmetic, comparison, logical and bitwise ops. clamp/where/masked_fill/
nan_to_num are in `pointwise_select.py`, the unary math functions in `pointwise_math.py`, the
activations in `activations.py`."""
import functools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .. import _dtype as dt
from .._eager_jit import eager_jit
from .errors import scalar_overflow
from . import signed_ties
from .registry import NOT_IMPLEMENTED, REGISTRY, Promote, given, omitted, op, value_of
from .return_types import RETURN_TYPES

P = Promote


def _is_int(x):
    return not jnp.issubdtype(x.dtype, jnp.inexact)


def _is_bool(x):
    return x.dtype == jnp.bool_


def legacy_name(x):
    """PyTorch's scalar type name of an array ("Float", "Long") for error messages."""
    from .._dtype import from_np
    return from_np(x.dtype)._legacy


CPP_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
             "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def cpp_name(x):
    """The C++ type name PyTorch prints for an array's dtype ("float", "long int")."""
    from .._dtype import from_np
    return CPP_NAMES[from_np(x.dtype).name]


def not_implemented(kernel, x):
    """PyTorch's error for a kernel without an implementation for x's dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{legacy_name(x)}\'')


def _reject(kernel, x, kinds):
    """Raise PyTorch's NotImplementedError when x's dtype kind (b, i/u, c) is in `kinds`."""
    k = x.dtype.kind
    if ("b" in kinds and k == "b") or ("i" in kinds and k in "iu") or (
            "c" in kinds and k == "c") or ("f" in kinds and k == "f"):
        raise not_implemented(kernel, x)


# ---- binary arithmetic -------------------------------------------------------------------

def _scaled(other, alpha):
    if _is_int(other) and isinstance(alpha, (float, complex)) and not _is_bool(other):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, complex) and not jnp.iscomplexobj(other):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    if alpha == 1:
        return other
    if other.dtype in (jnp.bfloat16, jnp.float16):
        # PyTorch rounds alpha to the half type, then multiplies and adds in float32
        return other.astype(jnp.float32) * jnp.asarray(alpha, other.dtype).astype(jnp.float32)
    return other * alpha


def _no_bool_subtraction(kinds):
    """PyTorch refuses subtraction with a bool operand (tensor or Python bool)."""
    bools = sum(k is bool or (type(k) is tuple and k[0] is dt.bool) for k in kinds[:2])
    if bools == 2:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if bools:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


@op(grad_fn="AddBackward0", inplace=True, saves=(), dunders=("__add__", "__radd__", "__iadd__"),
    scalar_operands=True, scalars_as_tensors=True)
def add(input, other, *, alpha=1):
    return input + _scaled(other, alpha)


@op(grad_fn="SubBackward0", inplace=True, saves=(), dunders=("__sub__", "__isub__"),
    aliases=("subtract",), scalar_operands=True, scalars_as_tensors=True,
    kinds_check=_no_bool_subtraction)
def sub(input, other, *, alpha=1):
    return input - _scaled(other, alpha)


@op(grad_fn=lambda kinds, statics: "RsubBackward1" if isinstance(kinds[1], type) else
    "RsubBackward0", method=False, saves=(), dunders=("__rsub__",), scalar_operands=("other",),
    saved_as={"other": None}, kinds_check=_no_bool_subtraction)
def rsub(input, other, *, alpha=1):
    return other - _scaled(input, alpha)


@op(grad_fn="MulBackward0", inplace=True, dunders=("__mul__", "__rmul__", "__imul__"),
    aliases=("multiply",), saves={"input": ("other",), "other": ("input",)},
    opmath_scalars=True, scalar_operands=True, scalars_as_tensors=True)
def mul(input, other):
    return input * other


def _div_kind(statics):
    return P.INT_TO_FLOAT if value_of(statics.get("rounding_mode")) is None else P.DEFAULT


def _true_div(input, other):
    """`input / other`, correctly rounded as PyTorch's CPU division. XLA rewrites a division by a
    broadcast operand (`x / 3.0`, `x / x.sum(1, keepdim=True)`) into a multiplication by its
    reciprocal, an ulp off in about a third of the elements; a materialised divisor, fenced off
    from the simplifier, keeps it a division. A divisor of the full shape is fenced too: it may
    be an expanded view (`x / n.expand_as(x)`), materialised from a broadcast in this kernel."""
    shape = jnp.broadcast_shapes(jnp.shape(input), jnp.shape(other))
    dtype = jnp.result_type(input, other)
    if jnp.issubdtype(dtype, jnp.inexact):
        other = jax.lax.optimization_barrier(
            jnp.broadcast_to(jnp.asarray(other, dtype), shape))
    return input / other


def _floor_div(input, other):
    """Floor division as ATen's CPU kernel computes it for floats (not JAX's, whose results at
    a zero divisor changed between releases): `input / other` where other is 0 (inf, nan);
    else (input - fmod) / other stepped down when fmod's sign differs from other's, then
    rounded to the nearest integer; a zero quotient takes the sign of input / other."""
    dtype = jnp.result_type(input, other)
    if not jnp.issubdtype(dtype, jnp.floating):
        return jnp.floor_divide(input, other)
    a, b = jnp.asarray(input, dtype), jnp.asarray(other, dtype)
    mod = jnp.fmod(a, b)
    quotient = _true_div(a - mod, b)
    quotient = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), quotient - 1, quotient)
    floor = jnp.floor(quotient)
    floor = jnp.where(quotient - floor > 0.5, floor + 1, floor)
    exact = _true_div(a, b)
    floor = jnp.where(quotient == 0, jnp.copysign(jnp.zeros_like(floor), exact), floor)
    # (a step function: its gradient is +0 everywhere, as PyTorch's, not the -0s that
    # differentiating the expression above would give)
    return jax.lax.stop_gradient(jnp.where(b == 0, exact, floor))


def _div(input, other, rounding_mode):
    if rounding_mode is None:
        return _true_div(input, other)
    if rounding_mode in ("trunc", "floor"):   # (rounding has no complex kernel)
        _reject(f"div_{rounding_mode}_cpu", jnp.zeros((), jnp.result_type(input, other)), "c")
    if rounding_mode == "trunc":
        return jnp.trunc(input / other) if not _is_int(input) else \
            jnp.sign(input) * jnp.sign(other) * (jnp.abs(input) // jnp.abs(other))
    if rounding_mode == "floor":
        return _floor_div(input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


# (rounding_mode=None passed picks PyTorch's div.Tensor_mode: DivBackward2, which saves it)
@op(promote=_div_kind, inplace=True, grad_fn=lambda kinds, statics:
    "DivBackward2" if given(statics["rounding_mode"]) else "DivBackward0",
    dunders=("__truediv__", "__itruediv__"), aliases=("divide", "true_divide"),
    saves={"input": ("other",), "other": ("input", "other")}, opmath_scalars=True,
    scalar_operands=True, scalars_as_tensors=True)
def div(input, other, *, rounding_mode=omitted(None)):
    return _div(input, other, rounding_mode)


# ATen's own composites divide by a C++ scalar (`div(Tensor, Scalar)`), recorded as
# DivBackward1; Python's `x / 3` wraps the 3 in a tensor (DivBackward0). For library code
# whose graph must end in PyTorch's node (cross_entropy with class probabilities).
@op("_div_scalar", promote=P.INT_TO_FLOAT, grad_fn="DivBackward1", tensors=("input",),
    function=False, method=False, saves=(), opmath_scalars=True)
def _div_scalar(input, other):
    return _true_div(input, other)


# ATen's `add(Tensor, Scalar)` (AddBackward1, no edge for the number), which C++ composites
# such as rms_norm and pairwise_distance record; Python's `x + 1` is AddBackward0.
@op("_add_scalar", grad_fn="AddBackward1", tensors=("input", "other"), function=False,
    method=False, saves=(), scalar_operands=("other",), opmath_scalars=True)
def _add_scalar(input, other):
    return input + other


# ATen's `mul(Tensor, Scalar)` (MulBackward1), as C++ composites (ndtr) record it
@op("_mul_scalar", grad_fn="MulBackward1", tensors=("input", "other"), function=False,
    method=False, saves=(), scalar_operands=("other",), opmath_scalars=True)
def _mul_scalar(input, other):
    return input * other


@op(grad_fn=NOT_IMPLEMENTED, inplace=True,   # (PyTorch records it; its backward refuses)
    dunders=("__floordiv__", "__rfloordiv__", "__ifloordiv__"), scalar_operands=True)
def floor_divide(input, other):
    _reject("div_floor_cpu", input, "bc")
    return _floor_div(input, other)


def _overload(stem, operand, scalar_nr=0):
    """grad_fn names of an op with Scalar and Tensor overloads: `<stem>0` for a Python number
    as `operand` (the dynamic argument's index), `<stem>1` for a Tensor (the other way round
    for `scalar_nr=1`)."""
    names = (stem + str(scalar_nr), stem + str(1 - scalar_nr))
    return lambda kinds, statics: names[0] if isinstance(kinds[operand], type) else names[1]


def _remainder_grad_fn(kinds, statics):
    if isinstance(kinds[0], type):   # remainder(2, x): PyTorch has no derivative for it
        return NOT_IMPLEMENTED
    return "RemainderBackward0" if isinstance(kinds[1], type) else "RemainderBackward1"


@jax.custom_jvp
def _float_remainder(x, y):
    return jnp.remainder(x, y)


# PyTorch's derivative: `grad` for x itself (jnp.remainder's select turns a -0.0 into +0.0),
# -grad * floor(x / y) for y
_float_remainder.defjvp(lambda primals, tangents: (
    _float_remainder(*primals),
    tangents[0] - tangents[1] * _floor_div(*primals)))


@op(grad_fn=_remainder_grad_fn, inplace=True, dunders=("__mod__", "__rmod__", "__imod__"),
    scalar_operands=True)
def remainder(input, other):
    _reject("remainder_cpu", input, "bc")
    if jnp.issubdtype(jnp.result_type(input, other), jnp.floating):
        return _float_remainder(input, other)
    return jnp.remainder(input, other)


@op(grad_fn=_overload("FmodBackward", 1), inplace=True, scalar_operands=("other",))
def fmod(input, other):
    _reject("fmod_cpu", input, "bc")
    return jnp.fmod(input, other)


# Integer division by zero: PyTorch's CPU kernels raise, XLA returns a value (-1, 0, x). A
# compiled body cannot raise on a value, so the dispatcher asks an op's `check` about the
# operands when they are concrete, and raises what it returns once the forward has run (shape
# and dtype errors come first, as in PyTorch). Under tracing (torchish.compile, jax.jit, vmap)
# nothing is checked and the result at a zero divisor is XLA's.
_any_zero = eager_jit(lambda x: jnp.any(x == 0))  # one fused compare-and-reduce dispatch


def _integer_divisor_check(compute, input, other, rounding_mode="floor", **_):
    """PyTorch's RuntimeError("ZeroDivisionError") if an integer division's divisor has a
    zero, else None."""
    if compute is None or compute.is_floating_point or compute.is_complex or \
            compute.name == "bool" or rounding_mode is None:
        return None  # a float division, true division, or bool (rejected by the body)
    if isinstance(other, (bool, int)):
        zero = other == 0 and not (hasattr(input, "_data") and input.numel() == 0)
    elif hasattr(other, "_data"):
        data = other._data
        if data.size == 0 or (hasattr(input, "_data") and input.numel() == 0):
            return None  # an empty result divides nothing
        if other.device.type == "cpu":  # the host reads the array in place: no dispatch
            zero = bool((np.asarray(data) == 0).any())
        else:
            zero = bool(_any_zero(data))
    else:
        return None
    return RuntimeError("ZeroDivisionError") if zero else None


for _name in ("div", "floor_divide", "remainder", "fmod"):
    REGISTRY[_name].check = _integer_divisor_check


def _pow_name(kinds, statics):
    base, exp = kinds
    if isinstance(base, type):
        return "PowBackward2"
    return "PowBackward0" if isinstance(exp, type) else "PowBackward1"


def _power(base, exp, scalar=False):
    """jnp.power with PyTorch's integer rule for negative exponents: 1 / base**-exp truncated
    (0 except for the bases 1 and -1); XLA's integer power wraps around for them. A complex
    power is C's, with the number exponent's shortcuts where `scalar` (see complex_pow)."""
    if jnp.iscomplexobj(base) or jnp.iscomplexobj(exp):
        from .complex_pow import power
        return power(base, exp, scalar)
    if isinstance(exp, (int, float)) and exp == 0 and jnp.issubdtype(base.dtype, jnp.inexact):
        return jnp.ones_like(base)   # x ** 0 is 1 with derivative 0 (JAX's is nan at x = 0)
    if hasattr(base, "dtype") and hasattr(exp, "dtype") and \
            jnp.issubdtype(jnp.result_type(base, exp), jnp.floating):
        return _float_power(base, exp)
    out = jnp.power(base, exp)
    if not jnp.issubdtype(out.dtype, jnp.integer):
        return out
    unit = jnp.where(base == 1, 1, jnp.where(base == -1, 1 - 2 * (exp % 2), 0))
    return jnp.where(exp < 0, unit.astype(out.dtype), out)


def _binary_jvp(fn, partials):
    """A custom_jvp rule for the binary `fn` from `partials(x, y, out)` (its derivatives for x
    and y, each called only when that operand has a tangent: a partial that is nan where the
    other operand's is finite, as x / y, then does not turn an absent tangent's 0 into nan)."""
    def rule(primals, tangents):
        out = fn(*primals)
        parts = partials(*primals, out)
        terms = [t * parts[i]() for i, t in enumerate(tangents)
                 if not isinstance(t, jax.custom_derivatives.SymbolicZero)]
        return out, functools.reduce(lambda a, b: a + b, terms)
    fn.defjvp(rule, symbolic_zeros=True)


@jax.custom_jvp
def _float_power(base, exp):
    return jnp.power(base, exp)


# PyTorch's derivatives: 0 for the base where the exponent is 0 (JAX's is nan at 0 ** 0), 0 for
# the exponent where the base is 0 and the exponent >= 0
_binary_jvp(_float_power, lambda base, exp, out: (
    lambda: jnp.where(exp == 0, 0, exp * jnp.power(base, exp - 1)),
    lambda: jnp.where((base == 0) & (exp >= 0), 0, out * jnp.log(base))))


def _pow_check(compute, input, exponent):
    """PyTorch refuses a negative Python int exponent of an integer tensor (a tensor exponent
    follows the truncation rule of `_power`)."""
    if compute is not None and compute.name not in ("bool",) and not compute.is_floating_point \
            and not compute.is_complex and isinstance(exponent, int) and exponent < 0 \
            and hasattr(input, "_data"):
        return RuntimeError("Integers to negative integer powers are not allowed.")
    if not hasattr(input, "_data") or compute is None:
        return None
    if not (compute.is_floating_point or compute.is_complex) and type(exponent) is int and \
            exponent > 2 ** 63 - 1:   # (an unsigned Scalar is read as int64 first)
        return RuntimeError("value cannot be converted to type int64_t without overflow")
    if compute.name in ("float32", "float64") or compute.is_complex:
        return None   # (the kernel reads the exponent as a double: f ** 1e300 is 1)
    # a number exponent is converted to the tensor's type (int8 ** 300 overflows)
    return scalar_overflow(exponent, compute)


def _pow_saves(kinds):
    """What PowBackward0 (tensor ** number), 1 (tensor ** tensor) and 2 (number ** tensor)
    save, in PyTorch's order."""
    if isinstance(kinds[1], type):
        return ("input",)
    return ("exponent", "result") if isinstance(kinds[0], type) else (
        "exponent", "input", "result")


@op(grad_fn=_pow_name, inplace=True, dunders=("__pow__", "__ipow__"), check=_pow_check,
    scalar_operands=True, saves=_pow_saves, saved_as={"input": None},
    scalar_flags={"scalar": "exponent"})
def pow(input, exponent, scalar=False):
    if _is_bool(input):
        if jnp.ndim(exponent):
            raise not_implemented("pow", input)
        return input | ~exponent  # x ** True is x, x ** False is True
    # (only a number exponent takes the Scalar kernel's shortcuts, a 0-d tensor does not)
    return _power(input, exponent, scalar=scalar)


@op(grad_fn=lambda kinds, statics: "PowBackward2" if isinstance(kinds[1], type) else
    "PowBackward1", method=False, function=False, dunders=("__rpow__",),
    scalar_operands=True,
    saved_as={"self": "other", "exponent": "input", "other": None, "input": None},
    saves=lambda kinds: ("input", "result") if isinstance(kinds[1], type) else (
        "input", "other", "result"))
def _rpow(input, other):
    return _power(other, input)


@op(promote=P.INT_TO_FLOAT, grad_fn="Atan2Backward0", inplace=True, aliases=("arctan2",),
    scalar_operands=False, saves=("other", "input"))
def atan2(input, other):
    _reject("atan2_cpu", input, "c")
    return _atan2(input, other)


@jax.custom_jvp
def _atan2(y, x):
    return jnp.arctan2(y, x)


def _atan2_recip(y, x):
    # PyTorch's derivative (x dy - y dx) / (x^2 + y^2) takes 1 / 0 there as 0 (JAX's: nan)
    d = y * y + x * x
    return jnp.where(d == 0, 0, 1 / jnp.where(d == 0, 1, d))


_binary_jvp(_atan2, lambda y, x, out: (lambda: x * _atan2_recip(y, x),
                                       lambda: -y * _atan2_recip(y, x)))


def _no_complex(name, x):
    if jnp.iscomplexobj(x):
        raise RuntimeError(f"{name} not implemented for complex tensors.")


@op(grad_fn="MaximumBackward0", scalar_operands=False)
def maximum(input, other):
    _no_complex("maximum", input)
    return signed_ties.maximum(input, other)


@op(grad_fn="MinimumBackward0", scalar_operands=False)
def minimum(input, other):
    _no_complex("minimum", input)
    return signed_ties.minimum(input, other)


@op(grad_fn="FmaxBackward0", scalar_operands=False)
def fmax(input, other):
    _no_complex("fmax", input)
    return signed_ties.fmax(input, other)


@op(grad_fn="FminBackward0", scalar_operands=False)
def fmin(input, other):
    _no_complex("fmin", input)
    return signed_ties.fmin(input, other)


@op(opmath=True, grad_fn="HypotBackward0", inplace=True, scalar_operands=False,
    saves=("input", "other", "result"))
def hypot(input, other):
    _reject("hypot_cpu", input, "bic")
    return _hypot(input, other)


@jax.custom_jvp
def _hypot(x, y):
    return jnp.hypot(x, y)


# PyTorch's derivative x / hypot(x, y): nan at the origin, where JAX's is 1/2
_binary_jvp(_hypot, lambda x, y, out: (lambda: x / out, lambda: y / out))


@op(promote=P.INT_TO_FLOAT, grad_fn=_overload("CopysignBackward", 1, scalar_nr=1), inplace=True,
    scalar_operands=("other",))
def copysign(input, other):
    return jnp.copysign(input, other)


@op(opmath=True, grad_fn="LogaddexpBackward0", scalar_operands=False)
def logaddexp(input, other):
    _reject("logaddexp_cpu", input, "bi")
    return jnp.logaddexp(input, other)


@op(opmath=True, grad_fn="Logaddexp2Backward0", scalar_operands=False)
def logaddexp2(input, other):
    _reject("logaddexp2_cpu", input, "bi")
    return jnp.logaddexp2(input, other)


@op(grad_fn=NOT_IMPLEMENTED, inplace=True, scalar_operands=False)   # (as floor_divide)
def heaviside(input, values):
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if jnp.iscomplexobj(input):
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return jnp.where(input == 0, values, (input > 0).astype(input.dtype))


@op(promote=P.INT_TO_FLOAT, grad_fn="LdexpBackward0", method=True, inplace=True,
    scalar_operands=False)
def ldexp(input, other):
    return input * jnp.exp2(other)


@op(promote=P.NONE, grad_fn="FrexpBackward0", returns=RETURN_TYPES["frexp"], saves=("exponent",))
def frexp(input):
    if not jnp.issubdtype(input.dtype, jnp.floating):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = jnp.frexp(input)
    return mantissa, exponent.astype(jnp.int32)


@op(promote=P.ALWAYS_BOOL, differentiable=False, promoted=())
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    if input.dtype != other.dtype:
        from .._dtype import from_np
        raise RuntimeError(f"{from_np(input.dtype)._legacy} did not match "
                           f"{from_np(other.dtype)._legacy}")
    if _is_bool(input):
        return input == other
    close = input == other
    if jnp.issubdtype(input.dtype, jnp.inexact):
        finite = jnp.isfinite(input) & jnp.isfinite(other)
        diff = jnp.abs(input - other)
        close = close | (finite & (diff <= atol + rtol * jnp.abs(other)))
        if equal_nan:
            close = close | (jnp.isnan(input) & jnp.isnan(other))
    else:  # integers: PyTorch's `rtol * other` is a float32 tensor
        allowed = atol + jnp.abs(rtol * other.astype(jnp.float32))
        close = close | (jnp.abs(input - other).astype(jnp.float32) <= allowed)
    return close


def _scalar_variant(stem):
    """PyTorch's node for a binary special function: ...0 for (Tensor, Tensor), ...1 when
    `self` is a Python number, ...2 when `other` is."""
    def name(kinds, statics):
        if isinstance(kinds[0], type):
            return stem + "1"
        return stem + ("2" if isinstance(kinds[1], type) else "0")
    return name


@op(promote=P.INT_TO_FLOAT, grad_fn=_scalar_variant("XlogyBackward"), inplace=True,
    scalar_operands=True)
def xlogy(input, other):
    return _xlogy(input, other)


@jax.custom_jvp
def _xlogy(x, y):
    return jsp.xlogy(x, y)


# PyTorch's derivative for x is xlogy(x != 0, y): 0 where x is 0 (JAX's is log(y), -inf at
# y = 0); for y it is x / y
_binary_jvp(_xlogy, lambda x, y, out: (
    lambda: jsp.xlogy((x != 0).astype(jnp.result_type(x, y)), y), lambda: x / y))


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _lerp_kinds(kinds):
    """PyTorch's lerp does not promote: `end` (and a `weight` of one or more dims; a 0-d one
    is read as a number) must have `input`'s dtype, and integer and bool tensors have no
    kernel (checked before an in-place form's result cast)."""
    input, end, weight = kinds
    for name, kind in (("end", end), ("weight", weight)):
        if isinstance(kind, tuple) and len(kind) > 1 and kind[0] is not input[0] and (
                name == "end" or not kind[1]):
            raise RuntimeError(f"expected dtype {CPP_NAMES[input[0].name]} for `{name}` "
                               f"but got dtype {CPP_NAMES[kind[0].name]}")
    if not (input[0].is_floating_point or input[0].is_complex) and not (
            isinstance(weight, tuple) and weight[1]):   # (a 0-d weight: `_lerp_check`)
        kernel = "lerp_kernel_scalar" if isinstance(weight, type) else "lerp_kernel_tensor"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input[0]._legacy}\'')


def _lerp_check(compute, input, end, weight):
    """An integer computation (with a 0-d weight: a 0-d float weight makes it float) has no
    kernel; a Python weight must fit the real opmath type of a real tensor."""
    if not compute.is_floating_point and not compute.is_complex:
        kernel = "lerp_kernel_tensor" if hasattr(weight, "_data") else "lerp_kernel_scalar"
        return not_implemented(kernel, input._data)
    if not hasattr(weight, "_data") and not input.dtype.is_complex:
        opmath = "double" if input.dtype.name == "float64" else "float"
        if isinstance(weight, complex) or (
                opmath == "float" and math.isfinite(weight) and abs(weight) > _FLOAT32_MAX):
            return RuntimeError(f"value cannot be converted to type {opmath} without overflow")
    return None


@op(opmath=True, grad_fn=_overload("LerpBackward", 2), inplace=True, scalar_operands=("weight",),
    kinds_check=_lerp_kinds, check=_lerp_check)
def lerp(input, end, weight):
    if _is_bool(input):  # `_lerp_check` raises PyTorch's error; bool has no subtraction
        return input
    # PyTorch switches formula at |weight| >= 0.5 for accuracy near the end point
    return jnp.where(jnp.abs(weight) < 0.5, input + weight * (end - input),
                     end - (end - input) * (1 - weight))


def _value_check(compute, input, tensor1, tensor2, *, value):
    # `value` is converted to the op's compute type (float for a half tensor)
    return scalar_overflow(value, compute)


@op(opmath=True, grad_fn="AddcmulBackward0", inplace=True, check=_value_check,
    saves={"tensor1": ("tensor2",), "tensor2": ("tensor1",)})
def addcmul(input, tensor1, tensor2, *, value=1):
    _reject("addcmul_cpu_out", input, "b")
    if _is_int(input) and isinstance(value, float) and abs(value) < 2.0 ** 63:
        value = int(value)   # PyTorch converts `value` to the integer type first (0.5 -> 0)
    return input + value * tensor1 * tensor2


def _addcdiv_check(compute, input, tensor1, tensor2, *, value):
    # whatever `input` is: PyTorch looks at the two operands of the division
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (tensor1, tensor2)):
        return RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _value_check(compute, input, tensor1, tensor2, value=value)


@op(opmath=True, grad_fn="AddcdivBackward0", inplace=True, check=_addcdiv_check,
    saves={"tensor1": ("tensor2",), "tensor2": ("tensor1", "tensor2")})
def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + value * (tensor1 / tensor2)


# ---- comparison, logical, bitwise ---------------------------------------------------------
_COMPARE = {"eq": (jnp.equal, "__eq__"), "ne": (jnp.not_equal, "__ne__"),
            "lt": (jnp.less, "__lt__"), "le": (jnp.less_equal, "__le__"),
            "gt": (jnp.greater, "__gt__"), "ge": (jnp.greater_equal, "__ge__")}
_COMPARE_ALIASES = {"ne": ("not_equal",), "lt": ("less",), "le": ("less_equal",),
                    "gt": ("greater",), "ge": ("greater_equal",)}


def _compare(name, fn):
    kernel = name + "_cpu"
    ordered = name not in ("eq", "ne")

    def body(input, other):
        if ordered:
            _reject(kernel, input, "c")
        return fn(input, other)
    return body


for _name, (_fn, _dunder) in _COMPARE.items():
    op(_name, promote=P.ALWAYS_BOOL, differentiable=False, inplace=True, dunders=(_dunder,),
       aliases=_COMPARE_ALIASES.get(_name, ()), scalar_operands=("other",))(
        _compare(_name, _fn))

for _name, _fn in {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or,
                   "logical_xor": jnp.logical_xor}.items():
    op(_name, promote=P.ALWAYS_BOOL, differentiable=False, inplace=True)(
        (lambda f: lambda input, other: f(input, other))(_fn))


@op(promote=P.ALWAYS_BOOL, differentiable=False, inplace=True)
def logical_not(input):
    return jnp.logical_not(input)


_BITWISE = {"bitwise_and": (jnp.bitwise_and, ("__and__", "__rand__", "__iand__")),
            "bitwise_or": (jnp.bitwise_or, ("__or__", "__ror__", "__ior__")),
            "bitwise_xor": (jnp.bitwise_xor, ("__xor__", "__rxor__", "__ixor__")),
            "bitwise_left_shift": (jnp.left_shift, ("__lshift__", "__ilshift__")),
            "bitwise_right_shift": (jnp.right_shift, ("__rshift__", "__irshift__"))}
_BITWISE_KERNELS = {"bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu"}


def _bitwise(name, fn):
    kernel = _BITWISE_KERNELS.get(name, name + "_cpu")

    def body(input, other):
        _reject(kernel, input, "fc")
        return fn(input, other)
    return body


for _name, (_fn, _dunders) in _BITWISE.items():
    op(_name, differentiable=False, inplace=True, dunders=_dunders, scalar_operands=True)(
        _bitwise(_name, _fn))


@op(differentiable=False, inplace=True, dunders=("__invert__",))
def bitwise_not(input):
    _reject("bitwise_not_cpu", input, "fc")
    return jnp.logical_not(input) if input.dtype == jnp.bool_ else jnp.bitwise_not(input)


def _rdiv(self, other):
    """`2 / x`: PyTorch computes `x.reciprocal() * 2` (two roundings, and that graph)."""
    try:
        return self.reciprocal() * other
    except TypeError:   # `"a" / x`: Python's own operand TypeError
        return NotImplemented


def _invert(self):
    # (Tensor.__invert__ is a Python wrapper over bitwise_not in PyTorch, with its own error)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _eq_arrays(eq):
    """`t == ndarray`: PyTorch's `Tensor.__eq__` (alone among the comparisons) takes a NumPy
    array of numbers as a tensor operand; any other array is NotImplemented."""
    def __eq__(self, other):
        if isinstance(other, np.ndarray) and other.dtype.kind in "biufc":
            from .creation_data import as_tensor
            other = as_tensor(other)
        return eq(self, other)
    return __eq__


def _bind_rdiv():
    from .._tensor import Tensor
    Tensor.__eq__ = _eq_arrays(Tensor.__eq__)
    Tensor.__invert__ = _invert
    Tensor.__rtruediv__ = _rdiv
    Tensor.__rdiv__ = _rdiv  # Python 2's name, still called by some code


_bind_rdiv()
del _name, _fn, _dunder, _dunders

# the clamp/where family is declared next (the registry's order)
from . import pointwise_select  # noqa: E402,F401
from . import pointwise_math  # noqa: E402,F401  (the unary math and activations)
