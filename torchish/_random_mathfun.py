"""Bit-exact host arithmetic behind the PyTorch CPU generator emulation.

PyTorch's CPU sampling kernels are C++ compiled with FMA contraction, call glibc's libm in
double precision, and (on x86 CPUs with AVX2) transform float32 normals with the Cephes-style
``log256_ps`` / ``sincos256_ps`` routines from ``avx_mathfun.h``. Reproducing their output bit for
bit in NumPy needs three things this module provides:

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
* ``normal_f32_blocks``: the same kernel fast. From 4096 values on it is one jitted XLA
  computation on the CPU (fused, vectorised, fed chunk by chunk while the next chunk is drawn),
  written so that XLA's rewrites and LLVM's FMA contraction cannot change a bit and checked
  against the NumPy reference on first use (see "XLA kernel" below); below that, or if XLA ever
  fails its check, in-place NumPy calls on cache-sized chunks.

No torch here; jax only inside the XLA kernel, imported on first use.
"""
import math
import os
import threading

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


# ---------------------------------------------------------------------------- fast AVX2 kernel
#
# The same arithmetic as normal16_avx2, specialised to the sampler's inputs (u1 = 1 - k*2**-24
# in [2**-24, 1], theta = f32(2*pi) * k*2**-24 in [0, 2*pi)) and written as in-place NumPy calls
# on preallocated, cache-sized buffers. Branches that cannot occur there are dropped, products
# that are exact in float32 (y * DP1, y * DP2, z * 0.5, e * q2) are left unfused, and each fused
# step is one float64 multiply plus one add that rounds straight into float32.
# tests/test_random_engine.py compares it with the reference above on every possible input.

_C_THETA = _TWO_PI_F * _F32(2.0 ** -24)      # f32(2pi) * k * 2**-24 == RN(k * this), exactly
_TWO24 = _F32(2.0 ** 24)
_INV24 = _F32(2.0 ** -24)
_LOG_P64 = [float(p) for p in _LOG_P]
_SIN_P64 = [float(p) for p in _SIN_P]
_COS_P64 = [float(p) for p in _COS_P]
_DP3_64 = float(_DP[2])
_CS_P0, _CS_P1, _CS_P2 = (np.array([[c], [s]]) for c, s in zip(_COS_P64, _SIN_P64))


class _Workspace:
    def __init__(self, pairs):
        self.pairs = pairs
        self.f = [np.empty(pairs, _F32) for _ in range(9)]
        self.t, self.x64, self.z64 = (np.empty(pairs, _F64) for _ in range(3))
        self.i = [np.empty(pairs, np.int32) for _ in range(3)]
        self.m = np.empty(pairs, bool)
        self.k = np.empty(pairs, np.uint32)
        self.yy = np.empty((2, pairs), _F32)
        self.tt = np.empty((2, pairs), _F64)


def _log_radius(ws, u1, out):
    """out = sqrt(-2 * log256_ps(u1)) for u1 in [2**-24, 1] (u1 is clobbered)."""
    x = u1
    e, xo, y, z, mf = ws.f[1], ws.f[2], ws.f[3], ws.f[4], ws.f[5]
    t, x64, m, i = ws.t, ws.x64, ws.m, ws.i[0]
    # frexp gives exactly log256_ps's split for normal inputs: mantissa in [0.5, 1) and
    # e = (exponent field - 127) + 1
    np.frexp(x, out=(x, i))
    np.copyto(e, i, casting="unsafe")
    np.less(x, _SQRTHF, out=m)
    np.copyto(mf, m)
    np.multiply(x, mf, out=xo)                        # tmp = x & mask
    x -= _ONE
    x += xo
    e -= mf
    np.multiply(x, x, out=z)
    np.copyto(x64, x)
    np.multiply(x64, _LOG_P64[0], out=t)
    np.add(t, _LOG_P64[1], out=y, casting="same_kind")
    for p in _LOG_P64[2:]:
        np.multiply(y, x64, out=t)
        np.add(t, p, out=y, casting="same_kind")
    y *= x
    np.copyto(x64, z)
    np.multiply(y, x64, out=t)
    np.multiply(e, _LOG_Q1, out=xo)
    np.add(t, xo, out=y, casting="same_kind")
    z *= _HALF
    y -= z
    x += y
    e *= _LOG_Q2
    x += e
    x *= _MINUS_TWO_F
    np.sqrt(x, out=out)


def _sincos(ws, theta, s_out, c_out):
    """(s, c) = sincos256_ps(theta) for theta in [0, 2*pi) (theta is clobbered)."""
    x = theta
    y, z, tmp = ws.f[1], ws.f[2], ws.f[5]
    t, x64, z64 = ws.t, ws.x64, ws.z64
    j, k, msk = ws.i
    np.multiply(x, _FOPI, out=y)
    np.copyto(j, y, casting="unsafe")                 # truncation toward zero
    j += 1
    j &= ~1
    np.copyto(y, j, casting="unsafe")
    np.multiply(y, _DP[0], out=tmp)                   # exact product: fused == unfused
    x += tmp
    np.multiply(y, _DP[1], out=tmp)
    x += tmp
    np.multiply(y, _DP3_64, out=t, dtype=_F64)
    t += x
    np.copyto(x, t, casting="same_kind")
    np.multiply(x, x, out=z)
    np.copyto(z64, z)
    np.copyto(x64, x)
    # cosine and sine polynomials side by side: rows of a (2, pairs) block share each call
    yy, tt = ws.yy, ws.tt
    np.multiply(z64, _CS_P0, out=tt)
    np.add(tt, _CS_P1, out=yy, casting="same_kind")
    np.multiply(yy, z64, out=tt)
    np.add(tt, _CS_P2, out=yy, casting="same_kind")
    yy *= z
    yc, ys = yy[0], yy[1]
    np.multiply(yc, z64, out=t)
    np.multiply(z, _HALF, out=tmp)
    np.subtract(t, tmp, out=yc, casting="same_kind")
    yc += _ONE
    np.multiply(ys, x64, out=t)
    t += x64
    np.copyto(ys, t, casting="same_kind")
    # select by polynomial mask (j & 2 == 0 -> cosine polynomial for cos) with a bit blend
    np.bitwise_and(j, 2, out=msk)
    np.right_shift(msk, 1, out=msk)
    msk -= 1                                          # -1 where (j & 2) == 0, else 0
    yci, ysi = yc.view(np.int32), ys.view(np.int32)
    np.bitwise_xor(yci, ysi, out=k)
    k &= msk
    np.bitwise_xor(ysi, k, out=c_out.view(np.int32))
    np.bitwise_xor(yci, k, out=s_out.view(np.int32))
    # sign bits: sine flips where j & 4, cosine where ~(j - 2) & 4
    np.bitwise_and(j, 4, out=k)
    np.left_shift(k, 29, out=k)
    np.bitwise_xor(s_out.view(np.int32), k, out=s_out.view(np.int32))
    j -= 2
    np.invert(j, out=j)
    j &= 4
    np.left_shift(j, 29, out=j)
    np.bitwise_xor(c_out.view(np.int32), j, out=c_out.view(np.int32))


_V32 = np.dtype((np.void, 32))    # 8 uint32 draws or 8 float32 outputs: half a 16-block


def _normal_chunk(ws, raw, out, plus_zero=False):
    """One chunk: raw uint32 draws (16*B) -> out float32 (16*B), before the mean/std fma."""
    blocks = raw.shape[0] // 16
    pairs = blocks * 8
    if ws is None or ws.pairs != pairs:
        ws = _Workspace(pairs)
    halves = raw.view(_V32).reshape(blocks, 2)
    k, u1, theta = ws.k, ws.f[0], ws.f[6]
    # slots 0..7 of each block feed the log, slots 8..15 the angle
    np.copyto(k.view(_V32), halves[:, 0])
    k &= np.uint32(0xFFFFFF)
    np.copyto(u1, k.view(np.int32), casting="unsafe")
    np.subtract(_TWO24, u1, out=u1)                   # 1 - k*2**-24 == (2**24 - k) * 2**-24
    u1 *= _INV24
    np.copyto(k.view(_V32), halves[:, 1])
    k &= np.uint32(0xFFFFFF)
    np.copyto(theta, k.view(np.int32), casting="unsafe")
    theta *= _C_THETA
    radius, s, c = ws.f[7], ws.f[8], ws.f[0]
    _log_radius(ws, u1, radius)
    _sincos(ws, theta, s, c)
    ov = out.view(_V32).reshape(blocks, 2)
    for half, trig in ((0, c), (1, s)):
        np.multiply(radius, trig, out=ws.f[2])
        if plus_zero:
            ws.f[2] += _F32(0)          # fmaf(n, 1, +0) == n + 0 (turns -0 into +0)
        np.copyto(ov[:, half], ws.f[2].view(_V32))
    return ws


_CHUNK_BLOCKS = int(os.environ.get("TORCHISH_RNG_CHUNK", 2048))   # 16K pairs per chunk
_LOCAL = threading.local()


def _run_chunks(raw, out, lo, hi, step, plus_zero):
    ws = getattr(_LOCAL, "ws", None)
    for i in range(lo, hi, step):
        ws = _normal_chunk(ws, raw[i:i + step], out[i:i + step], plus_zero)
    _LOCAL.ws = ws      # one workspace per thread, reused across calls


# ------------------------------------------------------------------------- XLA kernel (CPU jit)
#
# The same float32 arithmetic as one jitted XLA computation on the CPU: fused into a single
# vectorised loop, about 5x faster than the NumPy pipeline. What keeps it bit-exact whatever
# XLA's optimiser and LLVM do:
# * each fused step is either ``a * b + c`` in float32, which XLA's CPU backend contracts into
#   the FMA that PyTorch's compiler emitted (used only where a single product feeds the add), or
#   (the fallback variant, and always where two products feed one add, since a compiler could
#   fuse either) a float64 product, exact for float32 operands, plus an add rounded once;
#   every other float32 product feeding an add is exact (y * DP1, y * DP2, e * q2, z * 0.5);
# * float constants arrive as an argument (c): XLA's algebraic simplifier would otherwise fold
#   (x * c1) * c2 into x * (c1 * c2) and x + 0 into x; c[12:21] hold the log polynomial,
#   c[21] DP3, c[22:25] / c[25:28] the cos / sin polynomials;
# * XLA's CPU runtime flushes subnormals to zero: no value on the kernel's domain is subnormal,
#   and the final fmaf(n, std, mean) runs in XLA only for mean/std whose results stay normal.
# Each compiled variant checks itself against the NumPy reference on first use (contracting
# variant first, else the float64 one, else NumPy); tests/test_random_engine.py and
# tools/verify_normal_exhaustive.py compare it on every possible input.

_XLA_MIN = 4096                              # below this many values NumPy is as fast
_XLA_SIZES = (1 << 14, 1 << 16, 1 << 18)    # compiled chunk sizes; the largest is the stride
_XLA_ON = os.environ.get("TORCHISH_RNG_XLA", "1") != "0"
_XC32 = np.array([2.0 ** -24, _SQRTHF, 1.0, 0.0, _LOG_Q1, 0.5, _LOG_Q2, -2.0, _C_THETA, _FOPI,
                  _DP[0], _DP[1]] + _LOG_P + [_DP[2]] + _COS_P + _SIN_P, _F32)


def _xla_fma(a, b, c, contract):
    """fmaf(a, b, c) of float32 operands in traced code (see the rules above)."""
    import jax.numpy as jnp
    if contract:
        return a * b + c
    f64 = jnp.float64
    return (a.astype(f64) * b.astype(f64) + c.astype(f64)).astype(jnp.float32)


def _xla_radius(k1, c, contract=False):
    """sqrt(-2 * log256_ps(1 - k1 * 2**-24)) for 24-bit ints k1."""
    import jax
    import jax.numpy as jnp
    f32, f64 = jnp.float32, jnp.float64
    one, zero = c[2], c[3]
    u1 = (jnp.int32(1 << 24) - k1.astype(jnp.int32)).astype(f32) * c[0]
    bits = jax.lax.bitcast_convert_type(u1, jnp.uint32)
    e = ((bits >> 23).astype(jnp.int32) - 127).astype(f32) + one
    x = jax.lax.bitcast_convert_type((bits & jnp.uint32(0x807FFFFF)) | jnp.uint32(0x3F000000), f32)
    mask = x < c[1]
    tmp = jnp.where(mask, x, zero)
    x = x - one
    e = e - jnp.where(mask, one, zero)
    x = x + tmp
    z = x * x
    y = _xla_fma(c[12], x, c[13], contract)
    for i in range(2, 9):
        y = _xla_fma(y, x, c[12 + i], contract)
    y = y * x
    # y*z + e*q1 has two products a compiler could fuse: spelt out whatever ``contract`` says
    y = (y.astype(f64) * z.astype(f64) + (e * c[4]).astype(f64)).astype(f32)
    y = y - z * c[5]
    x = x + y
    x = x + e * c[6]
    return jnp.sqrt(c[7] * x)


def _xla_sincos(k2, c, contract=False):
    """sincos256_ps(f32(2*pi) * k2 * 2**-24) for 24-bit ints k2: (sin, cos)."""
    import jax
    import jax.numpy as jnp
    f32, f64, i32 = jnp.float32, jnp.float64, jnp.int32
    bc = jax.lax.bitcast_convert_type
    zero = c[3]
    x = k2.astype(i32).astype(f32) * c[8]
    j = (x * c[9]).astype(i32)                  # truncation toward zero
    j = (j + 1) & ~1
    y = j.astype(f32)
    x = x + y * c[10]
    x = x + y * c[11]
    x = _xla_fma(y, c[21], x, contract)
    z = x * x
    yc = _xla_fma(c[22], z, c[23], contract)
    yc = _xla_fma(yc, z, c[24], contract)
    yc = yc * z
    # yc*z - z*0.5: two products, spelt out (see _xla_radius)
    yc = (yc.astype(f64) * z.astype(f64) - (z * c[5]).astype(f64)).astype(f32)
    yc = yc + c[2]
    ys = _xla_fma(c[25], z, c[26], contract)
    ys = _xla_fma(ys, z, c[27], contract)
    ys = ys * z
    ys = _xla_fma(ys, x, x, contract)
    poly = (j & 2) == 0
    ysin2 = jnp.where(poly, ys, zero)
    ysin1 = jnp.where(poly, zero, yc)
    ys = ys - ysin2
    yc = yc - ysin1
    s = bc(bc(ysin1 + ysin2, i32) ^ ((j & 4) << 29), f32)
    cs = bc(bc(yc + ys, i32) ^ ((~(j - 2) & 4) << 29), f32)
    return s, cs


def _xla_fmaf(n, sm):
    """fmaf(n, std, mean) with sm = [std, mean] (float64): round to odd in float64, then once."""
    import jax
    import jax.numpy as jnp
    f64, i64 = jnp.float64, jnp.int64
    p = n.astype(f64) * sm[0]                    # exact
    s = p + sm[1]
    bb = s - p
    err = (p - (s - bb)) + (sm[1] - bb)          # TwoSum: p + mean == s + err exactly
    sb = jax.lax.bitcast_convert_type(s, i64)
    odd = (err != 0) & ((sb & 1) == 0)
    step = jnp.where((err > 0) == (s > 0), jnp.int64(1), jnp.int64(-1))
    return jax.lax.bitcast_convert_type(jnp.where(odd, sb + step, sb), f64).astype(jnp.float32)


def _xla_normal(mode, contract, raw, c, sm):
    """raw uint32 (16*B) -> the two halves (B, 8) of PyTorch's blocks: cos side, sin side."""
    import jax.numpy as jnp
    r = (raw & jnp.uint32(0xFFFFFF)).reshape(-1, 2, 8)
    radius = _xla_radius(r[:, 0], c, contract)
    s, cs = _xla_sincos(r[:, 1], c, contract)
    halves = (radius * cs, radius * s)
    if mode == "plain":                          # fmaf(n, 1, +0) == n + 0: -0 becomes +0
        return tuple(jnp.where(h == c[3], c[3], h) for h in halves)
    if mode == "fma":
        return tuple(_xla_fmaf(h, sm) for h in halves)
    return halves                                # "pre": before the fmaf


class _XlaNormal:
    """Compiled variants of the kernel (per mode and chunk size), each self-checked once."""

    def __init__(self):
        import jax
        self.jax = jax
        self.cpu = jax.devices("cpu")[0]
        self.c = jax.device_put(_XC32, self.cpu)
        self.fns = {}
        self.contracted = {}                     # (mode, size) -> which variant passed
        self.probe = _xla_probe()

    def fn(self, mode, size):
        key = (mode, size)
        if key not in self.fns:
            self.fns[key] = None
            for contract in (True, False):      # the faster variant where it is exact
                f = self.jax.jit(lambda raw, c, sm, contract=contract:
                                 _xla_normal(mode, contract, raw, c, sm))
                if self._check(f, mode, size):
                    self.fns[key] = f
                    self.contracted[key] = contract
                    break
        return self.fns[key]

    def _check(self, f, mode, size):
        raw = np.zeros(size, np.uint32)
        raw[:self.probe.size] = self.probe
        u = (self.probe & np.uint32(0xFFFFFF)).astype(_F32) * _INV24
        for mean, std in ((0.0, 1.0),) if mode != "fma" else ((0.375, 1.5), (-2.5, 3.1e-3)):
            halves = self.run(f, raw, mean, std)
            got = np.stack([np.asarray(h) for h in halves], 1).reshape(-1)[:self.probe.size]
            want = normal16_avx2(u, mean, std, exact_fma=True, pre_fma=mode == "pre").ravel()
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                return False
        return True

    def run(self, f, raw, mean, std):
        put = self.jax.device_put
        with np.errstate(over="ignore"):
            sm = np.array([std, mean], _F32).astype(_F64)
        return f(put(raw, self.cpu), self.c, put(sm, self.cpu))


def _xla_probe():
    """Raw draws for the self-check: edges of every branch, then pseudo-random words."""
    k = [0, 1, 2, 3, 0xFFFFFF, 0xFFFFFE, 0x800000, 0x7FFFFF, 0x7FFFFE, 6601320]
    for j in range(1, 9):                        # angle near the octant boundaries j*pi/4
        k += [j * (1 << 21) + dk for dk in range(-3, 4)]
    for p in range(1, 25):                       # u1 near 2**-p and sqrt(1/2) * 2**-p
        for base in (1 << (24 - p), round(0.70710678 * (1 << (25 - p)))):
            k += [(1 << 24) - base + dk for dk in range(-2, 3)]
    k = np.array([v for v in k if 0 <= v < 1 << 24], np.uint32)
    rnd = np.random.default_rng(20240601).integers(0, 1 << 32, 4096, dtype=np.uint64)
    words = np.concatenate([k, k[::-1], rnd.astype(np.uint32)])
    return words[:words.size // 16 * 16]


_XLA = None
_XLA_LOCK = threading.Lock()


def _xla_fn(mode, size):
    """The compiled, self-checked kernel, or None where XLA is off or failed its check."""
    global _XLA, _XLA_ON
    if not _XLA_ON:
        return None
    with _XLA_LOCK:
        try:
            if _XLA is None:
                _XLA = _XlaNormal()
            return _XLA.fn(mode, size)
        except Exception:  # pragma: no cover - no usable XLA CPU backend
            _XLA_ON = False
            return None


def _xla_mode(mean, std):
    with np.errstate(over="ignore"):                   # PyTorch's fmaf takes them as float
        mean, std = float(_F32(mean)), float(_F32(std))
    if std == 1 and _is_plus_zero(mean):
        return "plain"
    # keep every result out of the range where XLA flushes subnormals (|n| < 6)
    if (std == 0 or 2.0 ** -30 <= std <= 1e37) and (mean == 0 or 2.0 ** -90 <= abs(mean) <= 1e37):
        return "fma"
    return "pre"


def _normal_f32_xla(draw, n, mean, std, out):
    """normal_f32_blocks through the XLA kernel; None if it is unavailable."""
    mode = _xla_mode(mean, std)
    stride = _XLA_SIZES[-1]
    sizes = [next(s for s in _XLA_SIZES if s >= min(stride, n - lo)) for lo in range(0, n, stride)]
    fns = {s: _xla_fn(mode, s) for s in set(sizes)}
    if any(f is None for f in fns.values()):
        return None
    ov = out.view(_V32).reshape(-1, 2)
    pending = []

    def collect():
        lo, m, halves = pending.pop(0)
        for half, h in enumerate(halves):
            np.copyto(ov[lo // 16:(lo + m) // 16, half], np.asarray(h).view(_V32)[:m // 16, 0])

    for lo, size in zip(range(0, n, stride), sizes):
        m = min(stride, n - lo)
        raw = draw(m)
        if m < size:
            raw = np.concatenate([raw, np.zeros(size - m, np.uint32)])
        # XLA runs asynchronously: the next chunk is drawn while this one is transformed
        pending.append((lo, m, _XLA.run(fns[size], raw, mean, std)))
        if len(pending) > 1:
            collect()
    while pending:
        collect()
    if mode == "pre":
        out[...] = fmaf(out, std, mean)
    return out


def normal_f32_blocks(draw, nblocks, mean, std, out=None):
    """float32 normals of PyTorch's AVX2 kernel for ``nblocks`` 16-blocks.

    ``draw(k)`` must return the next ``k`` raw uint32 draws, taken chunk by chunk in stream
    order (with XLA, each chunk is drawn while the previous one is transformed). ``out``
    (default: a new 64-byte aligned array) receives the values.
    """
    n = nblocks * 16
    out = aligned_empty(n, _F32) if out is None else out
    if n >= _XLA_MIN and _normal_f32_xla(draw, n, mean, std, out) is not None:
        return out
    # NumPy kernel: small samples, or XLA unusable
    step = _CHUNK_BLOCKS * 16
    keep = mean == 0 and np.signbit(mean)        # see the signed-zero fix-up below
    plain = std == 1 and _is_plus_zero(mean)     # then the final fmaf is just n + 0
    raws = {}
    for lo in range(0, n, step):
        raw = draw(min(step, n - lo))
        if keep:
            raws[lo] = raw
        _run_chunks(raw, out[lo:lo + step], 0, raw.shape[0], step, plain)
    if plain:
        return out
    mean, std = _F32(mean), _F32(std)
    if keep:
        # only here does the sign of a zero n survive fmaf: recompute those blocks exactly
        for blk in np.unique(np.nonzero(out == 0)[0] // 16).tolist():
            lo = (blk * 16) // step * step
            r = raws[lo][blk * 16 - lo: blk * 16 - lo + 16]
            u = (r & np.uint32(0xFFFFFF)).astype(_F32) * _INV24
            out[blk * 16: blk * 16 + 16] = normal16_avx2(u, 0.0, 1.0, pre_fma=True).ravel()
    out[...] = fmaf(out, std, mean)
    return out


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
