"""Bit-exact host arithmetic behind the PyTorch CPU generator emulation.

PyTorch's CPU sampling kernels are C++ compiled with FMA contraction, call glibc's libm in
double precision, and (on x86 CPUs with AVX2) transform float32 normals with the Cephes-style
``log256_ps`` / ``sincos256_ps`` routines from ``avx_mathfun.h``. Reproducing their output bit for
bit in NumPy needs what this module provides:

* ``fmaf`` / ``fma``: correctly rounded fused multiply-add for float32 / float64 arrays. NumPy has
  no fma; float32 is done in float64 (the product is exact) with a guard against the rare double
  rounding, float64 with error-free transformations (Dekker TwoProduct + TwoSum + round-to-odd).
* ``libm_log`` & co: float64 functions that return exactly what glibc returns (what PyTorch's
  ``std::log`` etc. call). NumPy's own SIMD loops (SVML on AVX512 machines) differ from glibc in a
  fraction of a percent of inputs; NumPy falls back to the C library for inputs with a negative
  stride, which we exploit -- verified against ``math.*`` once, with a slow exact fallback.
* ``log256_ps`` / ``sincos256_ps``: float32 emulations of the avx_mathfun routines *including the
  FMA contractions GCC applies to them* (Horner steps, range reduction, polynomial tails); the
  contraction pattern was determined against PyTorch 2.13 output, and the whole float32 normal
  kernel was then checked against PyTorch on every one of its 2**24 + 2**24 possible inputs
  (tools/verify_normal_exhaustive.py).
* ``normal16_avx2`` / ``normal16_double`` / ``normal16_libm_f32``: the Box-Muller blocks of
  PyTorch's kernels, the reference the fast float32 kernel (``_random_normal_fast``) is checked
  against.

No torch (nor jax) here.
"""
import math

import numpy as np

_F32 = np.float32
_F64 = np.float64
_U64 = np.uint64

def aligned_empty(n, dtype=_F32, align=64):
    """An uninitialised 1-d array whose data is ``align``-byte aligned.

    ``jax.device_put`` aliases such a NumPy array on the CPU instead of copying it (NumPy's own
    allocations are only 16-byte aligned), which saves a copy of every large sample.
    """
    dtype = np.dtype(dtype)
    buf = np.empty(n * dtype.itemsize + align, np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + n * dtype.itemsize].view(dtype)


# -------------------------------------------------------------------------- fused multiply-add

_MID32 = _U64(0x10000000)      # low 29 bits of a float64 lying exactly between two float32
_LOW29 = _U64(0x1FFFFFFF)
_TINY32 = 2.0 ** -126          # below this float32 is subnormal and the midpoint test changes


def _nudge_odd(s, err):
    """Round-to-odd fix-up: ``s = RN(x)`` with ``x = s + err`` exactly; return RO(x)."""
    bits = s.view(_U64)
    even = (bits & _U64(1)) == 0
    fix = (err != 0) & even
    if fix.any():
        s = s.copy()
        s[fix] = np.nextafter(s[fix], np.where(err[fix] > 0, np.inf, -np.inf))
    return s


def _two_sum_err(a, b, s):
    """Exact error of ``s = RN(a + b)`` (Knuth's TwoSum)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def fmaf(a, b, c):
    """float32 ``fmaf(a, b, c)``, correctly rounded, elementwise (inputs cast to float32)."""
    a = np.asarray(a, _F32)
    b = np.asarray(b, _F32)
    c = np.asarray(c, _F32)
    p = np.multiply(a, b, dtype=_F64)            # exact: 24 + 24 bits < 53
    s = np.add(p, c, dtype=_F64)
    s = np.atleast_1d(s)
    # RN64 then RN32 equals RN32 unless the float64 result sits exactly on a float32 midpoint
    # (or in float32's subnormal range); only there do we need the exact residual.
    hazard = ((s.view(_U64) & _LOW29) == _MID32) | ((np.abs(s) < _TINY32) & (s != 0))
    if hazard.any():
        idx = np.nonzero(hazard)
        pb = np.broadcast_to(p, s.shape)[idx]
        cb = np.broadcast_to(c, s.shape).astype(_F64)[idx]
        s = s.copy()
        s[idx] = _nudge_odd(s[idx], _two_sum_err(pb, cb, s[idx]))
    out = s.astype(_F32)
    return out.reshape(np.broadcast(a, b, c).shape)


_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp splitting constant for float64


def _two_prod_err(a, b, p):
    """Exact error of ``p = RN(a * b)`` via Dekker's splitting (no hardware fma needed)."""
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma(a, b, c):
    """float64 ``fma(a, b, c)``, correctly rounded, elementwise (finite, non-huge inputs)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64))
    shape = a.shape
    a, b, c = a.ravel(), b.ravel(), c.ravel()
    p = a * b
    e = _two_prod_err(a, b, p)                   # a*b == p + e exactly
    s = p + c
    t = _two_sum_err(p, c, s)                    # p + c == s + t exactly
    w = t + e
    z = _two_sum_err(t, e, w)                    # t + e == w + z exactly
    # round-to-odd keeps the sticky bit so the final rounding of s + w is the single rounding
    w = _nudge_odd(w, z)
    out = s + w
    # products/sums that are exact anyway (and inf/nan) fall back to the plain computation
    bad = ~np.isfinite(e) | ~np.isfinite(w)
    if bad.any():
        out[bad] = (a[bad] * b[bad]) + c[bad]
    return out.reshape(shape)


def _is_plus_zero(v):
    return v == 0 and not np.signbit(v)


# -------------------------------------------------------------------------- glibc float64 math

def _reversed(fn):
    def call(x):
        x = np.asarray(x, _F64)
        flat = np.ascontiguousarray(x).ravel()
        # a negative stride steers NumPy away from its SIMD (SVML) loops to the libm call
        return fn(flat[::-1])[::-1].reshape(x.shape)
    return call


def _slow(fn):
    def c_like(v):                      # math.* raises where the C function returns inf/nan
        try:
            return fn(v)
        except OverflowError:
            return math.inf
        except ValueError:
            return -math.inf if v in (0.0, -1.0) else math.nan
    vec = np.frompyfunc(c_like, 1, 1)

    def call(x):
        x = np.asarray(x, _F64)
        return vec(x).astype(_F64) if x.size else x.copy()
    return call


def _pick(np_fn, math_fn, sample):
    fast = _reversed(np_fn)
    ref = np.array([math_fn(v) for v in sample])
    got = fast(sample)
    if np.array_equal(ref.view(_U64), got.view(_U64)):
        return fast
    return _slow(math_fn)


def _probe_inputs():
    # 4096 uniforms: enough to catch a SIMD loop that differs from glibc in ~0.1% of inputs
    rng = np.random.default_rng(12345)
    u = rng.integers(0, 2 ** 53, 4096, dtype=np.uint64).astype(_F64) * 2.0 ** -53
    return u


_PROBE = _probe_inputs()
libm_log = _pick(np.log, math.log, 1.0 - _PROBE)
libm_log1p = _pick(np.log1p, math.log1p, -_PROBE)
libm_exp = _pick(np.exp, math.exp, (_PROBE - 0.5) * 20.0)
libm_sin = _pick(np.sin, math.sin, _PROBE * (2 * math.pi))
libm_cos = _pick(np.cos, math.cos, _PROBE * (2 * math.pi))
libm_tan = _pick(np.tan, math.tan, math.pi * (_PROBE - 0.5))
libm_sqrt = np.sqrt   # IEEE sqrt is correctly rounded everywhere


# ----------------------------------------------------------------------- avx_mathfun (float32)

def _c(v):
    return _F32(v)


_MIN_NORM = np.array([0x00800000], np.uint32).view(_F32)[0]
_INV_MANT = np.uint32(~0x7F800000 & 0xFFFFFFFF)
_HALF_BITS = np.uint32(0x3F000000)
_SQRTHF = _c(0.707106781186547524)
_LOG_P = [_c(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                          -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                          2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1 = _c(-2.12194440e-4)
_LOG_Q2 = _c(0.693359375)
_FOPI = _c(1.27323954473516)
_DP = [_c(-0.78515625), _c(-2.4187564849853515625e-4), _c(-3.77489497744594108e-8)]
_SIN_P = [_c(-1.9515295891E-4), _c(8.3321608736E-3), _c(-1.6666654611E-1)]
_COS_P = [_c(2.443315711809948E-005), _c(-1.388731625493765E-003), _c(4.166664568298827E-002)]
_ONE = _c(1.0)
_HALF = _c(0.5)
_SIGN = np.uint32(0x80000000)


def _fma_fast(a, b, c):
    """fmaf for the avx_mathfun emulation: one float64 sum rounded once to float32.

    Equal to the correctly rounded fmaf unless the float64 sum is inexact *and* lands on a
    float32 midpoint; tests/test_random_engine.py checks exhaustively, over every input the
    normal sampler can produce, that this never happens for the steps using it.
    """
    t = np.multiply(a, b, dtype=_F64)
    t += c
    return t.astype(_F32)


def log256_ps(x, exact_fma=False):
    """Emulate ``log256_ps`` (natural log of float32, NaN for x <= 0) with GCC's contractions."""
    f = fmaf if exact_fma else _fma_fast
    x = np.asarray(x, _F32)
    invalid = x <= 0
    x = np.maximum(x, _MIN_NORM)
    bits = x.view(np.uint32)
    e = (bits >> 23).view(np.int32) - 0x7F
    x = ((bits & _INV_MANT) | _HALF_BITS).view(_F32)
    e = e.astype(_F32) + _ONE
    mask = x < _SQRTHF
    tmp = np.where(mask, x, _F32(0))
    x = x - _ONE
    e = e - mask.astype(_F32)
    x = x + tmp
    z = x * x
    y = f(_LOG_P[0], x, _LOG_P[1])
    for p in _LOG_P[2:]:
        y = f(y, x, p)                  # Horner steps contract to vfmadd
    y = y * x
    y = f(y, z, e * _LOG_Q1)            # y*z + e*q1: GCC fuses the y*z product
    y = y - z * _HALF                   # z*0.5 is exact, so fused == unfused
    x = x + y
    x = x + e * _LOG_Q2                 # e*q2 is exact (e is a small integer)
    return np.where(invalid, _F32(np.nan), x)


def sincos256_ps(x, exact_fma=False):
    """Emulate ``sincos256_ps`` (float32 sin and cos) with GCC's contractions; returns (s, c)."""
    f = fmaf if exact_fma else _fma_fast
    x = np.asarray(x, _F32)
    sign_sin = x.view(np.uint32) & _SIGN
    x = np.abs(x)
    j = (x * _FOPI).astype(np.int32)    # cvttps: truncation toward zero
    j = (j + 1) & ~1
    y = j.astype(_F32)
    swap_sin = ((j & 4) << 29).view(np.uint32)
    poly = (j & 2) == 0
    for dp in _DP:
        x = f(y, dp, x)                 # "extended precision modular arithmetic", fused
    sign_cos = ((~(j - 2) & 4) << 29).view(np.uint32)
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = f(_COS_P[0], z, _COS_P[1])
    yc = f(yc, z, _COS_P[2])
    yc = yc * z
    yc = f(yc, z, -(z * _HALF))         # yc*z - z*0.5 with the yc*z product fused
    yc = yc + _ONE
    ys = f(_SIN_P[0], z, _SIN_P[1])
    ys = f(ys, z, _SIN_P[2])
    ys = ys * z
    ys = f(ys, x, x)
    zero = _F32(0)
    ysin2 = np.where(poly, ys, zero)
    ysin1 = np.where(poly, zero, yc)
    ys = ys - ysin2
    yc = yc - ysin1
    s = ysin1 + ysin2
    c = yc + ys
    s = (s.view(np.uint32) ^ sign_sin).view(_F32)
    c = (c.view(np.uint32) ^ sign_cos).view(_F32)
    return s, c


# --------------------------------------------------------------------------- Box-Muller blocks

_TWO_PI_F = _c(2.0 * math.pi)
_MINUS_TWO_F = _c(-2.0)


def normal16_avx2(u, mean, std, exact_fma=False, pre_fma=False):
    """PyTorch's AVX2 ``NormalFill16<float>`` over blocks: ``u`` is float32 (nblocks, 16).

    Slots 0..7 give u1 = 1 - u (for the log), slots 8..15 give u2 (the angle); the cosine
    branch goes to slots 0..7 and the sine branch to 8..15, then ``fmaf(n, std, mean)``.
    """
    u = np.asarray(u, _F32).reshape(-1, 2, 8)
    u1 = _ONE - u[:, 0, :]
    u2 = u[:, 1, :]
    radius = np.sqrt(_MINUS_TWO_F * log256_ps(u1, exact_fma))
    theta = _TWO_PI_F * u2
    s, c = sincos256_ps(theta, exact_fma)
    out = np.empty(u.shape, _F32)
    np.multiply(radius, c, out=out[:, 0, :])
    np.multiply(radius, s, out=out[:, 1, :])
    mean = _F32(mean)
    std = _F32(std)
    if pre_fma:
        pass
    elif std == 1 and _is_plus_zero(mean):
        out += _F32(0)                   # fmaf(n, 1, +0) == n + 0 (turns -0 into +0)
    else:
        out = fmaf(out, std, mean)
    return out.reshape(-1, 16)


def normal16_double(u, mean, std):
    """PyTorch's generic ``NormalFill16<double>``: libm log/cos/sin and a true fma."""
    u = np.ascontiguousarray(u, _F64).reshape(-1)
    halves = u.view(_V64).reshape(-1, 2)         # 8 doubles: slots 0..7 / 8..15 of a block
    u1 = np.empty(u.shape[0] // 2, _F64)
    u2 = np.empty_like(u1)
    np.copyto(u1.view(_V64), halves[:, 0])
    np.copyto(u2.view(_V64), halves[:, 1])
    np.subtract(1.0, u1, out=u1)
    radius = libm_sqrt(-2.0 * libm_log(u1))
    theta = (2.0 * math.pi) * u2
    out = np.empty(u.shape[0], _F64)
    ov = out.view(_V64).reshape(-1, 2)
    for half, trig in ((0, libm_cos), (1, libm_sin)):
        vals = radius * trig(theta)
        if std == 1 and _is_plus_zero(mean):
            vals += 0.0
        else:
            vals = fma(vals, float(std), float(mean))
        np.copyto(ov[:, half], vals.view(_V64))
    return out.reshape(-1, 16)


_V64 = np.dtype((np.void, 64))    # 8 float64: half a 16-block


def _reversed_f32(fn):
    def call(x):
        x = np.asarray(x, _F32)
        flat = np.ascontiguousarray(x).ravel()
        return fn(flat[::-1])[::-1].reshape(x.shape)
    return call


def normal16_libm_f32(u, mean, std):
    """PyTorch's generic ``NormalFill16<float>`` (CPUs without AVX2): glibc logf/cosf/sinf.

    Unverified: it assumes NumPy's negative-stride float32 loops call glibc's logf/cosf/sinf.
    """
    logf, cosf, sinf = _reversed_f32(np.log), _reversed_f32(np.cos), _reversed_f32(np.sin)
    u = np.asarray(u, _F32).reshape(-1, 2, 8)
    u1 = _ONE - u[:, 0, :]
    radius = np.sqrt(_F32(-2) * logf(u1))
    theta = ((2.0 * math.pi) * u[:, 1, :].astype(_F64)).astype(_F32)
    out = np.empty(u.shape, _F32)
    out[:, 0, :] = fmaf(radius * cosf(theta), std, mean)
    out[:, 1, :] = fmaf(radius * sinf(theta), std, mean)
    return out.ravel()
