"""float16 / bfloat16 layer norm computed as PyTorch's CPU kernel computes it, in JAX.

The kernel (mixed-type path) works in float32: the mean and variance come from its
`RowwiseMoments` (ATen's moments_utils.h), a Welford update over vectors of 16 half values
(each converted to two float32 vectors of 8 lanes: the AVX2 build, which x86 CPUs with AVX512
run too), chunks of 16 vectors combined in a cascade (a binary counter of partial moments,
merged by `AddMomentsVec`, whose one FMA is explicit), then the scalar tail and the 8 lanes
merged one at a time (`AddMoments`, two contracted FMAs). The compiler contracts the tail's
`m2 += delta * (x - m1)` for float16 but not for bfloat16. Then rstd = 1 / sqrt(var + eps)
and y = fma(x * rstd + (-rstd * mean), gamma, beta) rounded once to the half type.

Measured against PyTorch 2.13 CPU (tests/test_half_layer_norm.py): mean, rstd and output bits
equal at every row length tried (7 to 10^6), NaNs included. The per-chunk Welford update runs
on all chunks at once and the cascade a level at a time, so the compiled size grows only with
log2 of the row (about a second to compile at any length). XLA must not fuse the separately
rounded products into FMAs: see `_mul`. Shapes are static; everything traces.
"""
import functools

import jax
import numpy as np
import jax.numpy as jnp
from jax import lax


_CHUNK = 16   # vectors per Welford chunk (ATen's kChunkSize)


def _half_lanes():
    return 16   # a 256-bit vector of 2-byte values (the AVX2 kernel, also run on AVX512 CPUs)


def fma(a, b, c):
    """`a * b + c` for float32, rounded once as a hardware FMA does: the product is exact in
    float64, their sum rounded to odd there (a two-sum error nudging an even result one ulp
    toward it) rounds to the float32 nearest the exact value. A lighter form of
    cpu_sum_order.fma (no nextafter)."""
    p = a.astype(jnp.float64) * jnp.asarray(b).astype(jnp.float64)
    c = jnp.asarray(c).astype(jnp.float64)
    s = p + c
    back = s - p
    err = (p - (s - back)) + (c - back)
    bits = lax.bitcast_convert_type(s, jnp.int64)
    step = jnp.where((err > 0) == (s > 0), 1, -1).astype(jnp.int64)
    bits = jnp.where((err != 0) & (bits & 1 == 0) & (jnp.abs(s) < jnp.inf), bits + step, bits)
    return lax.bitcast_convert_type(bits, jnp.float64).astype(jnp.float32)


def _mul(a, b):
    """`a * b` rounded on its own. LLVM narrows the float64 product back to a float32 one and
    would then contract it with a following add into an FMA (an optimization barrier does not
    survive XLA's pipeline); xor-ing its bits with `p != p` (0 unless p is NaN, which stays
    NaN) hides it from both."""
    p = (a.astype(jnp.float64) * jnp.asarray(b).astype(jnp.float64)).astype(jnp.float32)
    bits = lax.bitcast_convert_type(p, jnp.int32) ^ (p != p).astype(jnp.int32)
    return lax.bitcast_convert_type(bits, jnp.float32)


def _div(a, b):
    """`a / b` correctly rounded in float32: XLA may turn a division into a multiplication by
    a reciprocal (or 1 / sqrt into an approximate rsqrt); in float64 the quotient rounds to
    the same float32 as the kernel's division."""
    return (a.astype(jnp.float64) / jnp.asarray(b).astype(jnp.float64)).astype(jnp.float32)


def _merge_vec(k_add, m1_add, m2_add, k, m1, m2):
    """ATen's AddMomentsVec: partial moments (count `k_add`, int32) merged into (k, m1, m2).
    Written with its products apart (`m1 + c * delta` stays two roundings: the product is
    also an FMA operand, so the compiler does not contract it)."""
    n = k + k_add
    c = jnp.where(n == 0, jnp.float32(0),
                  _div(k_add.astype(jnp.float32), jnp.maximum(n, 1).astype(jnp.float32)))
    delta = m1_add - m1
    m2_sum = m2 + m2_add
    c_delta = _mul(c, delta)
    k_delta = _mul(delta, k.astype(jnp.float32))
    return n, m1 + c_delta, fma(k_delta, c_delta, m2_sum)


def _merge_scalar(k_add, m1_add, m2_add, k, m1, m2):
    """ATen's scalar AddMoments: the compiler contracts `m1 += c * delta` and
    `m2_add + t * m0` into FMAs."""
    n = k + k_add
    c = jnp.where(n == 0, jnp.float32(0),
                  _div(k_add.astype(jnp.float32), jnp.maximum(n, 1).astype(jnp.float32)))
    delta = m1_add - m1
    m1 = fma(jnp.broadcast_to(c, delta.shape), delta, m1)
    t = _mul(_mul(delta, delta), c)
    m2 = m2 + fma(t, jnp.broadcast_to(k.astype(jnp.float32), t.shape), m2_add)
    return n, m1, m2


def _ceil_log2(m):
    return 1 if m <= 2 else (m - 1).bit_length()


def _chunk_moments(x, n, L):
    """Welford moments of each chunk of `_CHUNK` vectors (all chunks and rows at once):
    (m1, m2) of shape (chunks, 2, rows, lanes), the two float halves of each half vector."""
    rows = x.shape[0]
    F = L // 2
    m = -(-n // _CHUNK)
    body = jnp.pad(x[:, :n * L], ((0, 0), (0, m * _CHUNK * L - n * L)))
    body = body.reshape(rows, m, _CHUNK, 2, F).transpose(2, 1, 3, 0, 4)
    counts = np.asarray([min(_CHUNK, n - i * _CHUNK) for i in range(m)])
    coef = jnp.asarray(np.float32(1.0) / np.arange(1, _CHUNK + 1, dtype=np.float32))

    def step(state, vj):
        m1, m2 = state
        v, j = vj
        d = v - m1
        n1 = fma(d, jnp.broadcast_to(coef[j], d.shape), m1)
        n2 = fma(d, v - n1, m2)
        live = (j < jnp.asarray(counts))[:, None, None, None]
        return (jnp.where(live, n1, m1), jnp.where(live, n2, m2)), None

    start = jnp.zeros((m, 2, rows, F), jnp.float32)
    (c1, c2), _ = lax.scan(step, (start, start), (body, jnp.arange(_CHUNK)))
    return c1, c2, counts


def _seq(items):
    """Partial moments merged one after another into the first (merging into an empty stack
    slot copies, so the first needs no merge)."""
    state = items[0]
    for item in items[1:]:
        state = _merge_vec(*item, *state)
    return state


def _take(item, sl):
    return tuple(v[sl] for v in item)


def _cascade(c1, c2, counts):
    """ATen's cascade over the chunks' moments: stack slot 0 takes each chunk's two float
    halves in turn, and every second chunk moves one slot up, where slot j (0 < j < depth - 1)
    merges pairs of what slot j - 1 passes up; slot depth - 1 keeps what it gets; what is left
    in each slot is then merged into slot 0, lowest slot first. Computed a level at a time,
    each level one merge over all its pairs: the compiled size grows with log2 of the row."""
    m, _, rows, F = c1.shape
    depth = _ceil_log2(m)
    k = jnp.asarray(np.repeat(counts, 2).reshape(m, 2).astype(np.int32))[:, :, None, None]
    halves = (k, c1, c2)   # (chunk, half, ...)
    if depth == 1:
        return _seq([_take(halves, (i, h)) for i in range(m) for h in range(2)])[1:]
    pairs = m // 2
    quads = tuple(v[:2 * pairs].reshape((pairs, 4) + v.shape[2:]) for v in halves)
    level = _seq([_take(quads, (slice(None), q)) for q in range(4)])
    empty = (jnp.int32(0), jnp.zeros((rows, F), jnp.float32), jnp.zeros((rows, F), jnp.float32))
    left = [_seq([_take(halves, (m - 1, 0)), _take(halves, (m - 1, 1))]) if m % 2 else empty]
    for j in range(1, depth):
        count = level[1].shape[0]
        if j == depth - 1:   # the top slot merges whatever reaches it (one or two)
            left.append(_seq([_take(level, i) for i in range(count)]))
            break
        left.append(_take(level, count - 1) if count % 2 else empty)
        pairs = count // 2
        level = _merge_vec(*_take(level, slice(1, 2 * pairs, 2)),
                           *_take(level, slice(0, 2 * pairs, 2)))
    top = left[0]
    for item in left[1:]:
        top = _merge_vec(*item, *top)
    return top[1:]


def moments(x, bf16=False):
    """(mean, biased variance) of each row of float32 `x` (rows, N), in the kernel's order for
    float16 or (`bf16`, a bool that may be traced) bfloat16 values."""
    rows, N = x.shape
    L = _half_lanes()
    F = L // 2
    n = N // L
    if n:
        lane1, lane2 = _cascade(*_chunk_moments(x, n, L))
    else:
        lane1 = lane2 = jnp.zeros((rows, F), jnp.float32)
    zero = jnp.zeros((rows,), jnp.float32)
    tail = N - n * L   # fewer than L values, added one at a time

    def scalar(state, v):
        k, m1, m2 = state
        d = v - m1
        k = k + 1
        m1 = m1 + _div(d, k.astype(jnp.float32))
        # the float16 build contracts `m2 += delta * (x - m1)`, the bfloat16 one does not
        m2 = jnp.where(bf16, m2 + _mul(d, v - m1), fma(d, v - m1, m2))
        return (k, m1, m2), None
    state, _ = lax.scan(scalar, (jnp.int32(0), zero, zero), x[:, n * L:].T) if tail else \
        ((jnp.int32(0), zero, zero), None)

    def lane(state, v):   # then the lanes, one at a time
        return _merge_scalar(jnp.int32(2 * n), v[0], v[1], *state), None
    state, _ = lax.scan(lane, state, (lane1.T, lane2.T))
    return state[1], _div(state[2], jnp.float32(N))


def layer_norm(x, weight, bias, eps, half="float16"):
    """Output (float32, to be rounded to the half type), mean and rstd (one per row) of `x`
    (the float32 values of a `half` tensor, "float16" or "bfloat16") over its last dim;
    weight/bias of that dim's size (half or float32) or None."""
    return _layer_norm(x, weight, bias, eps, jnp.bool_(half == "bfloat16"))


# (jitted for eager calls; the half type traced, so that both share one compile)
@functools.partial(jax.jit, static_argnums=3)
def _layer_norm(x, weight, bias, eps, bf16):
    return _emulated(x, weight, bias, eps, bf16)


def _plain(x, weight, bias, eps):
    """The same values in plain float32 arithmetic: what the derivatives are taken of (the
    emulation's bit manipulations have none)."""
    mean = jnp.mean(x, -1)
    rstd = lax.rsqrt(jnp.mean(jnp.square(x - mean[..., None]), -1) + jnp.float32(eps))
    y = (x - mean[..., None]) * rstd[..., None]
    y = y if weight is None else y * weight.astype(jnp.float32)
    y = y if bias is None else y + bias.astype(jnp.float32)
    return y, mean.reshape(-1), rstd.reshape(-1)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _emulated(x, weight, bias, eps, bf16):
    shape = x.shape
    rows = x.reshape(int(np.prod(shape[:-1])), shape[-1])   # (-1 fails for empty rows)
    mean, var = moments(rows, bf16)
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
    if bias is None:   # the kernel adds its zero, which makes a -0 +0 (XLA drops `+ 0`)
        y = jnp.where(y == 0, jnp.float32(0), y)
    return y.reshape(shape), mean, rstd


@_emulated.defjvp
def _emulated_jvp(eps, primals, tangents):
    # (nn_norm differentiates the output by its own rule; this serves higher orders, which
    # differentiate the statistics)
    x, weight, bias, bf16 = primals
    tx, tw, tb, _ = tangents
    out = _emulated(x, weight, bias, eps, bf16)
    _, t = jax.jvp(lambda x, w, b: _plain(x, w, b, eps), (x, weight, bias), (tx, tw, tb))
    return out, t


def normalize_affine(axes, eps, half):
    """nn_norm's `_normalize_affine` for a half input normalized over its trailing `axes`:
    (out, mean, rstd), the statistics kept as dims of size 1."""
    def forward(x, weight, bias):
        lead = x.shape[:axes[0]]
        n = int(np.prod(x.shape[axes[0]:]))
        out, mean, rstd = layer_norm(x.reshape(lead + (n,)), weight, bias, eps, half)
        kept = lead + (1,) * len(axes)
        return out.reshape(x.shape), mean.reshape(kept), rstd.reshape(kept)
    return forward


def rounded(y, dtype, n):
    """The float32 output (rows of `n` trailing values) rounded to the half `dtype` as the
    kernel writes it: a bfloat16 NaN comes out as 0xffff from its vector conversion and as
    0x7fc0 from the scalar one of the last n % 16 values (XLA keeps the NaN's sign)."""
    out = y.astype(dtype)
    return _kernel_nans(out, n) if dtype == jnp.bfloat16 else out


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _kernel_nans(out, n):
    # chosen among integers (XLA rewrites the bits of a NaN it selects), with the tangent
    # passed through (a bitcast has none)
    bits = lax.bitcast_convert_type(out, jnp.uint16)
    L = _half_lanes()
    column = jnp.arange(out.size, dtype=jnp.int32).reshape(out.shape) % max(n, 1)
    nan = jnp.where(column < n // L * L, jnp.uint16(0xFFFF), jnp.uint16(0x7FC0))
    return lax.bitcast_convert_type(jnp.where(jnp.isnan(out), nan, bits), jnp.bfloat16)


@_kernel_nans.defjvp
def _kernel_nans_jvp(n, primals, tangents):
    return _kernel_nans(primals[0], n), tangents[0]


def affine_tangents(x, mean, rstd, tw, tb, threads, half):
    """The weight/bias part of a half layer norm's output tangent, `xhat * tw + tb` over rows
    `x` (M, N) of float32 values, written so that JAX's transpose of it sums the gradients of
    weight and bias as PyTorch's backward kernel does: its rows split into `threads` chunks
    (at::parallel_for), each chunk adding its rows' `dy * (rstd * x - rstd * mean)` (or `dy`)
    into a buffer of the `half` type one row at a time (each row's sum rounded to it), the
    buffers then summed in float32, in thread order. (A rounding here is the identity to the
    tangent, which is already of the half type; the transpose applies each at its mirror
    place.) `mean` and `rstd` are the saved (rounded) statistics, one per row. None for a
    parameter without tangent."""
    M, N = x.shape
    groups = max(1, min(threads, M))
    chunk = -(-M // groups)
    groups = -(-M // chunk)
    pad = groups * chunk - M
    b = -_mul(rstd, mean)
    xhat = _mul(x, rstd[:, None]) + b[:, None]

    def by_chunk(v):   # (M, n) -> (chunk, groups, n): step k of every chunk at once
        v = jnp.pad(v, ((0, pad), (0, 0)))
        return v.reshape(groups, chunk, v.shape[1]).transpose(1, 0, 2)
    live = by_chunk(jnp.ones((M, 1), jnp.bool_))

    def accumulate(t, scale):
        # the tangent direction walks each chunk's rows last to first, so that the transpose
        # adds them first to last, rounding the buffer after each row
        s = jnp.broadcast_to(t.astype(jnp.float32), (groups, N))

        def step(s, row):
            s = s.astype(half).astype(jnp.float32)
            ok, factor = row
            return s, jnp.where(ok, s if factor is None else factor * s, jnp.float32(0))
        rows = (live, None if scale is None else scale)
        _, out = lax.scan(step, s, rows, reverse=True)
        return out.transpose(1, 0, 2).reshape(groups * chunk, N)[:M]
    out = None
    if tw is not None:
        out = accumulate(tw.reshape(N), by_chunk(xhat))
    if tb is not None:
        tbias = accumulate(tb.reshape(N), None)
        out = tbias if out is None else out + tbias
    return out
