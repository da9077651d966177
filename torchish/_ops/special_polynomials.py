"""The orthogonal polynomials of torch.special (Chebyshev T/U/V/W and their shifted forms,
Hermite H/He, Laguerre L, Legendre P) of a degree tensor `n`, by PyTorch's per-element rules:
n < 0 gives 0, a few closed forms at the ends of the domain and for large n inside it, else
the three-term recurrence. `n` is truncated to an integer; none of them is differentiable."""
import jax
import jax.numpy as jnp

from .pointwise import legacy_name
from .registry import Promote, op

P = Promote


def _check(name, x):
    if x.dtype in (jnp.float16, jnp.bfloat16) or jnp.iscomplexobj(x):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{legacy_name(x)}'")


def _recurrence(x, n, q0, q1, step):
    """q_n of the recurrence q_j = step(j, q_{j-1}, q_{j-2}) from q0 (n = 0) and q1 (n = 1),
    each element iterating up to its own n (the loop runs to the largest)."""
    top = jnp.max(n) if n.size else jnp.zeros((), n.dtype)

    def cond(c):
        return c[0] <= top

    def body(c):
        j, p, q = c
        live = j <= n
        r = step(j.astype(x.dtype), q, p)
        return j + 1, jnp.where(live, q, p), jnp.where(live, r, q)
    _, _, q = jax.lax.while_loop(cond, body, (jnp.asarray(2, n.dtype), q0, q1))
    return jnp.where(n == 0, q0, q)


def _declare(name, fn):
    def impl(input, n):
        _check(f"{name}", input)
        x, nf = jnp.broadcast_arrays(input, n)
        k = nf.astype(jnp.int64)   # PyTorch casts the degree to an integer (truncating)
        out = fn(x, k, k.astype(x.dtype))
        return jnp.where(k < 0, jnp.zeros_like(x), out)
    impl.__name__ = impl.__qualname__ = f"_special_{name}"
    impl.__doc__ = f"torch.special.{name}(input, n)."
    return op(f"special_{name}", promote=P.INT_TO_FLOAT, differentiable=False, function=False,
              method=False, tensors=("input", "n"), scalar_operands=True)(impl)


def _odd(k):
    return k % 2 == 1


def _cheb_t(x, k, n, big_n=None):
    one = jnp.ones_like(x)
    rec = _recurrence(x, k, one, x, lambda j, q, p: (x + x) * q - p)
    rec = jnp.where((k > (big_n or 6)) & (jnp.abs(x) < 1), jnp.cos(n * jnp.arccos(x)), rec)
    end = jnp.where((x > 0) | ~_odd(k), one, -one)
    return jnp.where(jnp.abs(x) == 1, end, rec)


def _cheb_u(x, k, n, big_n=None):
    one = jnp.ones_like(x)
    rec = _recurrence(x, k, one, x + x, lambda j, q, p: (x + x) * q - p)
    t = jnp.arccos(x)
    s = jnp.sin(t)
    large = jnp.where(s != 0, jnp.sin((n + 1) * t) / jnp.where(s != 0, s, 1),
                    (n + 1) * jnp.cos((n + 1) * t) / x)
    rec = jnp.where((k > (big_n or 8)) & (jnp.abs(x) < 1), large, rec)
    end = jnp.where((x > 0) | ~_odd(k), n + 1, -(n + 1))
    return jnp.where(jnp.abs(x) == 1, end, rec)


def _cheb_v(x, k, n, big_n=None):
    one = jnp.ones_like(x)
    rec = _recurrence(x, k, one, x + x - 1, lambda j, q, p: (x + x) * q - p)
    t = jnp.arccos(x)
    odd_end = jnp.where(_odd(k), -(n + n + 1), n + n + 1)
    c = jnp.cos(t / 2)
    large = jnp.where(jnp.sin(t / 2) != 1, jnp.cos((n + 0.5) * t) / jnp.where(c != 0, c, 1),
                    odd_end)
    rec = jnp.where((k > (big_n or 8)) & (jnp.abs(x) < 1), large, rec)
    end = jnp.where(x > 0, one, odd_end)
    return jnp.where(jnp.abs(x) == 1, end, rec)


def _cheb_w(x, k, n, big_n=None):
    one = jnp.ones_like(x)
    rec = _recurrence(x, k, one, x + x + 1, lambda j, q, p: (x + x) * q - p)
    t = jnp.arccos(x)
    sign = jnp.where(_odd(k), -one, one)
    s = jnp.sin(t / 2)
    large = jnp.where(jnp.cos(t / 2) != 1, jnp.sin((n + 0.5) * t) / jnp.where(s != 0, s, 1),
                    jnp.where(x > 0, n + n + 1, sign))
    rec = jnp.where((k > (big_n or 8)) & (jnp.abs(x) < 1), large, rec)
    end = jnp.where(x > 0, n + n + 1, sign)
    return jnp.where(jnp.abs(x) == 1, end, rec)


def _shifted(fn, at_one, at_zero):
    # P*(x) = P(2x - 1), with PyTorch's exact values at x = 1 and x = 0
    def g(x, k, n):
        out = fn(x + x - 1, k, n, 6)   # the closed form from n > 6 on, for all four
        out = jnp.where(x == 1, at_one(x, k, n), out)
        return jnp.where(x == 0, at_zero(x, k, n), out)
    return g


def _sign_k(k, v):
    return jnp.where(_odd(k), -v, v)


def _hermite_h(x, k, n):
    return _recurrence(x, k, jnp.ones_like(x), x + x,
                       lambda j, q, p: (x + x) * q - (j + j - 2) * p)


def _hermite_he(x, k, n):
    return _recurrence(x, k, jnp.ones_like(x), x, lambda j, q, p: x * q - (j - 1) * p)


def _laguerre_l(x, k, n):
    rec = _recurrence(x, k, jnp.ones_like(x), 1 - x,
                      lambda j, q, p: ((j - 1 + j - 1 + (1 - x)) * q - (j - 1) * p) / j)
    return jnp.where(x == 0, jnp.ones_like(x), rec)


def _legendre_p(x, k, n):
    one = jnp.ones_like(x)
    rec = _recurrence(x, k, one, x,
                      lambda j, q, p: ((j - 1 + j - 1 + 1) * x * q - (j - 1) * p) / j)
    end = jnp.where((x > 0) | (k == 0) | ~_odd(k), one, -one)
    return jnp.where(jnp.abs(x) == 1, end, rec)


_ONE = (lambda x, k, n: jnp.ones_like(x))
FUNCTIONS = {
    "chebyshev_polynomial_t": _cheb_t,
    "chebyshev_polynomial_u": _cheb_u,
    "chebyshev_polynomial_v": _cheb_v,
    "chebyshev_polynomial_w": _cheb_w,
    "shifted_chebyshev_polynomial_t": _shifted(
        _cheb_t, _ONE, lambda x, k, n: _sign_k(k, jnp.ones_like(x))),
    "shifted_chebyshev_polynomial_u": _shifted(
        _cheb_u, lambda x, k, n: n + 1, lambda x, k, n: _sign_k(k, n + 1)),
    "shifted_chebyshev_polynomial_v": _shifted(
        _cheb_v, _ONE, lambda x, k, n: _sign_k(k, n + n + 1)),
    "shifted_chebyshev_polynomial_w": _shifted(
        _cheb_w, lambda x, k, n: n + n + 1, lambda x, k, n: _sign_k(k, jnp.ones_like(x))),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre_l,
    "legendre_polynomial_p": _legendre_p,
}
for _name, _fn in FUNCTIONS.items():
    _declare(_name, _fn)
