"""Sums and 2-norms added up in the order PyTorch's CPU kernels add them, in JAX.

XLA's reductions pick their own order (and may fuse a square into an FMA), so a sum of many
float32 / float64 values can come out an ulp away from PyTorch's. Where torchish promises the
same bits (optimizer steps), it adds as these kernels do:

* `sum` (ATen's `cascade_sum`, AVX2 kernels on x86 even where the CPU has AVX512; a single
  output's sum of 32768 or more values cut into one share per thread): a reduction
  over a contiguous last dim runs on vectors of `lanes` values; four vector accumulators take
  every fourth vector, each summed in a cascade of up to four levels (chunks of at least 16
  summed from zero, their sums carried up), then the leftover scalars are summed from zero and
  the lanes added to them one by one.
* `norm(p=2)` over the last dim (ATen's fast path): one vector accumulator, `acc += x * x`
  (no FMA), its lanes folded left, then the leftover elements: the compiler runs whole groups
  of four of them as `s += x * x` (squares made four at a time, added in order) and contracts
  the last few into `s = fma(x, x, s)`.
* `norm(p=2)` over another dim: one scalar running `s += x * x` per output, in index order.

Every function works on tracers; the orders depend on static shapes only. The norms square
before they add: XLA would contract `s + x * x` into an FMA (an optimization barrier does not
stop it once a short loop is unrolled), so they take `zero`, an int32 zero that XLA cannot see
through (the optimizers' `hp["_zero"]`), and xor the squares' bits with it.
"""
import platform

import jax
import jax.numpy as jnp

from .._functions import get_num_threads

_GRAIN = 32768    # ATen's GRAIN_SIZE: shorter reductions run on one thread


def lanes(dtype):
    """How many values of `dtype` one of the reduction kernels' vectors holds (256-bit AVX2 on
    x86; 128-bit NEON on ARM)."""
    width = 16 if platform.machine().lower() in ("arm64", "aarch64") else 32
    return width // jnp.dtype(dtype).itemsize


def fold(x, axis=0, init=None):
    """`init + x[0] + x[1] + ...` along `axis`, added strictly left to right."""
    x = jnp.moveaxis(x, axis, 0)
    start = jnp.zeros(x.shape[1:], x.dtype) if init is None else init
    if x.shape[0] == 0:
        return start
    total, _ = jax.lax.scan(lambda acc, v: (acc + v, None), start, x)
    return total


def _next_toward(v, err):
    """`v` moved one ulp toward the side `err` points to, where `v`'s last bit is even and
    `err` is not zero: rounding to odd, which keeps a later rounding from rounding twice."""
    itype = jnp.int32 if v.dtype == jnp.float32 else jnp.int64
    even = (jax.lax.bitcast_convert_type(v, itype) & 1) == 0
    away = jnp.nextafter(v, jnp.where(err > 0, jnp.inf, -jnp.inf).astype(v.dtype))
    return jnp.where((err != 0) & even & jnp.isfinite(v), away, v)


def _thread_ranges(n):
    """How ATen's `parallel_for(0, n, GRAIN_SIZE)` cuts one output's `n` inputs among threads:
    each share is reduced from zero on its own, the shares' results then added in order."""
    threads = get_num_threads()
    if n < _GRAIN or threads <= 1:
        return [(0, n)]
    tasks = min(threads, -(-n // _GRAIN))
    size = -(-n // tasks)
    return [(b, min(b + size, n)) for b in range(0, n, size)]


def _apart(x, zero):
    """`x`, which XLA can no longer fuse into a later addition (see the module docstring)."""
    if zero is None:
        return jax.lax.optimization_barrier(x)
    itype = jnp.int32 if x.dtype == jnp.float32 else jnp.int64
    bits = jax.lax.bitcast_convert_type(x, itype) ^ jnp.asarray(zero).astype(itype)
    return jax.lax.bitcast_convert_type(bits, x.dtype)


def _two_sum_err(a, b, s):
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _two_prod_err(a, b, p):
    # Veltkamp/Dekker splitting: every partial product below is exact, so an FMA contraction
    # of any of them changes nothing
    split = jnp.asarray(134217729.0, a.dtype)
    t = a * split
    ah = t - (t - a)
    al = a - ah
    t = b * split
    bh = t - (t - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma(a, b, c):
    """`a * b + c` rounded once (float32 or float64), as a hardware FMA computes it."""
    if a.dtype == jnp.float32:
        p = a.astype(jnp.float64) * b.astype(jnp.float64)    # exact
        c64 = c.astype(jnp.float64)
        s = p + c64
        return _next_toward(s, _two_sum_err(p, c64, s)).astype(jnp.float32)
    p = a * b
    e = _two_prod_err(a, b, p)
    s = p + c
    t = _two_sum_err(p, c, s)
    w = t + e
    w = _next_toward(w, _two_sum_err(t, e, w))
    exact = s + w
    return jnp.where(jnp.isfinite(exact), exact, p + c)


def _multi_row_sum(x):
    """ATen's `multi_row_sum` over axis 0 of `x` (the other axes summed independently)."""
    size = x.shape[0]
    power = max(4, (size - 1).bit_length() // 4) if size > 1 else 4
    step = 1 << power
    groups = size // step
    zero = jnp.zeros(x.shape[1:], x.dtype)
    acc = [zero] * 4
    if groups:
        sums = fold(x[:groups * step].reshape((groups, step) + x.shape[1:]), axis=1)
        for g in range(groups):
            i = (g + 1) * step
            acc[0] = sums[g]
            for j in range(1, 4):
                acc[j] = acc[j] + acc[j - 1]
                acc[j - 1] = zero
                if i & ((step - 1) << (j * power)):
                    break
    acc[0] = fold(x[groups * step:], init=acc[0])
    for j in range(1, 4):
        acc[0] = acc[0] + acc[j]
    return acc[0]


def _row_sum(x):
    """ATen's `row_sum` over axis 0: four interleaved accumulators, then the leftovers."""
    n = x.shape[0]
    full = n // 4
    partial = _multi_row_sum(x[:full * 4].reshape((full, 4) + x.shape[1:]))
    first = fold(x[full * 4:], init=partial[0])
    for k in range(1, 4):
        first = first + partial[k]
    return first


def cascade_sum(x):
    """PyTorch's CPU `x.sum(-1)` of a contiguous float32 / float64 `x`."""
    # a single output's long sum is shared among the threads (more outputs are shared instead)
    single = all(d == 1 for d in x.shape[:-1])
    ranges = _thread_ranges(x.shape[-1]) if single else [(0, x.shape[-1])]
    if len(ranges) == 1:
        return _cascade_sum(x)
    total = jnp.zeros(x.shape[:-1], x.dtype)
    for b, e in ranges:
        total = total + _cascade_sum(x[..., b:e])
    return total


def _cascade_sum(x):
    n, width = x.shape[-1], lanes(x.dtype)
    rows = jnp.moveaxis(x, -1, 0)
    if n < width:
        return _row_sum(rows)
    vecs = n // width
    acc = _row_sum(rows[:vecs * width].reshape((vecs, width) + rows.shape[1:]))
    total = fold(rows[vecs * width:])
    for k in range(width):
        total = total + acc[k]
    return total


def norm2_last(x, zero=None):
    """PyTorch's CPU `x.norm(2, -1)` of a contiguous float32 / float64 `x`."""
    n, width = x.shape[-1], lanes(x.dtype)
    rows = jnp.moveaxis(x, -1, 0)
    vecs = n // width
    main = rows[:vecs * width].reshape((vecs, width) + rows.shape[1:])
    squares = _apart(main * main, zero)
    acc = fold(squares)
    total = acc[0]
    for k in range(1, width):
        total = total + acc[k]
    grouped = vecs * width + (n - vecs * width) // 4 * 4
    if grouped > vecs * width:
        tail = rows[vecs * width:grouped]
        total = fold(_apart(tail * tail, zero), init=total)
    for k in range(grouped, n):
        total = fma(rows[k], rows[k], total)
    return jnp.sqrt(total)


def norm2_along(x, axis, zero=None):
    """PyTorch's CPU `x.norm(2, axis)` over a dim that is not the last (the squares added in
    index order, one running sum per output)."""
    rows = jnp.moveaxis(x, axis, 0)
    # (ATen shares the outputs among threads here: each output's sum stays in one piece)
    return jnp.sqrt(fold(_apart(rows * rows, zero)))
