"""PyTorch's CPU softmax of a float16 / bfloat16 tensor along a dim that is not the last.

Its kernel walks the positions after the softmax dim in whole vectors of half values, computing in
float32 and rounding once; the positions left over (at the end of a row, or of one thread's share
of the work) run scalar code, which stores `exp(x - max)` in the half type and then divides that
stored value by the float32 sum. Which positions those are depends on how long a vector is (the
instruction set PyTorch picks for the CPU) and on PyTorch's thread count.
"""
import functools
import math
import os
import platform

import jax
import jax.numpy as jnp
import numpy as np

from .._functions import get_num_threads


@functools.cache
def vector_width():
    """How many half values one of PyTorch's CPU vectors holds (`Vectorized<BFloat16>::size()`):
    32 with AVX512, 8 on ARM (NEON), 16 otherwise (AVX2, or its 256-bit default)."""
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    machine = platform.machine().lower()
    if machine in ("arm64", "aarch64"):
        return 8
    if forced:
        return 32 if forced == "avx512" else 16
    if machine not in ("x86_64", "amd64"):
        return 16
    try:
        feats = np._core._multiarray_umath.__cpu_features__
    except AttributeError:  # NumPy < 2
        feats = np.core._multiarray_umath.__cpu_features__
    avx512 = all(feats.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ", "FMA3"))
    return 32 if avx512 else 16


@functools.lru_cache(maxsize=64)
def _scalar_positions(outer, inner, width, threads):
    """Which of the `outer * inner` positions PyTorch's kernel runs as scalar code: the range is
    cut into one chunk per thread; in each chunk, every run up to the end of a row (or of the
    chunk) takes whole vectors from its start, and what is left of it runs scalar."""
    n = outer * inner
    size = -(-n // threads) if threads > 1 and n > 1 else n
    pos = np.arange(n)
    chunk = pos // size * size
    row = pos // inner * inner
    start = np.maximum(chunk, row)
    stop = np.minimum(row + inner, np.minimum(chunk + size, n))
    return (pos - start >= (stop - start) // width * width).reshape(outer, inner)


def softmax_inner(x, axis, half):
    """Softmax of float32 `x` (the half input, widened) along `axis` < x.ndim - 1, before the
    caller's rounding to `half`: the scalar code divides `exp(x - max)` rounded to `half`."""
    shifted = jnp.exp(x - jax.lax.stop_gradient(jnp.max(x, axis, keepdims=True)))
    total = jnp.sum(shifted, axis, keepdims=True)
    outer, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:])
    scalar = _scalar_positions(outer, inner, vector_width(),
                                get_num_threads())
    if not scalar.any():
        return shifted / total
    stored = shifted.astype(half).astype(x.dtype)
    scalar = scalar.reshape(x.shape[:axis] + (1,) + x.shape[axis + 1:])
    return jnp.where(scalar, stored, shifted) / total


def logsumexp(x, axes, keepdim, half):
    """PyTorch's logsumexp of a half tensor (float32 `x`, the input widened), a chain of ATen ops
    in the half type: `(x - max).exp_()` (an infinite max taken as 0), summed in float32, then
    `log_()` and `add_(max)`, each rounded to `half` (the last by the caller)."""
    def rounded(v):
        return v.astype(half).astype(v.dtype)
    top = jax.lax.stop_gradient(jnp.max(x, axes, keepdims=True))
    top = jnp.where(jnp.isinf(top), 0.0, top)
    total = rounded(jnp.sum(rounded(jnp.exp(rounded(x - top))), axes, keepdims=keepdim))
    return rounded(jnp.log(total)) + (top if keepdim else jnp.squeeze(top, axes))


def logsumexp_grad(t, x, y, r, axes, keepdim, half):
    """PyTorch's `grad * (x - result).exp()`, each op rounded (the product by the transpose of
    `r(t) * ...`)."""
    if not keepdim:
        y = jnp.expand_dims(y, axes if axes is not None else tuple(range(x.ndim)))
    return jnp.sum(r(t) * r(jnp.exp(r(x - y))), axes, keepdims=keepdim)
