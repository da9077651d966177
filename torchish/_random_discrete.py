"""Discrete samplers of PyTorch's CPU generator: randperm, poisson, binomial, multinomial.

Helpers of ``_random_engine.MT19937Engine`` (which exposes them as methods); each consumes the
engine's raw stream in exactly PyTorch 2.13's order. ``randperm`` and ``poisson`` are inherently
sequential (swaps, rejection loops), so their random draws are made in bulk and only the
bookkeeping runs per element.
"""
import ctypes
import ctypes.util
import math

import numpy as np

_U64 = np.uint64


def _libm_lgamma():
    # PyTorch calls glibc's lgamma; CPython's math.lgamma is its own (different) code.
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = lib.lgamma
        fn.restype = ctypes.c_double
        fn.argtypes = [ctypes.c_double]
        return fn
    except (OSError, AttributeError):  # pragma: no cover - non-glibc platforms
        return math.lgamma


_lgamma = _libm_lgamma()


# ------------------------------------------------------------------------------------ randperm

_SMALL_N = 0xFFFFFFFF // 20        # below this PyTorch keeps the old random() % (n - i) shuffle
_FLOAT_LIMITS = {"float16": ((1 << 11) + 1, "2049", "Half"),
                 "float32": ((1 << 24) + 1, "2^24+1", "Float"),
                 "float64": ((1 << 53) + 1, "2^53+1", "Double")}


def _swap_loop(t):
    perm = list(range(len(t) + 1))
    for i, j in enumerate(t.tolist()):          # Fisher-Yates forward: swap r[i], r[t[i]]
        perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)


def _swap_vectorized(t):
    """The permutation left by ``swap(r[i], r[t[i]])`` for i = 0..n-2 (t[i] >= i), vectorised.

    Position i is final after step i, so r[i] is whatever sat at t[i] when step i began: the
    value the last earlier step aiming at t[i] carried there, else t[i] itself. And what a step
    k carries is what position k held when step k began, A(k): the value carried by the last
    earlier step aiming at k, else k. A is resolved by pointer jumping.
    """
    m = t.shape[0]
    n = m + 1
    k = np.arange(m, dtype=np.int64)
    order = np.argsort(t * n + k)                # groups steps by target, in step order
    ts = t[order]
    last = np.ones(m, bool)
    last[:-1] = ts[1:] != ts[:-1]
    # A(i) = A(last step k < i with t[k] == i): a self-swap (k == i) ends its group, so the
    # wanted step is the last of the group once self-swaps are dropped
    keep = ts != order
    tk, ok = ts[keep], order[keep]
    ends = np.ones(tk.shape[0], bool)
    ends[:-1] = tk[1:] != tk[:-1]
    ptr = np.arange(n, dtype=np.int64)
    ptr[tk[ends]] = ok[ends]
    while True:
        nxt = ptr[ptr]
        if np.array_equal(nxt, ptr):
            break
        ptr = nxt
    prev = np.full(m, -1, np.int64)              # previous step with the same target
    same = ~last[:-1]
    prev[order[1:][same]] = order[:-1][same]
    out = np.empty(n, np.int64)
    out[:m] = np.where(t == k, ptr[:m], np.where(prev >= 0, ptr[np.maximum(prev, 0)], t))
    out[m] = ptr[m]
    return out


def randperm(engine, n, name):
    from ._random_engine import cast_from_int64
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if name in _FLOAT_LIMITS and n > _FLOAT_LIMITS[name][0]:
        _, text, tname = _FLOAT_LIMITS[name]
        raise RuntimeError(f"n cannot be greater than {text} for {tname} type.")
    if n < 2:
        perm = np.arange(n, dtype=np.int64)
    elif n < _SMALL_N:
        t = engine._raw(n - 1).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)
        t += np.arange(n - 1, dtype=np.int64)
        perm = _swap_loop(t) if n < 512 else _swap_vectorized(t)
    else:
        # "inside-out" shuffle with random64() % (i + 1), used for huge n
        z = (engine.random64(n) % np.arange(1, n + 1, dtype=_U64)).tolist()
        lst = [0] * n
        for i, zi in enumerate(z):
            lst[i] = lst[zi]
            lst[zi] = i
        perm = np.array(lst, np.int64)
    return cast_from_int64(perm, name)


# ------------------------------------------------------------------------------------- poisson

class _UniformReader:
    """U53 uniforms read ahead from a clone; ``commit`` advances the engine by what was used."""

    def __init__(self, engine, chunk=256):
        self._engine = engine
        self._clone = engine.clone()
        self._buf = np.empty(0)
        self._pos = 0
        self._used = 0
        self._chunk = chunk

    def __call__(self):
        if self._pos == len(self._buf):
            self._buf = self._clone._u53(self._chunk).tolist()
            self._pos = 0
            self._chunk = min(self._chunk * 2, 1 << 16)
        v = self._buf[self._pos]
        self._pos += 1
        self._used += 1
        return v

    def commit(self):
        self._engine._raw(2 * self._used)


def _sample_poisson(lam, uniform):
    """One draw of PyTorch's ``sample_poisson`` (Hoermann's PTRS for lam >= 10)."""
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # Distributions.cpp is compiled without FMA contraction: plain double arithmetic here.
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            # log(v) for v == 0 is -inf in C; math.log raises, so guard it
            lv = math.log(v) if v > 0 else -math.inf
            if (lv + math.log(invalpha) - math.log(a / (us * us) + b)) <= (
                    -lam + k * loglam - _lgamma(float(k) + 1)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(engine, rates):
    from ._random_engine import cast_from_int64
    rates = np.asarray(rates)
    name = "bfloat16" if rates.dtype.name == "bfloat16" else rates.dtype.name
    flat = rates.astype(np.float64).ravel().tolist()
    reader = _UniformReader(engine)
    try:
        out = [_sample_poisson(lam, reader) for lam in flat]
    finally:
        reader.commit()
    return cast_from_int64(np.array(out, np.int64), name).reshape(rates.shape)


# ------------------------------------------------------------------------------------ binomial

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _stirling_tail(k):
    """log(k!) minus its Stirling approximation (PyTorch tabulates k <= 9: the same values)."""
    if k <= 9:
        return math.lgamma(k + 1) - (k + 0.5) * math.log(k + 1) + (k + 1) - _HALF_LOG_2PI
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count, prob, uniform, f):
    # geometric waiting times until they pass `count` (log1p in the tensor's precision `f`)
    logprob = float(f(np.log1p(-f(prob))))
    geom_sum, num = 0.0, 0
    while True:
        geom_sum += math.ceil(math.log(uniform()) / logprob)
        if geom_sum > count:
            return num
        num += 1


def _binomial_btrs(count, prob, uniform, f):
    # Hoermann's BTRS transformed rejection, as PyTorch writes it (double arithmetic)
    stddev = math.sqrt(float(f(f(count) * f(prob) * f(1 - f(prob)))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= upper:
            return k


def _sample_binomial(count, prob, uniform, f):
    """One draw of PyTorch's ``sample_binomial``: inversion when count * min(p, q) < 10, else
    BTRS, on the smaller of p and q."""
    if count <= 0 or prob <= 0:
        return 0
    if prob >= 1:
        return count
    if prob <= 0.5:
        if f(f(count) * f(prob)) >= 10:
            return _binomial_btrs(count, prob, uniform, f)
        return _binomial_inversion(count, prob, uniform, f)
    if prob > 0.5:
        q = float(f(1.0 - f(prob)))
        if f(f(count) * f(q)) >= 10:
            return count - _binomial_btrs(count, q, uniform, f)
        return count - _binomial_inversion(count, q, uniform, f)
    return math.nan


def binomial(engine, counts, probs):
    """``torch.binomial(counts, probs)`` (same shapes, float32/float64), element by element."""
    f = np.float32 if counts.dtype == np.float32 else np.float64
    c = counts.astype(np.float64).ravel().tolist()
    p = probs.astype(np.float64).ravel().tolist()
    reader = _UniformReader(engine)
    try:
        out = [_sample_binomial(a, b, reader, f) for a, b in zip(c, p)]
    finally:
        reader.commit()
    return np.array(out, counts.dtype).reshape(counts.shape)


# --------------------------------------------------------------------------------- multinomial

def multinomial(engine, probs, n_sample, replacement):
    from ._random_engine import _dtype_name
    probs = np.asarray(probs)
    name = _dtype_name("bfloat16" if probs.dtype.name == "bfloat16" else probs.dtype.name)
    if not (1 <= probs.ndim <= 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if name not in ("float32", "float64", "float16", "bfloat16"):
        from ._dtype import from_np
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{from_np(probs.dtype)._legacy}")
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not replacement and n_sample > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if n_cat > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = probs.reshape(-1, n_cat)
    out_shape = (n_sample,) if probs.ndim == 1 else (rows.shape[0], n_sample)
    if rows.size == 0 or _prod(out_shape) == 0:
        return np.empty(out_shape, np.int64)
    if not replacement or n_sample == 1:
        return _multinomial_exponential(engine, probs, rows, n_sample, name, out_shape)
    return _multinomial_cdf(engine, rows, n_sample, name, out_shape)


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _multinomial_exponential(engine, probs, rows, n_sample, name, out_shape):
    # Gumbel-max in exponential form: argmax / topk of p / q with q ~ Exp(1).
    as64 = rows.astype(np.float64)
    if not (np.all(as64 < np.inf) and np.all(as64 >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(as64.sum(axis=1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = engine.exponential(rows.shape, name, 1.0)
    r = rows / q
    if n_sample == 1:
        idx = np.argmax(r, axis=1)[:, None]
    else:
        # topk sorted descending; ties (only exact zeros in practice) keep index order
        idx = np.argsort(-r.astype(np.float64), axis=1, kind="stable")[:, :n_sample]
    return idx.astype(np.int64).reshape(out_shape)


def _multinomial_cdf(engine, rows, n_sample, name, out_shape):
    acc = np.float64 if name == "float64" else np.float32   # half/bfloat16 accumulate in float
    vals = rows.astype(acc)
    if not np.all(vals >= 0):   # NaN fails this first, as in the C++ loop
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "< 0)")
    if not np.all(np.isfinite(vals)):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "= infinity or NaN)")
    cum = np.cumsum(vals, axis=1, dtype=acc)              # sequential, like the C++ loop
    total = cum[:, -1:].copy()
    if np.any(total <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum = cum / total
    cum[:, -1] = 1
    u = engine._u53(rows.shape[0] * n_sample).reshape(rows.shape[0], n_sample)
    out = np.empty(u.shape, np.int64)
    cum64 = cum.astype(np.float64)
    for i in range(rows.shape[0]):
        out[i] = np.searchsorted(cum64[i], u[i], side="left")   # first cum >= u
    return out.reshape(out_shape)
