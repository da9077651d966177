"""Complex `pow` as PyTorch's CPU kernel computes it, special values included.

PyTorch's complex `pow` is C's `cpow` (glibc: `cexp(y * clog(x))`, the product with C99's
recovery of infinities), except that a number exponent first takes the kernel's shortcuts:
0 gives ones, 1 a copy, 0.5 `csqrt`, -0.5 and -1 a c10 complex division of 1, 2, 3 and -2
c10's naive products. XLA's complex `power`, `sqrt` and division give other values at zeros,
infinities and NaNs (0 ** 1.5, inf ** 2, (1j * inf) ** 0.5) and lose the exact results of the
products (1j ** 2 is -1, not -1 + 1e-16j), so the value is computed here on the real and
imaginary parts, following those C functions case by case; the gradient stays jnp.power's.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .cpu_sum_order import fma as _fma_exact
from .inplace import _with_gradient_of   # (value of the first, derivative of the second)

_where = jnp.where


def _rounded(x):
    """x itself, rounded where it stands: XLA fuses `a * b - c` into one FMA (rounding once,
    where C's kernels round the product first); a select on the product keeps it apart."""
    return _where(x == x, x, jnp.copysign(jnp.asarray(np.nan, x.dtype), x))


def _copysign0(x):
    return jnp.copysign(jnp.zeros_like(x), x)


def _box(x):
    """C99's "box the infinity": +-1 for an infinite part, +-0 otherwise."""
    return jnp.copysign(_where(jnp.isinf(x), 1, 0).astype(x.dtype), x)


def _mul_annex_g(a, b, c, d):
    """(a + bi)(c + di) as gcc compiles C's complex product: the naive formula, redone with
    the infinite factor boxed where both parts came out NaN (libgcc's __mulsc3)."""
    ac, bd, ad, bc = _rounded(a * c), _rounded(b * d), _rounded(a * d), _rounded(b * c)
    x, y = ac - bd, ad + bc
    z_inf = jnp.isinf(a) | jnp.isinf(b)
    a1, b1 = _where(z_inf, _box(a), a), _where(z_inf, _box(b), b)
    c1 = _where(z_inf & jnp.isnan(c), _copysign0(c), c)
    d1 = _where(z_inf & jnp.isnan(d), _copysign0(d), d)
    w_inf = jnp.isinf(c1) | jnp.isinf(d1)
    c2, d2 = _where(w_inf, _box(c1), c1), _where(w_inf, _box(d1), d1)
    a2 = _where(w_inf & jnp.isnan(a1), _copysign0(a1), a1)
    b2 = _where(w_inf & jnp.isnan(b1), _copysign0(b1), b1)
    overflow = ~(z_inf | w_inf) & (jnp.isinf(ac) | jnp.isinf(bd) | jnp.isinf(ad) |
                                   jnp.isinf(bc))
    a3, b3, c3, d3 = (_where(overflow & jnp.isnan(v), _copysign0(v), v)
                      for v in (a2, b2, c2, d2))
    redo = jnp.isnan(x) & jnp.isnan(y) & (z_inf | w_inf | overflow)
    inf = jnp.asarray(np.inf, x.dtype)
    return (_where(redo, inf * (a3 * c3 - b3 * d3), x),
            _where(redo, inf * (a3 * d3 + b3 * c3), y))


def _square(a):
    """a * a as an unevaluated sum hi + lo (Dekker's product)."""
    p = _rounded(a * a)
    c = _rounded(134217729.0 * a)
    ah = c - (c - a)
    al = a - ah
    return p, ((ah * ah - p) + 2 * ah * al) + al * al


def _x2y2m1(x, y):
    """x^2 + y^2 - 1 to within a rounding (glibc's __x2y2m1): exact squares, summed with
    compensation, so a |z| within an ulp of 1 keeps the sign and size of its log."""
    if x.dtype == jnp.float32:   # (squares of floats are exact in double)
        xw, yw = x.astype(jnp.float64) ** 2, y.astype(jnp.float64) ** 2
        big, small = jnp.maximum(xw, yw), jnp.minimum(xw, yw)
        return (big - 1) + small
    big, small = jnp.maximum(jnp.abs(x), jnp.abs(y)), jnp.minimum(jnp.abs(x), jnp.abs(y))
    (bh, bl), (sh, sl) = _square(big), _square(small)
    total, comp = bh, jnp.zeros_like(bh)
    for v in (-jnp.ones_like(bh), sh, bl, sl):   # Neumaier's summation
        t = total + v
        comp = comp + _where(jnp.abs(total) >= jnp.abs(v), (total - t) + v, (v - t) + total)
        total = t
    return total + comp


def _clog(x, y):
    """glibc's clog: log|z| + i arg z; any NaN part gives NaN (+inf real for an infinite
    part). A single-precision log|z| is computed in double and rounded, as glibc's is exact
    to within rounding there too."""
    wide = jnp.float64 if x.dtype == jnp.float32 else x.dtype
    xw, yw = x.astype(wide), y.astype(wide)
    h = jnp.hypot(xw, yw)
    # near |z| = 1, log1p of |z|^2 - 1 keeps the digits log(h) would cancel
    near_one = 0.5 * jnp.log1p(_x2y2m1(x, y))
    # (glibc's single-precision clog takes the log of hypotf's rounded result)
    h_log = h.astype(x.dtype).astype(wide) if x.dtype == jnp.float32 else h
    mag = _where((h > 0.75) & (h < 1.5), near_one, jnp.log(h_log)).astype(x.dtype)
    nan = jnp.isnan(x) | jnp.isnan(y)
    inf = jnp.isinf(x) | jnp.isinf(y)
    real = _where(nan, _where(inf, np.inf, np.nan).astype(x.dtype), mag)
    imag = _where(nan, jnp.asarray(np.nan, x.dtype), jnp.arctan2(y, x))
    return real, imag


def _cexp(x, y):
    """glibc's cexp, its scaling of a real part past the exponent's overflow included."""
    info = jnp.finfo(x.dtype)
    t = float(int((info.maxexp - 1) * np.log(2)))
    exp_t = jnp.asarray(np.exp(t), x.dtype)
    tiny = jnp.abs(y) <= info.smallest_normal   # (sin y is y, cos y is 1 there)
    y_safe = _where(jnp.isfinite(y), y, 0)
    # (single precision: glibc's expf, sinf and cosf are correctly rounded, as XLA's float32
    # ones are not; double's, rounded, nearly always are)
    wide = jnp.float64 if x.dtype == jnp.float32 else x.dtype
    sin = _where(tiny, y, jnp.sin(y_safe.astype(wide)).astype(x.dtype))
    cos = _where(tiny, jnp.ones_like(y), jnp.cos(y_safe.astype(wide)).astype(x.dtype))
    r, s, c = x, sin, cos
    for _ in range(2):
        big = r > t
        r = _where(big, r - t, r)
        s, c = _where(big, s * exp_t, s), _where(big, c * exp_t, c)
    ev = jnp.exp(_where(r > t, 0, r).astype(wide)).astype(x.dtype)
    huge = jnp.asarray(info.max, x.dtype)
    fin_re = _where(r > t, huge * c, ev * c)
    fin_im = _where(r > t, huge * s, ev * s)
    nan = jnp.asarray(np.nan, x.dtype)
    # an infinite real part: 0 or inf along the direction of y
    value = _where(x < 0, 0, np.inf).astype(x.dtype)
    inf_re = _where(y == 0, value, jnp.copysign(value, cos))
    inf_im = _where(y == 0, y, jnp.copysign(value, sin))
    inf_re = _where(jnp.isfinite(y), inf_re, _where(x < 0, 0, np.inf).astype(x.dtype))
    inf_im = _where(jnp.isfinite(y), inf_im, _where(x < 0, _copysign0(y), y - y))
    re = _where(jnp.isfinite(x), _where(jnp.isfinite(y), fin_re, nan),
                _where(jnp.isinf(x), inf_re, nan))
    im = _where(jnp.isfinite(x), _where(jnp.isfinite(y), fin_im, nan),
                _where(jnp.isinf(x), inf_im, _where(y == 0, y, nan)))
    return re, im


def _cpow(x, y, er, ei):
    lr, li = _clog(x, y)
    return _cexp(*_mul_annex_g(er, ei, lr, li))


def _hypot(x, y):
    """glibc's (2.35+) double `hypot`: a root of the rounded sum of squares, corrected by one
    step on the exact error (its non-FMA kernel); XLA's `max * sqrt(1 + (min / max)^2)` is an
    ulp off in about one case in ten, a correctly rounded hypot in one in 200."""
    x, y = jnp.abs(x), jnp.abs(y)
    ax, ay = jnp.maximum(x, y), jnp.minimum(x, y)
    # huge or tiny operands are scaled by 2^-600 / 2^600 around the kernel
    large, tiny = ax > 2.0 ** 511, ay < 2.0 ** -511
    scale = _where(large, 2.0 ** -600, _where(tiny, 2.0 ** 600, 1.0)).astype(ax.dtype)
    sx, sy = ax * scale, ay * scale
    h = jnp.sqrt(_rounded(sx * sx) + _rounded(sy * sy))
    near = h <= 2 * sy
    delta = h - _where(near, sy, sx)
    t1 = _where(near, _rounded(sx * (2 * delta - sx)), _rounded(2 * delta * (sx - 2 * sy)))
    t2 = _where(near, _rounded((delta - 2 * (sx - sy)) * delta),
                _rounded(_rounded((4 * delta - sy) * sy) + _rounded(delta * delta)))
    h = (h - (t1 + t2) / (2 * h)) / scale
    # one operand negligible (or zero): the sum; infinities and NaNs as jnp.hypot
    small = _where(tiny & ~large, ax >= ay / 2.0 ** -54, ay <= ax * 2.0 ** -54)
    out = _where(small, ax + ay, h)
    return _where(jnp.isfinite(x) & jnp.isfinite(y), out, jnp.hypot(x, y))


def _csqrt(x, y):
    """glibc's csqrt."""
    wide = jnp.float64 if x.dtype == jnp.float32 else x.dtype
    xw, yw = x.astype(wide), y.astype(wide)
    # (a quarter of a part near the largest float keeps d + |x| finite; the root doubles)
    scale = jnp.maximum(jnp.abs(xw), jnp.abs(yw)) > jnp.finfo(wide).max / 4
    xs, ys = _where(scale, xw / 4, xw), _where(scale, yw / 4, yw)
    # (a float32 part's squares are exact in float64: no correction needed)
    d = jnp.hypot(xs, ys) if x.dtype == jnp.float32 else _hypot(xs, ys)
    pos_r = jnp.sqrt(0.5 * (d + xs))
    neg_s = jnp.sqrt(0.5 * (d - xs))
    r = _where(xs > 0, pos_r, jnp.abs(0.5 * (ys / _where(neg_s == 0, 1, neg_s))))
    s = _where(xs > 0, 0.5 * (ys / _where(pos_r == 0, 1, pos_r)), neg_s)
    r, s = _where(scale, 2 * r, r), _where(scale, 2 * s, s)
    # y == 0 and x == 0 have exact roots
    root_x = jnp.sqrt(jnp.abs(xw))
    r = _where(yw == 0, _where(xw < 0, 0, root_x), r)
    s = _where(yw == 0, _where(xw < 0, root_x, 0), s)
    r0 = jnp.sqrt(0.5 * jnp.abs(yw))
    r = _where((xw == 0) & (yw != 0), r0, r)
    s = _where((xw == 0) & (yw != 0), r0, s)
    re, im = r.astype(x.dtype), jnp.copysign(s.astype(x.dtype), y)
    nan = jnp.asarray(np.nan, x.dtype)
    inf = jnp.asarray(np.inf, x.dtype)
    # special parts: an infinite imaginary part wins, then an infinite real part
    sp_re = _where(jnp.isinf(y), inf,
                   _where(jnp.isinf(x) & (x < 0), _where(jnp.isnan(y), nan, 0),
                          _where(jnp.isinf(x), x, nan)))
    sp_im = _where(jnp.isinf(y), y,
                   _where(jnp.isinf(x) & (x < 0), jnp.copysign(inf, y),
                          _where(jnp.isinf(x), _where(jnp.isnan(y), nan, _copysign0(y)),
                                 nan)))
    special = ~(jnp.isfinite(x) & jnp.isfinite(y))
    return _where(special, sp_re, re), _where(special, sp_im, im)


def _fma(a, b, c):
    """a * b + c rounded once; an infinite or NaN part as the plain formula gives it."""
    plain = c + _rounded(a * b)
    return _where(jnp.isfinite(plain), _fma_exact(a, b, c), plain)


def _reciprocal(c, d):
    """1 / (c + di) as c10's complex division computes it (Smith's method; 1 / 0 is
    inf + nan i)."""
    real_first = jnp.abs(c) >= jnp.abs(d)
    zero = (c == 0) & (d == 0)
    one = jnp.ones_like(c)
    safe_c = _where(real_first & ~zero, c, 1)
    safe_d = _where(real_first, 1, d)
    nan = jnp.asarray(np.nan, c.dtype)
    # (c10's (1 + 0 * rat), (0 - rat), (rat + 0), (0 * rat - 1), written out: XLA would
    # fold the zeros, and with them the NaN of 0 * inf and the sign of a zero)
    # (gcc contracts c10's `c + d * rat` into one FMA, rounding once)
    rat1 = d / safe_c
    scl1 = one / _fma(d, rat1, c)
    re1 = _where(jnp.isfinite(rat1), one, nan) * scl1
    im1 = _where(rat1 == 0, 0, -rat1) * scl1
    rat2 = c / safe_d
    scl2 = one / _fma(c, rat2, d)
    re2 = _where(rat2 == 0, 0, rat2) * scl2
    im2 = _where(jnp.isfinite(rat2), -one, nan) * scl2
    re = _where(real_first, _where(zero, one / jnp.abs(c), re1), re2)
    im = _where(real_first, _where(zero, 0 / jnp.abs(d), im1), im2)
    return re, im


def _mul_naive(a, b, c, d):
    return _rounded(a * c) - _rounded(b * d), _rounded(a * d) + _rounded(b * c)


def power(base, exp, scalar):
    """`base ** exp` for a complex result; `scalar`: the exponent is a number (PyTorch's
    Tensor-Scalar kernel and its shortcuts), else an operand of the elementwise C pow."""
    out = jnp.power(base, exp)
    b, e = jax.lax.stop_gradient(base), jax.lax.stop_gradient(exp)
    b, e = jnp.broadcast_arrays(b.astype(out.dtype), e.astype(out.dtype))
    x, y, er, ei = jnp.real(b), jnp.imag(b), jnp.real(e), jnp.imag(e)
    re, im = _cpow(x, y, er, ei)
    if scalar:
        sq_re, sq_im = _mul_naive(x, y, x, y)
        root = _csqrt(x, y)
        cases = [
            (0, (jnp.ones_like(x), jnp.zeros_like(x))),
            (1, (x, y)),
            (0.5, root),
            (-0.5, _reciprocal(*root)),
            (-1, _reciprocal(x, y)),
            (2, (sq_re, sq_im)),
            (3, _mul_naive(sq_re, sq_im, x, y)),
            (-2, _reciprocal(sq_re, sq_im)),
        ]
        for value, (c_re, c_im) in reversed(cases):
            hit = (er == value) & (ei == 0)
            re, im = _where(hit, c_re, re), _where(hit, c_im, im)
    return _with_gradient_of(jax.lax.complex(re, im).reshape(out.shape), out)
