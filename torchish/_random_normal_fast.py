"""The float32 normal kernel of PyTorch's AVX2 CPU generator, fast: ``normal_f32_blocks``.

The same arithmetic as ``normal16_avx2`` (the reference in ``_random_mathfun``, with the fma and
avx_mathfun emulations it is built from). From 4096 values on it is one jitted XLA computation
on the CPU (fused, vectorised, fed chunk by chunk while the next chunk is drawn), written so that
XLA's rewrites and LLVM's FMA contraction cannot change a bit and checked against the NumPy
reference on first use (see "XLA kernel" below); below that, or if XLA ever fails its check,
in-place NumPy calls on cache-sized chunks.

No torch here; jax only inside the XLA kernel, imported on first use.
"""
import os
import threading

import numpy as np

from ._random_mathfun import (_COS_P, _DP, _F32, _F64, _FOPI, _HALF, _LOG_P, _LOG_Q1, _LOG_Q2,
                              _MINUS_TWO_F, _ONE, _SIN_P, _SQRTHF, _TWO_PI_F, _is_plus_zero,
                              aligned_empty, fmaf, normal16_avx2)


# ---------------------------------------------------------------------------- fast AVX2 kernel
#
# The same arithmetic as normal16_avx2, specialised to the sampler's inputs (u1 = 1 - k*2**-24
# in [2**-24, 1], theta = f32(2*pi) * k*2**-24 in [0, 2*pi)) and written as in-place NumPy calls
# on preallocated, cache-sized buffers. Branches that cannot occur there are dropped, products
# that are exact in float32 (y * DP1, y * DP2, z * 0.5, e * q2) are left unfused, and each fused
# step is one float64 multiply plus one add that rounds straight into float32.
# tests/test_random_engine.py compares it with that reference on every possible input.

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
