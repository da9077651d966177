"""Tests of torchish._random_engine: PyTorch 2.13's CPU generator, bit for bit.

* Golden replays (no torch needed): tests/goldens/rng_goldens.json, written from real torch by
  tools/make_rng_goldens.py; every value is compared through its integer bit pattern.
* Arithmetic: the float32/float64 fma emulations against exact rationals; the libm wrappers
  against ``math``; the fast AVX2 normal kernels (NumPy and jitted XLA, every compiled chunk
  size and mode) against the reference emulation (a strided sweep of every possible input;
  TORCHISH_EXHAUSTIVE=1 sweeps all 2**24 of each); the XLA kernel's self-check.
* Differential tests against live torch when it is importable: random seeds, sizes, dtypes and
  call sequences; state exchange both ways; crafted states that make torch hand out chosen
  raw draws (so edge inputs reach the kernels).
"""
import base64
import hashlib
import json
import math
import os
from fractions import Fraction

import numpy as np
import pytest

from torchish import _random_mathfun as mf
from torchish import _random_normal_fast as fast
from torchish._random_engine import (DEFAULT_SEED, STATE_SIZE, MT19937Engine, _temper,
                                     cpu_capability, untemper)

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    BF16 = None

try:
    import torch
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="real torch (the oracle) not installed")
GOLDENS = os.path.join(os.path.dirname(__file__), "goldens", "rng_goldens.json")


# ------------------------------------------------------------------------------------- helpers

def bits(a):
    a = np.ascontiguousarray(np.asarray(a))
    if a.dtype.kind in "fc" or a.dtype == BF16:
        return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[a.dtype.itemsize])
    return a


def assert_bits_equal(got, want, what=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    gb, wb = bits(got).reshape(-1), bits(want).reshape(-1)
    bad = np.nonzero(gb != wb)[0]
    assert bad.size == 0, f"{what}: {bad.size} of {gb.size} differ, first at {bad[:5]}: " \
                          f"{got.reshape(-1)[bad[:3]]} vs {want.reshape(-1)[bad[:3]]}"


def _np_dt(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def apply_op(eng, op):
    """The op vocabulary shared with tools/make_rng_goldens.py."""
    name, args = op[0], list(op[1:])
    if name == "normal":
        return eng.normal(*args)
    if name == "normal_noncontig":
        (rows, cols), dt, mean, std = args
        return eng.normal(rows * cols, dt, mean, std, contiguous=False)
    if name == "uniform":
        return eng.uniform(*args)
    if name == "randint":
        low, high, size, dt = args
        return eng.randint(low, high, size, dt)
    if name == "random_":
        return eng.random_(*args)
    if name == "random_from_to":
        return eng.random_from_to(*args)
    if name == "randperm":
        return eng.randperm(*args)
    if name == "bernoulli_scalar":
        return eng.bernoulli_scalar(*args)
    if name == "bernoulli_tensor":
        p, pdt = args
        return eng.bernoulli_tensor(np.array(p, np.float64).astype(_np_dt(pdt)))
    if name in ("exponential", "geometric", "cauchy", "log_normal"):
        return getattr(eng, name)(*args)
    if name == "poisson":
        rates, dt = args
        return eng.poisson(np.array(rates, np.float64).astype(_np_dt(dt)))
    if name == "multinomial":
        probs, dt, n, rep = args
        return eng.multinomial(np.array(probs, np.float64).astype(_np_dt(dt)), n, rep)
    if name == "fork_jax_key":
        return np.array([eng.fork_jax_key()], np.uint64)
    raise ValueError(name)


def decode(rec):
    shape = tuple(rec["shape"])
    if "ints" in rec:
        return np.array(rec["ints"], dtype=rec["dtype"]).reshape(shape)
    raw = base64.b64decode(rec["b64"])
    dt = _np_dt(rec["dtype"])
    return np.frombuffer(raw, dtype=np.dtype(dt).newbyteorder("<")).astype(dt).reshape(shape)


def _load_goldens():
    with open(GOLDENS) as f:
        return json.load(f)


_GOLD = _load_goldens() if os.path.exists(GOLDENS) else {"meta": {}, "cases": []}


# ------------------------------------------------------------------------------ golden replays

@pytest.mark.parametrize("case", _GOLD["cases"], ids=lambda c: c["id"])
def test_golden(case):
    if cpu_capability() != "avx2" and any(
            op[0] == "normal" and op[2] != "float64" and op[1] >= 16 for op in case["ops"]):
        pytest.skip("float32 normals of 16+ follow PyTorch's AVX2 kernel only")
    eng = MT19937Engine(case["seed"])
    for i, (op, rec) in enumerate(zip(case["ops"], case["values"])):
        want = decode(rec)
        got = np.asarray(apply_op(eng, op))
        if want.dtype.kind in "iub":
            got = got.astype(want.dtype) if op[0] == "fork_jax_key" else got
        assert_bits_equal(got.reshape(want.shape), want, f"{case['id']} op {i} {op[:3]}")
    state = eng.get_state()
    assert hashlib.sha256(state.tobytes()).hexdigest() == case["state_sha256"], case["id"]
    if "state_b64" in case:
        assert state.tobytes() == base64.b64decode(case["state_b64"])


def test_goldens_present_and_small():
    assert len(_GOLD["cases"]) > 50
    assert os.path.getsize(GOLDENS) < 1 << 20


# --------------------------------------------------------------------------- seeding and state

def test_defaults_and_seeding():
    assert MT19937Engine().initial_seed() == DEFAULT_SEED == 67280421310721
    e = MT19937Engine(-1)
    assert e.initial_seed() == 2 ** 64 - 1
    assert MT19937Engine(-2 ** 63).initial_seed() == 2 ** 63
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError):
            MT19937Engine(bad)
    s = e.seed()
    assert e.initial_seed() == s and 0 <= s < 2 ** 64
    # seeds equal mod 2**32 give the same stream but a different initial_seed
    a, b = MT19937Engine(5), MT19937Engine(5 + 2 ** 32)
    assert_bits_equal(a.random(700), b.random(700))


def test_state_layout():
    e = MT19937Engine(3)
    e.normal(1)                                    # 4 draws, caches the second normal
    st = e.get_state()
    assert st.dtype == np.uint8 and st.size == STATE_SIZE
    assert st[:8].view(np.uint64)[0] == 3
    assert st[8:12].view(np.int32)[0] == 621 and st[12:16].view(np.int32)[0] == 1
    assert st[16:24].view(np.uint64)[0] == 4
    assert st[5040:5044].view(np.int32)[0] == 1
    assert st[5024:5032].view(np.float64)[0] != 0
    fresh = MT19937Engine(3).get_state()
    assert fresh[8:12].view(np.int32)[0] == 1 and fresh[16:24].view(np.uint64)[0] == 0
    key = fresh[24:24 + 624 * 8].view(np.uint64)
    assert key[0] == 3 and key[1] == (1812433253 * (3 ^ (3 >> 30)) + 1) % 2 ** 32


def test_state_roundtrip_and_clone():
    e = MT19937Engine(11)
    e.normal(5)
    st = e.get_state()
    want = e.clone().normal(40)
    f = MT19937Engine(0)
    f.set_state(st)
    assert_bits_equal(f.get_state(), st)
    assert_bits_equal(f.normal(40), want)
    assert_bits_equal(e.normal(40), want)


def test_set_state_errors():
    e = MT19937Engine(0)
    st = e.get_state()
    with pytest.raises(RuntimeError, match="size"):
        e.set_state(st[:-1])
    with pytest.raises(RuntimeError, match="ByteTensor"):
        e.set_state(st.astype(np.int16))
    bad = st.copy()
    bad[8:12] = np.array([0], np.int32).view(np.uint8)
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        e.set_state(bad)


def test_untemper():
    y = np.random.default_rng(0).integers(0, 2 ** 32, 10000, dtype=np.uint64).astype(np.uint32)
    assert_bits_equal(_temper(untemper(y)), y)


def test_crafted_state_hands_out_chosen_words():
    want = np.arange(1, 40, dtype=np.uint32) * 2654435761
    e = MT19937Engine(0)
    st = e.get_state()
    key = st[24:24 + 624 * 8].view(np.uint64)
    key[:39] = untemper(want)
    st[8:12] = np.array([40], np.int32).view(np.uint8)
    st[16:24] = np.zeros(1, np.uint64).view(np.uint8)
    e.set_state(st)
    assert_bits_equal(e.random(20), want[:20])
    after = e.get_state()
    assert after[8:12].view(np.int32)[0] == 20 and after[16:24].view(np.uint64)[0] == 20
    assert_bits_equal(e.random(19), want[20:])
    assert e.get_state()[8:12].view(np.int32)[0] == 1
    e.random(1)                                    # now it twists, like PyTorch
    assert e.get_state()[16:24].view(np.uint64)[0] == 1


def test_fork_jax_key_consumes_one_random64():
    a, b = MT19937Engine(9), MT19937Engine(9)
    k = a.fork_jax_key()
    r = b.random(2).astype(np.uint64)
    assert k == (int(r[0]) << 32) | int(r[1])
    assert_bits_equal(a.get_state(), b.get_state())


# ---------------------------------------------------------------------------------- arithmetic

def _exact_round(x, dtype):
    """Correct rounding of a Fraction to float32/float64 (ties to even) via nextafter."""
    f = dtype(float(x))                         # float() rounds correctly to double
    if dtype is np.float32:
        lo = np.nextafter(f, dtype(-np.inf), dtype=dtype)
        hi = np.nextafter(f, dtype(np.inf), dtype=dtype)
        cands = [lo, f, hi]
        best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                         int(np.array(c, dtype).view(np.uint32)) & 1))
        return best
    return f


def _hard_f32_cases(rng, n):
    # inputs whose float64 sum lands on a float32 midpoint (the double rounding hazard)
    a = rng.integers(1 << 23, 1 << 24, n).astype(np.float32)
    b = np.float32(2.0 ** -24) * (1 + 2 * rng.integers(0, 1 << 22, n)).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32) * np.float32(1e-30)
    return a, b, c


def test_fmaf_exact():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.standard_normal(3000).astype(np.float32)
    c = (rng.standard_normal(3000) * 10.0 ** rng.integers(-8, 3, 3000)).astype(np.float32)
    ha, hb, hc = _hard_f32_cases(rng, 500)
    a, b, c = np.concatenate([a, ha]), np.concatenate([b, hb]), np.concatenate([c, hc])
    got = mf.fmaf(a, b, c)
    for i in range(a.size):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        assert got[i] == _exact_round(exact, np.float32), (a[i], b[i], c[i])


def test_fma64_exact():
    rng = np.random.default_rng(2)
    a = rng.random(4000)
    b = rng.standard_normal(4000) * 10.0 ** rng.integers(-3, 4, 4000)
    c = rng.standard_normal(4000) * 10.0 ** rng.integers(-6, 4, 4000)
    c[:500] = -(a[:500] * b[:500])                 # near-total cancellation
    got = mf.fma(a, b, c)
    for i in range(a.size):
        exact = Fraction(a[i]) * Fraction(b[i]) + Fraction(c[i])
        assert got[i] == float(exact), (a[i], b[i], c[i])


@pytest.mark.parametrize("name", ["log", "log1p", "exp", "sin", "cos", "tan"])
def test_libm_matches_math(name):
    rng = np.random.default_rng(3)
    x = rng.random(20000)
    x = {"log": 1 - x, "log1p": -x, "exp": (x - 0.5) * 40, "tan": math.pi * (x - 0.5)}.get(
        name, x * 2 * math.pi)
    got = getattr(mf, "libm_" + name)(x)
    want = np.array([getattr(math, name)(v) for v in x])
    assert_bits_equal(got, want, name)
    for n in (1, 2, 3, 7):
        assert_bits_equal(getattr(mf, "libm_" + name)(x[:n]), want[:n])


def _kernel_domain(step):
    k = np.arange(0, 1 << 24, step, dtype=np.int64).astype(np.float32)
    u1 = (np.float32(2 ** 24) - k) * np.float32(2 ** -24)
    theta = (k * fast._C_THETA).astype(np.float32)
    return u1, theta


def test_fast_kernel_equals_reference_over_domain():
    """Fast kernel == reference == reference with exact fmaf, on (a sweep of) every input."""
    step = 1 if os.environ.get("TORCHISH_EXHAUSTIVE") else 61
    u1, theta = _kernel_domain(step)
    for lo in range(0, u1.size, 1 << 18):
        a, t = u1[lo:lo + (1 << 18)], theta[lo:lo + (1 << 18)]
        ref_log = mf.log256_ps(a)
        assert_bits_equal(ref_log, mf.log256_ps(a, exact_fma=True), "log fast fma")
        ws = fast._Workspace(a.size)
        out = np.empty(a.size, np.float32)
        fast._log_radius(ws, a.copy(), out)
        assert_bits_equal(out, np.sqrt(np.float32(-2) * ref_log), "radius")
        s, c = mf.sincos256_ps(t)
        s2, c2 = mf.sincos256_ps(t, exact_fma=True)
        assert_bits_equal(s, s2, "sin fast fma")
        assert_bits_equal(c, c2, "cos fast fma")
        so, co = np.empty_like(s), np.empty_like(c)
        fast._sincos(ws, t.copy(), so, co)
        assert_bits_equal(so, s, "sin kernel")
        assert_bits_equal(co, c, "cos kernel")


def _domain_blocks(step):
    """Raw draws whose 16-blocks sweep every log input (slots 0..7) and, independently, every
    angle input (slots 8..15); the unused high byte of each draw varies too."""
    k = np.arange(0, 1 << 24, step, dtype=np.uint32)
    k = np.concatenate([k, np.zeros((-k.size) % 8, np.uint32)])
    blocks = np.empty((k.size // 8, 2, 8), np.uint32)
    blocks[:, 0] = k.reshape(-1, 8)
    blocks[:, 1] = np.random.default_rng(8).permutation(k).reshape(-1, 8)
    raw = blocks.reshape(-1)
    raw |= (np.arange(raw.size, dtype=np.uint32) % 256) << 24
    return raw


def _xla_halves(fn, raw, mean, std, xla=None):
    halves = (xla or fast._XLA).run(fn, raw, mean, std)
    return np.stack([np.asarray(h) for h in halves], 1).reshape(-1)


@pytest.mark.parametrize("mode,mean,std", [("plain", 0.0, 1.0), ("pre", 0.0, 1.0),
                                           ("fma", 0.5, 2.0), ("fma", -0.0, 1.0)])
def test_xla_kernel_equals_reference_over_domain(mode, mean, std):
    """The compiled XLA kernel (each chunk size) == the reference on (a sweep of) every input."""
    step = 1 if os.environ.get("TORCHISH_EXHAUSTIVE") else 23
    raw = _domain_blocks(step)
    assert fast._xla_mode(mean, std) == mode or mode == "pre"
    for size in fast._XLA_SIZES:
        fn = fast._xla_fn(mode, size)
        assert fn is not None, f"XLA kernel {mode}/{size} failed its self-check"
        for lo in range(0, raw.size, size):
            r = raw[lo:lo + size]
            if r.size < size:
                r = np.concatenate([r, np.zeros(size - r.size, np.uint32)])
            u = (r & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2 ** -24)
            want = mf.normal16_avx2(u, mean, std, pre_fma=mode == "pre").ravel()
            assert_bits_equal(_xla_halves(fn, r, mean, std), want, f"{mode} {size} at {lo}")


def test_xla_self_check_rejects_a_wrong_kernel(monkeypatch):
    """If the backend did not contract a*b+c as the fast variant needs, the self-check must
    notice and fall back to the float64 variant. Simulated by rounding each product on its own:
    XLA drops optimization barriers, and LLVM narrows f32(f64(a) * f64(b)) back to a float32
    product and fuses it, but it cannot drop the ``+ c*0`` (not foldable for floats).
    """
    import jax
    import jax.numpy as jnp
    real = fast._xla_fma

    def uncontracted(a, b, c, contract):
        if contract:
            f64 = jnp.float64
            c = jnp.asarray(c)
            p = a.astype(f64) * b.astype(f64) + c.astype(f64) * 0.0
            return p.astype(jnp.float32) + c
        return real(a, b, c, False)
    rng = np.random.default_rng(9)
    a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    sim = np.asarray(jax.jit(lambda a, b, c: uncontracted(a, b, c, True))(a, b, c))
    assert_bits_equal(sim, a * b + c, "the simulation is unfused")
    monkeypatch.setattr(fast, "_xla_fma", uncontracted)
    x = fast._XlaNormal()
    size = fast._XLA_SIZES[0]
    assert x.fn("plain", size) is not None and x.contracted[("plain", size)] is False
    raw = _domain_blocks(997)[:size]
    u = (raw & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2 ** -24)
    assert_bits_equal(_xla_halves(x.fns[("plain", size)], raw, 0.0, 1.0, x),
                      mf.normal16_avx2(u, 0.0, 1.0).ravel())


def test_xla_modes_and_fallbacks():
    assert fast._xla_mode(0.0, 1.0) == "plain"
    assert fast._xla_mode(-0.0, 1.0) == "fma"
    assert fast._xla_mode(0.5, 0.02) == "fma"
    assert fast._xla_mode(0.0, 0.0) == "fma"
    # results could be subnormal (XLA's CPU runtime flushes them) or overflow: NumPy's fmaf
    for mean, std in ((0.0, 1e-40), (1e-42, 1.0), (0.0, 3e38), (float("nan"), 1.0)):
        assert fast._xla_mode(mean, std) == "pre", (mean, std)
    assert fast._xla_mode(0.0, 1.0000000001) == "plain"     # PyTorch's fmaf takes float(std)


@pytest.mark.parametrize("use_xla", [True, False])
def test_normal_blocks_match_reference_with_mean_std(use_xla, monkeypatch):
    monkeypatch.setattr(fast, "_XLA_ON", use_xla and fast._XLA_ON)
    rng = np.random.default_rng(4)
    raw = rng.integers(0, 2 ** 32, 16 * 3000, dtype=np.uint64).astype(np.uint32)
    raw[:16] = 0                                    # radius -0 and sin(0): signed zeros
    u = (raw & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2 ** -24)
    for mean, std in ((0.0, 1.0), (0.5, 2.0), (-0.0, 1.5), (-0.0, 1.0), (0.0, 0.0),
                      (-3.0, 1e-3)):
        pos = [0]

        def draw(k):
            pos[0] += k
            return raw[pos[0] - k:pos[0]].copy()
        got = fast.normal_f32_blocks(draw, 3000, mean, std)
        assert pos[0] == raw.size
        assert_bits_equal(got, mf.normal16_avx2(u, mean, std).ravel(), f"{mean},{std}")


def test_xla_normals_equal_numpy_kernel(monkeypatch):
    n = 16 * fast._CHUNK_BLOCKS * 6 + 7                # several chunks plus a tail
    for mean, std in ((0.0, 1.0), (0.25, 3.0), (-0.0, 1.0), (0.0, 1e-40)):
        a = MT19937Engine(31).normal(n, "float32", mean, std)      # XLA kernel
        monkeypatch.setattr(fast, "_XLA_ON", False)
        b = MT19937Engine(31).normal(n, "float32", mean, std)      # NumPy kernel
        monkeypatch.setattr(fast, "_XLA_ON", True)
        assert_bits_equal(a, b, f"XLA vs NumPy {mean},{std}")


def test_outputs_aligned_for_zero_copy():
    """Large float samples are 64-byte aligned, so jax.device_put aliases them (no copy)."""
    e = MT19937Engine(2)
    for arr in (e.normal(5000), e.normal((50, 100)), e.uniform(5000), e.normal(3000, "float64"),
                e.uniform(7, "float32", -1.0, 2.0)):
        assert arr.ctypes.data % 64 == 0 and arr.flags.c_contiguous


# ------------------------------------------------------------------------------- API behaviour

def test_shapes_dtypes_and_empty():
    e = MT19937Engine(0)
    assert e.normal((2, 3, 4)).shape == (2, 3, 4)
    assert e.uniform((5, 0), "float64").shape == (5, 0)
    assert e.normal(0).dtype == np.float32
    assert e.normal(20, "bfloat16").dtype == BF16
    assert e.uniform(3, "complex64").dtype == np.complex64
    assert e.randint(0, 5, (3, 2)).dtype == np.int64
    assert e.randperm(0).shape == (0,)
    before = e.get_state()
    e.normal(0), e.uniform(0), e.randint(0, 3, (0,)), e.randperm(1)
    assert_bits_equal(e.get_state(), before)       # empty outputs draw nothing


def test_errors():
    e = MT19937Engine(0)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        e.normal(3, std=-1.0)
    with pytest.raises(RuntimeError, match="from=2 > to=1"):
        e.uniform(3, low=2.0, high=1.0)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        e.randint(5, 5, (2,))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type."):
        e.randperm(3000, "float16")
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in"):
        e.bernoulli_scalar(3, 1.5)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
        e.multinomial(np.ones(3, np.float32), 4, False)


# ---------------------------------------------------------------------------------- live torch

def _tnp(t):
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).cpu().numpy().view(BF16)
    return t.cpu().numpy()


_DTS = ["float32", "float64", "float16", "bfloat16"]


@needs_torch
def test_live_random_seeds_sizes():
    rng = np.random.default_rng(123)
    for _ in range(30):
        seed = int(rng.integers(-2 ** 63, 2 ** 63))
        e = MT19937Engine(seed)
        torch.manual_seed(seed)
        for _ in range(6):
            n = int(rng.choice([int(rng.integers(0, 40)), int(rng.integers(0, 3000))]))
            dt = _DTS[int(rng.integers(0, 4))]
            kind = int(rng.integers(0, 5))
            if kind == 0:
                got, want = e.normal(n, dt), torch.randn(n, dtype=getattr(torch, dt))
            elif kind == 1:
                got, want = e.uniform(n, dt), torch.rand(n, dtype=getattr(torch, dt))
            elif kind == 2:
                m, s = float(rng.normal()), float(rng.random() * 3)
                got = e.normal(n, dt, m, s)
                want = torch.empty(n, dtype=getattr(torch, dt)).normal_(m, s)
            elif kind == 3:
                lo = float(rng.normal() * 5)
                hi = lo + float(rng.random() * 10)
                got = e.uniform(n, dt, lo, hi)
                want = torch.empty(n, dtype=getattr(torch, dt)).uniform_(lo, hi)
            else:
                lo = int(rng.integers(-1000, 1000))
                hi = lo + int(rng.choice([2, 1000, 2 ** 28, 2 ** 40]))
                got, want = e.randint(lo, hi, (n,)), torch.randint(lo, hi, (n,))
            assert_bits_equal(got, _tnp(want), f"seed {seed} kind {kind} n {n} {dt}")
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy(), "state")


@needs_torch
def test_live_small_sizes_every_dtype_interleaved():
    """Sizes 0..40 (scalar path, one block, tails), every float dtype, calls interleaved."""
    for seed in (0, 1, 2 ** 63 + 5):
        e = MT19937Engine(seed)
        torch.manual_seed(seed)
        for n in range(41):
            for dt in _DTS:
                tdt = getattr(torch, dt)
                assert_bits_equal(e.normal(n, dt), _tnp(torch.randn(n, dtype=tdt)), f"n {n} {dt}")
                assert_bits_equal(e.uniform(n, dt), _tnp(torch.rand(n, dtype=tdt)), f"u {n} {dt}")
            assert_bits_equal(e.normal(n, "float32", 0.5, 2.0),
                              torch.empty(n).normal_(0.5, 2.0).cpu().numpy(), f"normal_ {n}")
            assert_bits_equal(e.randint(0, 7, (n,)), torch.randint(0, 7, (n,)).cpu().numpy())
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy(), "state")


@needs_torch
def test_live_kernel_boundaries():
    """Sizes around the NumPy/XLA switch and the XLA chunk sizes, interleaved with other calls."""
    sizes = [4095, 4096, 4097, 4111, 16384, 16385, 65536 + 16, 262144 - 1, 262144,
             262144 + 17, 2 * 262144 + 65536 + 5]
    e = MT19937Engine(17)
    torch.manual_seed(17)
    for i, n in enumerate(sizes):
        dt = _DTS[i % 4]
        tdt = getattr(torch, dt)
        m, s = ((0.0, 1.0), (-0.0, 1.0), (1.5, 0.25), (0.0, 0.02))[i % 4]
        assert_bits_equal(e.normal(n, dt, m, s), _tnp(torch.empty(n, dtype=tdt).normal_(m, s)),
                          f"normal {n} {dt} {m} {s}")
        assert_bits_equal(e.uniform(n, dt, -m, s + 1), _tnp(torch.empty(n, dtype=tdt)
                                                            .uniform_(-m, s + 1)), f"u {n}")
        assert_bits_equal(e.normal(3), torch.randn(3).cpu().numpy())      # scalar path + its cache
    assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy())


@needs_torch
@pytest.mark.skipif(not os.environ.get("TORCHISH_RNG_10M"), reason="set TORCHISH_RNG_10M=1")
def test_live_10m():
    """The benchmark's size, several seeds (about 10 s)."""
    for seed in (0, 123, 2 ** 64 - 1):
        e = MT19937Engine(seed)
        torch.manual_seed(seed)
        n = 10_000_000
        assert_bits_equal(e.normal(n), torch.randn(n).cpu().numpy(), f"randn {seed}")
        assert_bits_equal(e.uniform(n), torch.rand(n).cpu().numpy(), f"rand {seed}")
        assert_bits_equal(e.normal(n, "float32", 0.1, 0.9),
                          torch.empty(n).normal_(0.1, 0.9).cpu().numpy(), f"normal_ {seed}")
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy())


@needs_torch
def test_live_large():
    for seed, n in ((3, 16 * 1024 * 5 + 9), (4, 200_000)):
        e = MT19937Engine(seed)
        torch.manual_seed(seed)
        assert_bits_equal(e.normal(n), torch.randn(n).cpu().numpy(), "randn")
        assert_bits_equal(e.uniform(n), torch.rand(n).cpu().numpy(), "rand")
        assert_bits_equal(e.normal(n // 3, "float64"), torch.randn(n // 3, dtype=torch.float64)
                          .cpu().numpy(), "randn f64")
        assert_bits_equal(e.normal(n, "bfloat16"), _tnp(torch.randn(n, dtype=torch.bfloat16)))
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy())


@needs_torch
def test_live_state_exchange_both_ways():
    torch.manual_seed(77)
    torch.randn(5)
    torch.rand(3)
    e = MT19937Engine(0)
    e.set_state(torch.get_rng_state().cpu().numpy())     # torch -> engine
    assert_bits_equal(e.normal(50), torch.randn(50).cpu().numpy())
    assert_bits_equal(e.normal(3, "float64"), torch.randn(3, dtype=torch.float64).cpu().numpy())
    e.normal(7)
    e.uniform(11)
    torch.set_rng_state(torch.from_numpy(e.get_state()))   # engine -> torch (with a cache)
    assert_bits_equal(e.normal(9, "float64"), torch.randn(9, dtype=torch.float64).cpu().numpy())
    assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy())


@needs_torch
def test_live_crafted_states():
    """Inconsistent left/next counters and chosen raw draws, fed to both."""
    rng = np.random.default_rng(5)
    for left, nxt in ((1, 0), (1, 300), (624, 1), (10, 0), (300, 200), (2, 622), (5, 100)):
        st = MT19937Engine(int(rng.integers(0, 2 ** 31))).get_state()
        st[8:12] = np.array([left], np.int32).view(np.uint8)
        st[16:24] = np.array([nxt], np.uint64).view(np.uint8)
        torch.set_rng_state(torch.from_numpy(st.copy()))
        e = MT19937Engine(0)
        e.set_state(st)
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy(), f"{left},{nxt}")
        assert_bits_equal(e.random_(700, "int32"), torch.empty(700, dtype=torch.int32).random_()
                          .cpu().numpy(), f"draws {left},{nxt}")
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy(), f"after {left},{nxt}")
    # edge uniforms through the normal kernels: k = 0, 1, 2**24 - 1 and neighbours
    edge = np.array([0, 1, 2, 0xFFFFFF, 0xFFFFFE, 0x800000, 0x7FFFFF, 6601320] * 76, np.uint32)
    st = MT19937Engine(0).get_state()
    st[24:24 + 608 * 8] = untemper(edge).astype(np.uint64).view(np.uint8)
    st[8:12] = np.array([609], np.int32).view(np.uint8)
    st[16:24] = np.zeros(1, np.uint64).view(np.uint8)
    for dt in _DTS:
        for m, s in ((0.0, 1.0), (-0.0, 2.0), (-0.0, 1.0), (1.5, 0.5)):
            torch.set_rng_state(torch.from_numpy(st.copy()))
            e = MT19937Engine(0)
            e.set_state(st)
            want = torch.empty(304 if dt == "float64" else 608, dtype=getattr(torch, dt))
            assert_bits_equal(e.normal(want.numel(), dt, m, s), _tnp(want.normal_(m, s)), dt)


@needs_torch
def test_live_other_distributions():
    rng = np.random.default_rng(6)
    for seed in rng.integers(0, 2 ** 62, 4).tolist():
        e = MT19937Engine(seed)
        torch.manual_seed(seed)
        for dt in _DTS:
            tdt = getattr(torch, dt)
            n = int(rng.integers(1, 300))
            assert_bits_equal(e.exponential(n, dt, 0.3), _tnp(torch.empty(n, dtype=tdt)
                                                              .exponential_(0.3)))
            assert_bits_equal(e.cauchy(n, dt, -1.0, 0.2), _tnp(torch.empty(n, dtype=tdt)
                                                               .cauchy_(-1.0, 0.2)))
            assert_bits_equal(e.log_normal(n, dt, 0.0, 0.5), _tnp(torch.empty(n, dtype=tdt)
                                                                  .log_normal_(0.0, 0.5)))
            assert_bits_equal(e.geometric(n, dt, 0.4), _tnp(torch.empty(n, dtype=tdt)
                                                            .geometric_(0.4)))
            strided = torch.empty(n, 2, dtype=tdt)[:, 0]      # non-contiguous: element path
            assert_bits_equal(e.normal(n, dt, 1.0, 2.0, contiguous=False),
                              _tnp(strided.normal_(1.0, 2.0).contiguous()))
        p = rng.random((7, 5)).astype(np.float32)
        assert_bits_equal(e.bernoulli_tensor(p), torch.bernoulli(torch.from_numpy(p)).cpu().numpy())
        rates = (rng.random(50) * 40).astype(np.float64)
        assert_bits_equal(e.poisson(rates), torch.poisson(torch.from_numpy(rates)).cpu().numpy())
        probs = rng.random((4, 30)).astype(np.float32)
        for k, rep in ((1, False), (7, False), (30, False), (9, True)):
            assert_bits_equal(e.multinomial(probs, k, rep),
                              torch.multinomial(torch.from_numpy(probs), k, rep).cpu().numpy())
        n = int(rng.integers(2, 5000))
        assert_bits_equal(e.randperm(n), torch.randperm(n).cpu().numpy())
        assert_bits_equal(e.get_state(), torch.get_rng_state().cpu().numpy())
