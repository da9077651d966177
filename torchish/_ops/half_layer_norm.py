"""float16 / bfloat16 layer norm computed as PyTorch's CPU kernel computes it, in JAX.

The kernel (mixed-type path) works in float32: the mean and variance come from its
`RowwiseMoments`, a Welford update over vectors of 16 half values (each converted to two float32
vectors of 8 lanes, the x86 AVX2 build), chunks of 16 vectors combined in a cascade (a binary
counter of partial moments), then the scalar tail and the 8 lanes merged one at a time. The
compiler contracts the multiply-adds of the update and of the mean merge into FMAs, which
`fma` reproduces. Then rstd = 1 / sqrt(var + eps) and y = fma(x * rstd + (-rstd * mean), gamma,
beta) rounded once to the half type.

Measured against PyTorch 2.13 CPU (tests/test_half_layer_norm.py): every output bit equal for
rows up to ~1000; mean/rstd of about 1 row in 20 still an ulp off (a contraction not yet
identified), so longer rows show a few differing elements per 100k. nn_norm uses it for rows of
up to 4096 values (the chunk cascade is unrolled at trace time). Shapes are static: it traces.
"""
import jax
import numpy as np
import jax.numpy as jnp

from .cpu_sum_order import fma

_CHUNK = 16   # vectors per Welford chunk (ATen's kChunkSize)


def _half_lanes():
    return 16   # a 256-bit vector of 2-byte values


def _add_moments(m0_add, m1_add, m2_add, m0, m1, m2):
    """Merge partial moments (count m0_add) into (m0, m1, m2): ATen's AddMoments."""
    n = m0 + m0_add
    # (a constant: NumPy rounds the quotient once, as the kernel does)
    c = np.float32(0.0 if n == 0 else m0_add) / np.float32(max(n, 1))
    delta = m1_add - m1
    m1 = fma(jnp.broadcast_to(c, delta.shape), delta, m1)
    t = _mul(_mul(delta, delta), jnp.float32(c))
    # `m2_add + t * m0` contracted, its sum then added to m2
    m2 = m2 + fma(t, jnp.broadcast_to(jnp.float32(m0), t.shape), m2_add)
    return n, m1, m2


def _mul(a, b):
    """`a * b` rounded on its own (kept out of an FMA that XLA could otherwise form)."""
    return (a.astype(jnp.float64) * jnp.asarray(b).astype(jnp.float64)).astype(jnp.float32)


def _div(a, b):
    """`a / b` correctly rounded in float32: XLA may turn a division into a multiplication by
    a reciprocal (or 1 / sqrt into an approximate rsqrt); in float64 the quotient rounds to
    the same float32 as the kernel's division."""
    return (a.astype(jnp.float64) / b.astype(jnp.float64)).astype(jnp.float32)


def moments(x):
    """(mean, biased variance) of each row of float32 `x` (rows, N), in the kernel's order."""
    rows, N = x.shape
    L = _half_lanes()
    F = L // 2
    n = N // L
    m = -(-n // _CHUNK)
    depth = 1 if m <= 2 else (m - 1).bit_length()
    zero = jnp.zeros((rows, F), jnp.float32)
    stack = [(0, zero, zero) for _ in range(depth)]
    if n:
        body = x[:, :n * L]
        pad = m * _CHUNK * L - n * L
        body = jnp.pad(body, ((0, 0), (0, pad))).reshape(rows, m, _CHUNK, 2, F)
        counts = jnp.asarray([min(_CHUNK, n - i * _CHUNK) for i in range(m)])
        coef = jnp.asarray(np.float32(1.0) / np.arange(1, _CHUNK + 1, dtype=np.float32))

        def step(state, j):
            m1, m2 = state
            v = body[:, :, j]
            d = v - m1
            n1 = fma(d, jnp.broadcast_to(coef[j], d.shape), m1)
            n2 = fma(d, v - n1, m2)
            live = (j < counts)[None, :, None, None]
            return (jnp.where(live, n1, m1), jnp.where(live, n2, m2)), None

        start = jnp.zeros((rows, m, 2, F), jnp.float32)
        (c1, c2), _ = jax.lax.scan(step, (start, start), jnp.arange(_CHUNK))
        for i in range(m):
            m0 = min(_CHUNK, n - i * _CHUNK)
            s0 = stack[0]
            # the two float vectors of each half vector are merged one after the other
            for h in range(2):
                s0 = _add_moments(m0, c1[:, i, h], c2[:, i, h], *s0)
            stack[0] = s0
            mask, j = i + 1, 1
            while j < depth and mask & 1 == 0:
                stack[j] = _add_moments(*stack[j - 1], *stack[j])
                stack[j - 1] = (0, zero, zero)
                mask >>= 1
                j += 1
        for i in range(1, depth):
            stack[0] = _add_moments(*stack[i], *stack[0])
    lane1, lane2 = stack[0][1], stack[0][2]
    k, m1, m2 = 0, jnp.zeros((rows,), jnp.float32), jnp.zeros((rows,), jnp.float32)
    for i in range(n * L, N):
        v = x[:, i]
        d = v - m1
        k += 1
        m1 = m1 + _div(d, jnp.float32(k))
        m2 = fma(d, v - m1, m2)
    state = (k, m1, m2)
    for lane in range(F):
        state = _add_moments(2 * n, lane1[:, lane], lane2[:, lane], *state)
    return state[1], _div(state[2], jnp.float32(N))


def layer_norm(x, weight, bias, eps):
    """Output (float32, to be rounded to the half type), mean and rstd (one per row) of `x`
    (the float32 values of a half tensor) over its last dim; weight/bias of that dim's size
    (half or float32) or None."""
    shape = x.shape
    rows = x.reshape(-1, shape[-1])
    mean, var = moments(rows)
    root = jnp.sqrt((var + jnp.float32(eps)).astype(jnp.float64)).astype(jnp.float32)
    rstd = _div(jnp.ones_like(root), root)
    shift = -rstd * mean
    y = fma(rows, jnp.broadcast_to(rstd[:, None], rows.shape),
            jnp.broadcast_to(shift[:, None], rows.shape))
    g = jnp.ones(shape[-1:], jnp.float32) if weight is None else \
        weight.reshape(-1).astype(jnp.float32)
    b = jnp.zeros(shape[-1:], jnp.float32) if bias is None else \
        bias.reshape(-1).astype(jnp.float32)
    y = fma(y, jnp.broadcast_to(g, y.shape), jnp.broadcast_to(b, y.shape))
    return y.reshape(shape), mean, rstd


def normalize_affine(axes, eps):
    """nn_norm's `_normalize_affine` for a half input normalized over its trailing `axes`:
    (out, mean, rstd), the statistics kept as dims of size 1."""
    def forward(x, weight, bias):
        lead = x.shape[:axes[0]]
        n = int(np.prod(x.shape[axes[0]:]))
        out, mean, rstd = layer_norm(x.reshape(lead + (n,)), weight, bias, eps)
        kept = lead + (1,) * len(axes)
        return out.reshape(x.shape), mean.reshape(kept), rstd.reshape(kept)
    return forward
