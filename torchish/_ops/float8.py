"""Conversions to and from the float8 dtypes as PyTorch's CPU copy kernels do them.

PyTorch converts through float32 (a float64 value is rounded to float32 first, so a value can
round twice), then by each type's own rule; XLA's (ml_dtypes') conversions agree with it except:
- float8_e4m3fn saturates: finite values past +-448 and infinities become +-448 (XLA: NaN);
- the fnuz types give 0 for a negative value that rounds to zero (XLA: their NaN);
- float8_e4m3fn / float8_e5m2 write NaN as the all-ones pattern with the input's sign (0x7f /
  0xff; XLA writes 0x7e for e5m2);
- float8_e8m0fnu (a bare power-of-two exponent) takes the float32 exponent bits, ignoring the
  sign: 0 becomes the smallest value 2**-127, a negative number its magnitude's power; the
  mantissa rounds it up from half way (ties go up for normal numbers, down for subnormals);
  infinities and NaN become NaN (XLA: 0 and negatives are NaN).
Out of float8, NaN keeps PyTorch's bit patterns in the float types (`_nan_payload`), and
becomes 0 for an integer type from the "fnuz" types and float8_e8m0fnu,
and non-finite values give uint32 0 (as from float16).
"""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

__all__ = ["is_float8", "to_float8", "from_float8", "host_to_float8", "scalar_overflow",
           "fill_error", "fill_number", "number_as"]

_E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)
_E5M2 = np.dtype(ml_dtypes.float8_e5m2)
_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_FLOAT8 = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"))
# types whose NaN reads as integer 0 (PyTorch's conversion yields 0 where x86 would give the
# integer minimum)
_NAN_TO_ZERO = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"))


def is_float8(np_dtype):
    return np.dtype(np_dtype) in _FLOAT8


def _bits(x):
    return jax.lax.bitcast_convert_type(x, jnp.uint32)


def _e8m0(x):
    """float32 -> float8_e8m0fnu by its exponent bits (see the module docstring)."""
    bits = _bits(x)
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    half = np.uint32(0x400000)
    up = (mantissa > half) | ((mantissa == half) & (exponent > 0))
    out = jnp.where(exponent == 0xFF, exponent, exponent + up.astype(jnp.uint32))
    return jax.lax.bitcast_convert_type(out.astype(jnp.uint8), _E8M0)


def _nan_bits(x, y, target):
    """`y` with NaN written as PyTorch's all-ones pattern keeping `x`'s sign."""
    sign = (_bits(x) >> 31).astype(jnp.uint8) << 7
    nan = jax.lax.bitcast_convert_type(sign | np.uint8(0x7F), target)
    return jnp.where(jnp.isnan(x), nan, y)


def to_float8(x, target):
    """`x` (any real/bool array; complex already reduced to its real part) as float8 `target`."""
    target = np.dtype(target)
    if x.dtype == bool:
        x = x.astype(jnp.uint8)
    if is_float8(x.dtype):
        if x.dtype == target:
            return x
        x = from_float8(x, np.float32)
    if target == _E8M0:
        if x.dtype == np.float64:
            # XLA's float64 -> float32 flushes float32 subnormals to zero; below 2**-126 the
            # result is 2**-127's pattern or the next one, split where float32's rounding
            # puts the value above 2**-127
            tiny = jnp.abs(x) < 2.0 ** -126
            up = (jnp.abs(x) > 2.0 ** -127 + 2.0 ** -150).astype(jnp.uint8)
            y = _e8m0(x.astype(jnp.float32))
            return jnp.where(tiny, jax.lax.bitcast_convert_type(up, _E8M0), y)
        return _e8m0(x.astype(jnp.float32))
    x = x.astype(jnp.float32)
    if target == _E4M3FN:
        limit = float(ml_dtypes.finfo(target).max)
        return _nan_bits(x, jnp.clip(x, -limit, limit).astype(target), target)
    if target == _E5M2:
        return _nan_bits(x, x.astype(target), target)
    # fnuz: XLA turns a negative value that rounds to zero into 0x80 (their NaN); PyTorch
    # gives 0 (these types have no -0). Convert the magnitude, then set the sign bit on
    # nonzero numbers.
    magnitude = jax.lax.bitcast_convert_type(jnp.abs(x).astype(target), jnp.uint8)
    negative = jnp.signbit(x) & (magnitude != 0) & (magnitude != 0x80)
    return jax.lax.bitcast_convert_type(jnp.where(negative, magnitude | np.uint8(0x80),
                                                  magnitude), target)


def number_as(value, target):
    """A fill value (a number, or a 0-d array) as a 0-d array of `target`: for the float8
    types PyTorch's conversion (`to_float8`: its NaN patterns, saturation), not XLA's."""
    value = jnp.asarray(value)
    if not is_float8(target):
        return value.astype(target)
    return to_float8(fill_number(value), target)


def from_float8(x, target):
    """float8 `x` as `target` (not float8): through float32, as PyTorch's kernels read it.
    Returns float32 values; `conversion.cast` applies its own float -> integer rules to them."""
    target = np.dtype(target)
    if x.dtype == _E8M0 and target in (np.dtype(np.float64), np.dtype(np.complex128)):
        # exactly, from the exponent bits: XLA flushes float32's subnormal 2**-127 to 0
        bits = jax.lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.uint64)
        wide = jax.lax.bitcast_convert_type((bits + np.uint64(1023 - 127)) << np.uint64(52),
                                            jnp.float64)
        # (NaN: PyTorch's float32 0x7f800001, widened)
        nan = np.array(0x7FF8000020000000, np.uint64).view(np.float64)
        return jnp.where(bits == 0xFF, nan, wide)
    wide = x.astype(jnp.float32)
    if target.kind in "fc" and target != np.dtype(ml_dtypes.bfloat16):
        wide = _nan_payload(x, wide, target)
    if target.kind in "iu" and x.dtype in _NAN_TO_ZERO:
        wide = jnp.where(jnp.isnan(wide), 0, wide)
    if target.kind == "b":
        if x.dtype == _E8M0:   # (no zero; XLA's compare would flush 2**-127 to it)
            return jnp.ones(x.shape, bool)
        return wide != 0
    if target == np.dtype(ml_dtypes.bfloat16):   # (c10's bfloat16 rounding writes +NaN)
        wide = jnp.where(jnp.isnan(wide), np.float32(np.nan), wide)
    if target == np.dtype(np.complex64):   # (packed: a convert would flush 2**-127 to 0)
        return jax.lax.complex(wide, jnp.zeros_like(wide))
    return wide


def _nan_payload(x, wide, target):
    """`wide` (float32 `x`) with NaN as PyTorch's conversions write it (XLA writes the quiet
    NaN): float8_e4m3fn's NaN keeps its sign and mantissa (float32 0x7ff00000, float16
    0x7f80); the fnuz types' and float8_e8m0fnu's become float32 0x7f800001; float8_e5m2's
    signalling NaN turns quiet in float16. A float16 target gets its array here (float16
    payloads do not survive a float32 round trip)."""
    sign = (jax.lax.bitcast_convert_type(x, jnp.uint8) >> 7).astype(jnp.uint32)
    nan = jnp.isnan(wide)
    if target == np.dtype(np.float16):
        half = wide.astype(jnp.float16)
        bits = jax.lax.bitcast_convert_type(half, jnp.uint16)
        if x.dtype == _E4M3FN:
            bits = (sign.astype(jnp.uint16) << 15) | np.uint16(0x7F80)
        elif x.dtype == _E5M2:
            raw = jax.lax.bitcast_convert_type(x, jnp.uint8).astype(jnp.uint16) << 8
            bits = raw | np.uint16(0x0200)
        else:
            return half
        return jnp.where(nan, jax.lax.bitcast_convert_type(bits, jnp.float16), half)
    if x.dtype == _E4M3FN:
        bits = (sign << 31) | np.uint32(0x7FF00000)
    elif x.dtype in _NAN_TO_ZERO:
        bits = jnp.full(x.shape, 0x7F800001, jnp.uint32)
    else:
        return wide
    return jnp.where(nan, jax.lax.bitcast_convert_type(bits, jnp.float32), wide)


def host_to_float8(array, target):
    """A NumPy array converted as `to_float8` converts, on the host (no compilation per
    shape). ml_dtypes' casts from float32 agree with PyTorch's except where `to_float8`
    corrects XLA's, less the fnuz one, and NumPy keeps float32 subnormals."""
    target = np.dtype(target)
    x = np.asarray(array)
    if x.dtype.kind == "c":
        x = x.real
    if x.dtype in _FLOAT8:
        return np.asarray(to_float8(jnp.asarray(x), target))
    with np.errstate(all="ignore"):
        x = x.astype(np.float32)
        bits = x.view(np.uint32)
        if target == _E8M0:
            exponent = (bits >> 23) & 0xFF
            mantissa = bits & 0x7FFFFF
            up = (mantissa > 0x400000) | ((mantissa == 0x400000) & (exponent > 0))
            out = np.where(exponent == 0xFF, exponent, exponent + up)
            return out.astype(np.uint8).view(target)
        if target == _E4M3FN:
            limit = float(ml_dtypes.finfo(target).max)
            y = np.clip(x, -limit, limit).astype(target)
        else:
            y = x.astype(target)
        if target in (_E4M3FN, _E5M2):
            nan = ((bits >> 31).astype(np.uint8) << 7 | np.uint8(0x7F)).view(target)
            y = np.where(np.isnan(x), nan, y)
        return y


_C10_NAMES = {np.dtype(getattr(ml_dtypes, n)): "c10::F" + n[1:] for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")}


def scalar_overflow(value, np_dtype):
    """PyTorch's RuntimeError for a Python number a kernel cannot convert to a float8 Scalar
    (`fill_`, `full`, `pad`'s value), or None: NaN always fits, an infinity only where the
    type has one (float8_e5m2), a float must lie within [lowest, largest] (compared as a
    double: 449 does not fit float8_e4m3fn, though it would round to 448); lowest is
    float8_e8m0fnu's 2**-127, so 0 and negative floats do not fit it, while an integer is
    checked against +-largest only; a complex number needs both parts to fit."""
    if not isinstance(value, (int, float, complex, np.number, np.bool_)):
        return None   # (a 0-d tensor's value: PyTorch reads it unchecked)
    np_dtype = np.dtype(np_dtype)
    info = ml_dtypes.finfo(np_dtype)
    low, high = float(info.min), float(info.max)
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        fits = -high <= value <= high
    else:
        parts = (value.real, value.imag) if isinstance(value, (complex, np.complexfloating)) \
            else (value,)
        fits = (len(parts) == 1 or parts[1] == 0) and all(
            v != v or (abs(v) == float("inf") and np_dtype == _E5M2) or low <= v <= high
            for v in parts)
    if fits:
        return None
    return RuntimeError(f"value cannot be converted to type {_C10_NAMES[np_dtype]} without "
                        "overflow")


def fill_error(value, np_dtype, numel):
    """PyTorch's error for filling `numel` float8 elements with the Python number `value`
    (`full`, `new_full`, `fill_`), or None. Its fill kernel checks the range (`scalar_overflow`),
    but a single element is written as a cast from the value is (saturating, or NaN, with no
    check): there only a complex value with an imaginary part fails, as it does not convert
    to double."""
    if isinstance(value, jax.core.Tracer):   # (a traced fill value: nothing to check)
        return None
    if numel != 1:
        return scalar_overflow(value, np_dtype)
    if isinstance(value, (complex, np.complexfloating)) and value.imag != 0:
        return RuntimeError("value cannot be converted to type double without overflow")
    return None


def fill_number(value):
    """A checked fill value (`fill_error`), a number or a 0-d array, as the real value PyTorch
    converts to float8 (the imaginary part dropped); `number_as` converts it."""
    if isinstance(value, (complex, np.complexfloating)):
        return float(value.real)
    return value.real if jnp.iscomplexobj(value) else value
