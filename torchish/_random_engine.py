"""PyTorch 2.13's CPU random generator, bit for bit, as a NumPy engine on the host.

``MT19937Engine`` holds exactly the state of ``at::CPUGeneratorImpl`` (the MT19937 words, its
``left``/``next`` counters, the initial seed and the cached Box-Muller normal) and turns raw 32-bit
draws into values exactly as PyTorch's CPU kernels do (``DistributionsHelper.h``,
``TransformationHelper.h``, ``cpu/DistributionTemplates.h``). One engine backs one
``torchish.Generator``; every sampling method takes a count or a shape and returns a NumPy array
in C (row-major) order, which is the order PyTorch's serial kernels write a contiguous tensor.
Large float samples come back 64-byte aligned, so ``jax.device_put`` can alias them (no copy).

Raw draws come from NumPy's C ``MT19937`` bit generator: PyTorch's MT19937 is the textbook one,
so NumPy's ``key`` is our state array and its ``pos`` is PyTorch's ``next`` (with ``left ==
625 - next``); ``random_raw`` / full-range ``Generator.integers`` then yield the same tempered
words at C speed. States whose counters break that relation (``left == 1`` with any ``next``,
or other hand-made ones) are kept as "words still to hand out" until the next twist.

API for ``torchish.Generator`` (sizes are an int or a shape; dtypes are torch names):
``manual_seed / initial_seed / seed / get_state / set_state / clone``; raw ``random(n)``,
``random64(n)``, ``fork_jax_key()``; ``uniform``, ``normal``, ``log_normal``, ``exponential``,
``geometric``, ``cauchy``; ``random_``, ``random_from_to``, ``randint``, ``randperm``;
``bernoulli_scalar``, ``bernoulli_tensor``, ``poisson``, ``multinomial``. Tensor-parameter
normals compose as PyTorch does: ``normal(mean_t, std)`` = ``normal(.., 0, std) + mean_t``;
``normal(mean, std_t)`` and ``normal(mean_t, std_t)`` = ``normal(.., 0, 1) * std_t + mean_t``.

Known limits (see also the docstrings of ``_random_mathfun`` and ``_random_normal_fast``):
* float32 normals of 16+ elements follow PyTorch's AVX2 kernel (x86 with AVX2+FMA, which
  includes AVX512 machines: PyTorch does not dispatch ``normal_`` to AVX512). Elsewhere PyTorch
  calls glibc ``logf``/``sinf``/``cosf``; that path is implemented but unverified.
* ``bernoulli_(p: float)`` follows PyTorch's default kernel. PyTorch builds with MKL use Intel's
  VSL stream instead on Intel CPUs (never on AMD); that stream is not reproduced.
"""
import math
import os
import platform
import warnings

import numpy as np

from . import _random_mathfun as _mf
from ._random_normal_fast import normal_f32_blocks
from . import _random_discrete as _disc
from . import _random_gamma as _gamma

try:
    import ml_dtypes as _ml_dtypes
    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes ships with jax
    _BF16 = None

__all__ = ["MT19937Engine", "DEFAULT_SEED", "STATE_SIZE", "cpu_capability", "untemper"]

DEFAULT_SEED = 67280421310721          # seed of a fresh torch.Generator()
STATE_SIZE = 5056                       # sizeof(CPUGeneratorImplState)
_N = 624
_U64 = np.uint64
_F32 = np.float32
_F64 = np.float64
_TWO_M24 = _F32(2.0 ** -24)
_TWO_M53 = 2.0 ** -53
_U_CHUNK = 1 << 16                      # uniforms converted per pass (fits the L2 cache)

# Byte layout of CPUGeneratorImplState (legacy THGenerator pod + float normal cache).
_STATE_DTYPE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y",
              "normal_rho", "normal_is_valid", "next_float_normal", "float_normal_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": STATE_SIZE,
})


def cpu_capability():
    """Which PyTorch normal kernel this CPU would run: 'avx2' or 'default'."""
    forced = os.environ.get("TORCHISH_RNG_CAPABILITY")
    if forced in ("avx2", "default"):
        return forced
    if platform.machine().lower() not in ("x86_64", "amd64", "x86", "i686"):
        return "default"
    try:
        feats = np._core._multiarray_umath.__cpu_features__
    except AttributeError:  # NumPy < 2
        feats = np.core._multiarray_umath.__cpu_features__
    return "avx2" if feats.get("AVX2") and feats.get("FMA3") else "default"


# -------------------------------------------------------------------------------------- dtypes

_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64",
    "int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128",
}
_FLOATS = ("float32", "float64", "float16", "bfloat16")
_INTS = ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool")


def _dtype_name(dtype):
    name = str(dtype)
    if name.startswith("torch."):
        name = name[6:]
    return _ALIASES.get(name, name)


def _np_dtype(name):
    if name == "bfloat16":
        return _BF16
    return np.dtype(name)


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(s) for s in size)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def cast_from_float(values, name):
    """float32 -> dtype as PyTorch's ``static_cast<scalar_t>(float)``."""
    return np.asarray(values, _F32).astype(_np_dtype(name))


def cast_from_double(values, name):
    """float64 -> dtype as PyTorch's ``static_cast<scalar_t>(double)``.

    c10::Half / c10::BFloat16 only construct from float, so double goes through float first
    (two roundings), unlike NumPy's direct float64 -> float16.
    """
    values = np.asarray(values, _F64)
    if name in ("float16", "bfloat16"):
        return values.astype(_F32).astype(_np_dtype(name))
    if name == "bool":
        return values != 0
    if name in _INTS:
        # C++ double->integer truncates; narrow types go through int64 like x86 does
        return values.astype(np.int64).astype(_np_dtype(name))
    return values.astype(_np_dtype(name))


def cast_from_int64(values, name):
    """int64 -> dtype as ``static_cast<scalar_t>(int64_t)`` (Half/BFloat16 via float)."""
    values = np.asarray(values, np.int64)
    if name in ("float16", "bfloat16"):
        return values.astype(_F32).astype(_np_dtype(name))
    if name == "bool":
        return values != 0
    return values.astype(_np_dtype(name))


def _temper(y):
    """MT19937 output tempering of state words (uint32 in, uint32 out)."""
    y = np.array(y, np.uint32)
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y


def untemper(y):
    """Inverse of the MT19937 tempering: the state words whose outputs are ``y`` (uint32)."""
    y = np.array(y, np.uint32)
    y ^= y >> np.uint32(18)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    x = y.copy()
    for _ in range(4):                      # 7-bit shifts: four rounds recover 32 bits
        x = y ^ ((x << np.uint32(7)) & np.uint32(0x9D2C5680))
    x ^= x >> np.uint32(11)
    x ^= x >> np.uint32(22)
    return x


def _draw32_raw(gen, n):
    return gen.bit_generator.random_raw(n).astype(np.uint32)


def _draw32_integers(gen, n):
    # Generator.integers over the full uint32 range is one next_uint32 per value (no
    # rejection): the same stream as random_raw, written straight as uint32 (faster).
    if n < 1024:
        return gen.bit_generator.random_raw(n).astype(np.uint32)
    return gen.integers(0, 1 << 32, size=n, dtype=np.uint32)


def _pick_draw32():
    a, b = np.random.MT19937(0), np.random.MT19937(0)
    a._legacy_seeding(20240601)
    b._legacy_seeding(20240601)
    try:
        got = _draw32_integers(np.random.Generator(b), 1500)
        same = np.array_equal(_draw32_raw(np.random.Generator(a), 1500), got)
        same = same and a.state["state"]["pos"] == b.state["state"]["pos"]
    except Exception:  # pragma: no cover - defensive
        same = False
    return _draw32_integers if same else _draw32_raw


_draw32 = _pick_draw32()


def _init_genrand(bg, seed32):
    """PyTorch's (and the reference) MT19937 seeding, ``init_genrand(seed & 0xffffffff)``."""
    try:
        bg._legacy_seeding(seed32)          # NumPy's C implementation of init_genrand
        return
    except AttributeError:  # pragma: no cover - private NumPy API gone
        pass
    key = [seed32]
    for j in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    bg.state = {"bit_generator": "MT19937",
                "state": {"key": np.array(key, np.uint32), "pos": _N}}


class MT19937Engine:
    """State and samplers of one PyTorch CPU generator (``at::CPUGeneratorImpl``).

    Every sampler consumes the raw stream in exactly PyTorch's order, so interleaving calls
    (``randn(3); rand(5); randint(...)``) reproduces PyTorch's values and final state.
    """

    def __init__(self, seed=DEFAULT_SEED, capability=None):
        self._bg = np.random.MT19937(0)
        self._gen = np.random.Generator(self._bg)
        self.capability = capability or cpu_capability()
        self.manual_seed(seed)

    # ------------------------------------------------------------------ seeding and state

    def manual_seed(self, seed):
        """Seed like ``torch.manual_seed``: ``seed mod 2**64``; clears the normal caches."""
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        seed &= (1 << 64) - 1
        self._seed = seed
        _init_genrand(self._bg, seed & 0xFFFFFFFF)       # pos = 624: twist before next draw
        self._pend = (None, 0, 0)     # PyTorch: left = 1, next = 0 (twist before next draw)
        self._normal_double = None
        self._normal_float = None
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Reseed from 64 OS random bits (``torch.seed()``); returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def clone(self):
        other = MT19937Engine.__new__(MT19937Engine)
        other.capability = self.capability
        other._bg = np.random.MT19937(0)
        other._bg.state = self._bg.state
        other._gen = np.random.Generator(other._bg)
        other._seed = self._seed
        other._pend = self._pend
        other._normal_double = self._normal_double
        other._normal_float = self._normal_float
        return other

    def get_state(self):
        """The 5056-byte ``torch.get_rng_state()`` layout as a uint8 array."""
        st = self._bg.state["state"]
        rec = np.zeros((), _STATE_DTYPE)
        if self._pend is None:
            left, nxt = _N + 1 - int(st["pos"]), int(st["pos"])
        else:
            _, start, end = self._pend
            left, nxt = end - start + 1, start
        rec["seed"] = self._seed
        rec["left"] = left
        rec["seeded"] = 1
        rec["next"] = nxt
        rec["state"] = st["key"].astype(_U64)
        if self._normal_double is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self._normal_double
        if self._normal_float is not None:
            rec["float_normal_valid"] = 1
            rec["next_float_normal"] = self._normal_float
        return np.frombuffer(rec.tobytes(), np.uint8).copy()

    def set_state(self, state):
        """Load a ``torch.get_rng_state()`` byte array (uint8, 5056 bytes)."""
        arr = np.asarray(state)
        if arr.dtype != np.uint8:
            raise RuntimeError("RNG state must be a torch.ByteTensor")
        if arr.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input "
                f"RNG state size to be {arr.size}")
        rec = np.frombuffer(np.ascontiguousarray(arr).tobytes(), _STATE_DTYPE)[0]
        left, nxt, seeded = int(rec["left"]), int(rec["next"]) & 0xFFFFFFFF, int(rec["seeded"])
        if not (seeded != 0 and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        key = (rec["state"] & _U64(0xFFFFFFFF)).astype(np.uint32)   # u64 words truncate
        consistent = left > 1 and left + nxt == _N + 1
        if not consistent and nxt + left - 1 > _N:
            raise NotImplementedError(
                "this mt19937 state makes PyTorch read past its state array")
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": key, "pos": nxt if consistent else _N}}
        # left == 1: twist before the next draw, like NumPy's pos == 624 (next is only
        # reported back). Other inconsistent counters hand out key[next:next+left-1] first.
        self._pend = None if consistent else (key, nxt, nxt + left - 1)
        self._seed = int(rec["seed"])
        self._normal_double = float(rec["normal_y"]) if int(rec["normal_is_valid"]) else None
        self._normal_float = (_F32(rec["next_float_normal"])
                              if int(rec["float_normal_valid"]) else None)

    # ------------------------------------------------------------------ raw draws

    def _raw(self, n):
        """``n`` raw 32-bit draws (``random()``) as uint32, in stream order."""
        if n <= 0:
            return np.empty(0, np.uint32)
        if self._pend is None:
            return _draw32(self._gen, n)
        key, start, end = self._pend
        take = min(n, end - start)
        head = _temper(key[start:start + take]) if take else np.empty(0, np.uint32)
        if take == n:
            self._pend = (key, start + take, end)
            return head
        self._pend = None           # NumPy sits at pos 624: it twists next, as PyTorch does
        return np.concatenate([head, _draw32(self._gen, n - take)])

    def random(self, n):
        """``n`` values of ``CPUGeneratorImpl::random()`` as uint32."""
        return self._raw(int(n))

    def random64(self, n):
        """``n`` values of ``random64()`` (first draw in the high half) as uint64."""
        r = self._raw(2 * int(n))
        hi = r[0::2].astype(_U64)
        hi <<= _U64(32)
        hi |= r[1::2]
        return hi

    def fork_jax_key(self):
        """A 64-bit int for seeding a JAX PRNG key; consumes exactly one ``random64()``."""
        return int(self.random64(1)[0])

    def _u24(self, n, scale=None, shift=None):
        """``n`` float32 uniforms ``(r & 0xFFFFFF) * 2**-24`` (one draw each), or with
        ``scale``/``shift`` ``fmaf(U, scale, shift)``; 64-byte aligned.

        Drawn and converted in cache-sized chunks: one pass over the output instead of four.
        """
        out = _mf.aligned_empty(n, _F32)
        for lo in range(0, n, _U_CHUNK):
            r = self._raw(min(_U_CHUNK, n - lo))
            r &= np.uint32(0xFFFFFF)
            o = out[lo:lo + r.shape[0]]
            np.multiply(r.view(np.int32), _TWO_M24, out=o, dtype=_F32)   # exact: < 2**24
            if scale is not None:
                o[...] = _mf.fmaf(o, scale, shift)
        return out

    def _u53(self, n):
        """``n`` float64 uniforms ``(r64 & (2**53-1)) * 2**-53`` (two draws each)."""
        r = self._raw(2 * n)
        hi = r[0::2] & np.uint32(0x1FFFFF)
        v = hi.astype(np.int64)
        v <<= 32
        v |= r[1::2]
        out = v.astype(_F64)
        out *= _TWO_M53
        return out

    # ------------------------------------------------------------------ uniform

    def uniform(self, size, dtype="float32", low=0.0, high=1.0):
        """``Tensor.uniform_(low, high)`` / ``torch.rand``: ``fma(U, high - low, low)``."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        if name.startswith("complex"):
            comp = "float32" if name == "complex64" else "float64"
            vals = self.uniform(shape + (2,), comp, low, high)
            return vals.view(_np_dtype(name)).reshape(shape)
        n = _numel(shape)
        low, high = _clamp_uniform_bounds(name, float(low), float(high))
        if n == 0:
            return np.empty(shape, _np_dtype(name))
        if name == "float64":
            u = self._u53(n)
            rng = high - low
            if low == 0.0 and rng == 1.0:
                v = u
            elif low == 0.0:
                v = u * rng                       # fma(u, r, 0) is one rounding
            else:
                v = _mf.fma(u, rng, low)
            v[v == high] = low
            return v.reshape(shape)
        lo32, hi32 = _F32(low), _F32(high)
        rng = hi32 - lo32
        if lo32 == 0 and rng == 1:
            v = self._u24(n)                      # fmaf(u, 1, +-0) == u, and u < 1
            if name == "float32":
                return v.reshape(shape)
        else:
            v = self._u24(n, rng, lo32)
        if name == "float32":
            v[v == hi32] = lo32
            return v.reshape(shape)
        out = cast_from_float(v, name)
        lo_s, hi_s = cast_from_float(lo32, name), cast_from_float(hi32, name)
        out[out == hi_s] = lo_s
        return out.reshape(shape)

    # ------------------------------------------------------------------ normal

    def _normal_scalar(self, n, mean, std):
        """n values of ``normal_distribution<double>`` (with the cross-call cache)."""
        out = np.empty(n, _F64)
        start = 0
        if n and self._normal_double is not None:
            out[0] = self._normal_double
            self._normal_double = None
            start = 1
        m = n - start
        if m:
            pairs = (m + 1) // 2
            u = self._u53(2 * pairs).reshape(pairs, 2)
            r = _mf.libm_sqrt(-2.0 * _mf.libm_log1p(-u[:, 1]))
            theta = (2.0 * math.pi) * u[:, 0]
            both = np.empty((pairs, 2), _F64)
            both[:, 0] = r * _mf.libm_cos(theta)
            both[:, 1] = r * _mf.libm_sin(theta)
            both = both.ravel()
            out[start:] = both[:m]
            if m % 2:
                self._normal_double = float(both[-1])
        if std == 1.0 and mean == 0.0 and not math.copysign(1.0, mean) < 0:
            return out + 0.0                      # fma(x, 1, +0) == x + 0
        return _mf.fma(out, std, mean)

    def normal(self, size, dtype="float32", mean=0.0, std=1.0, contiguous=True):
        """``Tensor.normal_(mean, std)`` / ``torch.randn``.

        ``contiguous=False`` selects PyTorch's element-wise path (what a non-contiguous
        destination gets); values are then in the kernel's iteration order.
        """
        name = _dtype_name(dtype)
        shape = _shape(size)
        mean, std = float(mean), float(std)
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
        if name.startswith("complex"):
            comp = "float32" if name == "complex64" else "float64"
            vals = self.normal(shape + (2,), comp, mean, std / math.sqrt(2), contiguous)
            return vals.view(_np_dtype(name)).reshape(shape)
        n = _numel(shape)
        if n == 0:
            return np.empty(shape, _np_dtype(name))
        if n < 16 or not contiguous:
            return cast_from_double(self._normal_scalar(n, mean, std), name).reshape(shape)
        full = n // 16
        tail = n % 16 != 0
        if name == "float64":
            u = self._u53(n + 16 * tail)
            out = _mf.aligned_empty(n, _F64)
            out[:full * 16] = _mf.normal16_double(u[:full * 16], mean, std).ravel()
            if tail:
                out[n - 16:] = _mf.normal16_double(u[n:], mean, std).ravel()
            return out.reshape(shape)
        # float32 kernel (float16/bfloat16 use it on a float buffer, then cast)
        vals = _mf.aligned_empty(n, _F32)
        self._normal_f32_blocks(full, mean, std, vals[:full * 16])
        if tail:
            if name == "float32":
                self._raw(n - full * 16)      # float32 drew the partial block, then overwrote it
            vals[n - 16:] = self._normal_f32_blocks(1, mean, std)
        if name == "float32":
            return vals.reshape(shape)
        return cast_from_float(vals, name).reshape(shape)

    def _normal_f32_blocks(self, nblocks, mean, std, out=None):
        if self.capability == "avx2":
            return normal_f32_blocks(self._raw, nblocks, mean, std, out)
        vals = _mf.normal16_libm_f32(self._u24(16 * nblocks), mean, std)
        if out is None:
            return vals
        out[...] = vals
        return out

    def log_normal(self, size, dtype="float32", mean=1.0, std=2.0):
        """``Tensor.log_normal_``: ``exp`` of the element-wise double normal."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        if not std > 0.0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
        vals = _mf.libm_exp(self._normal_scalar(_numel(shape), float(mean), float(std)))
        return cast_from_double(vals, name).reshape(shape)

    # ------------------------------------------------------------------ other continuous

    def exponential(self, size, dtype="float32", lambd=1.0):
        """``Tensor.exponential_``: ``(-1/lambd) * log1p(-U53)`` in double."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        lambd = float(lambd)
        if not lambd > 0.0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
        if name not in _FLOATS:
            raise RuntimeError("Exponential distribution is a continuous probability "
                               "distribution. dtype must be a floating point but you specified "
                               f"{name}")
        vals = (-1.0 / lambd) * _mf.libm_log1p(-self._u53(_numel(shape)))
        return cast_from_double(vals, name).reshape(shape)

    def geometric(self, size, dtype="float32", p=0.5):
        """``Tensor.geometric_``: ``ceil(log(U53) / log1p(-p))`` in double."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        p = float(p)
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
        vals = np.ceil(_mf.libm_log(self._u53(_numel(shape))) / math.log1p(-p))
        return cast_from_double(vals, name).reshape(shape)

    def cauchy(self, size, dtype="float32", median=0.0, sigma=1.0):
        """``Tensor.cauchy_``: ``median + sigma * tan(pi * (U53 - 0.5))`` in double (fused)."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        if not sigma > 0.0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
        t = _mf.libm_tan(math.pi * (self._u53(_numel(shape)) - 0.5))
        vals = _mf.fma(t, float(sigma), float(median))
        return cast_from_double(vals, name).reshape(shape)

    # ------------------------------------------------------------------ integers

    def random_(self, size, dtype="int64"):
        """``Tensor.random_()`` without bounds: ``[0, 2**mantissa]`` or ``[0, max]``."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        n = _numel(shape)
        if name == "bool":
            return (self._raw(n) & np.uint32(1)).astype(bool).reshape(shape)
        if name in ("int64", "float64"):
            r = self.random64(n)
            mod = {"int64": 1 << 63, "float64": (1 << 53) + 1}[name]
            return (r % _U64(mod)).astype(_np_dtype(name)).reshape(shape)
        mods = {"int32": 1 << 31, "int16": 1 << 15, "int8": 1 << 7, "uint8": 1 << 8,
                "float32": (1 << 24) + 1, "float16": (1 << 11) + 1, "bfloat16": (1 << 8) + 1}
        if name not in mods:
            raise RuntimeError('"random_kernel_cpu" not implemented for '
                               f"'{_SCALAR_NAMES.get(name, name)}'")
        v = self._raw(n) % np.uint32(mods[name])
        if name in ("float16", "bfloat16"):
            return v.astype(_F32).astype(_np_dtype(name)).reshape(shape)
        return v.astype(_np_dtype(name)).reshape(shape)

    def random_from_to(self, size, dtype, low, high=None):
        """``Tensor.random_(from, to)`` with PyTorch's bound adjustments and checks."""
        name = _dtype_name(dtype)
        shape = _shape(size)
        n = _numel(shape)
        low = int(low)
        if high is None and low == -(1 << 63):
            if name not in ("int64", "float64", "float32", "bfloat16"):
                if name in ("float16", "bool", "uint16", "uint32", "uint64"):
                    raise RuntimeError('"random_full_64_bits_range_kernel_cpu" not implemented '
                                       f"for '{_SCALAR_NAMES[name]}'")
                raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                                   "double, float and bfloat16")
            vals = self.random64(n).view(np.int64)
            return cast_from_int64(vals, name).reshape(shape)
        rng, base = _from_to_range(name, low, high)
        if n == 0:
            return np.empty(shape, _np_dtype(name))
        if rng >= 1 << 28:
            v = self.random64(n)
        else:
            v = self._raw(n).astype(_U64)
        v = (v % _U64(rng)) + _U64(base & ((1 << 64) - 1))     # uint64 arithmetic wraps
        return cast_from_int64(v.view(np.int64), name).reshape(shape)

    def randint(self, low, high, size, dtype="int64"):
        """``torch.randint(low, high, size)`` (= ``random_(low, high)``)."""
        return self.random_from_to(size, dtype, low, high)

    def randperm(self, n, dtype="int64"):
        """``torch.randperm(n)``."""
        return _disc.randperm(self, int(n), _dtype_name(dtype))

    # ------------------------------------------------------------------ bernoulli

    def bernoulli_scalar(self, size, p=0.5, dtype="float32"):
        """``Tensor.bernoulli_(p: float)`` (PyTorch's default, non-MKL kernel): ``U53 < p``."""
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        shape = _shape(size)
        hits = self._u53(_numel(shape)) < p
        return hits.astype(_np_dtype(_dtype_name(dtype))).reshape(shape)

    def bernoulli_tensor(self, p, dtype=None, size=None):
        """``torch.bernoulli(p)`` / ``Tensor.bernoulli_(p_tensor)``.

        float64 ``p`` compares with ``U53``; every other float dtype of ``p`` is read as float32
        and compares with ``U24f``. ``p`` broadcasts to ``size`` (default: its own shape).
        """
        p = np.asarray(p)
        if p.dtype.kind == "f" or p.dtype == _BF16:
            # PyTorch's CPU kernel checks every probability (a NaN fails too)
            inside = (p >= 0) & (p <= 1)
            if not inside.all():
                raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                                   "(Could this error message be improved?  If so, please "
                                   "report an enhancement request to PyTorch.)")
        shape = p.shape if size is None else _shape(size)
        out_name = _dtype_name(dtype) if dtype is not None else _dtype_name(
            "bfloat16" if p.dtype == _BF16 else p.dtype.name)
        pb = np.broadcast_to(p, shape).ravel()
        n = pb.size
        if p.dtype == _F64:
            hits = self._u53(n) < pb
        elif p.dtype.kind == "f" or p.dtype == _BF16:
            hits = self._u24(n) < pb.astype(_F32)
        else:
            raise RuntimeError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{p.dtype}\'')
        return hits.astype(_np_dtype(out_name)).reshape(shape)

    # ------------------------------------------------------------------ discrete samplers

    def poisson(self, rates):
        """``torch.poisson(rates)``: values in ``rates``' dtype."""
        return _disc.poisson(self, rates)

    def binomial(self, counts, probs):
        """``torch.binomial(counts, probs)``: values in ``counts``' dtype."""
        return _disc.binomial(self, counts, probs)

    def standard_gamma(self, alphas):
        """``torch._standard_gamma(alphas)`` (float32/float64)."""
        return _gamma.standard_gamma(self, alphas)

    def dirichlet(self, alphas):
        """``torch._sample_dirichlet(alphas)`` and the gammas it normalised."""
        return _gamma.dirichlet(self, alphas)

    def multinomial(self, probs, num_samples, replacement=False):
        """``torch.multinomial(probs, num_samples, replacement)`` -> int64 indices."""
        return _disc.multinomial(self, probs, int(num_samples), bool(replacement))


# ------------------------------------------------------------------------------- bound helpers

_FLOAT_DIGITS = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}
_FLOAT_MAX = {"float32": float(np.finfo(_F32).max), "float64": float(np.finfo(_F64).max),
              # (a literal: numpy >= 2.5 has no finfo for bfloat16)
              "float16": 65504.0, "bfloat16": 3.3895313892515355e38}
_INT_BOUNDS = {"bool": (0, 1), "uint8": (0, 255), "int8": (-128, 127),
               "int16": (-(1 << 15), (1 << 15) - 1), "int32": (-(1 << 31), (1 << 31) - 1),
               "int64": (-(1 << 63), (1 << 63) - 1), "uint16": (0, (1 << 16) - 1),
               "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 63) - 1)}


_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
             "uint16": "short unsigned int", "uint32": "unsigned int",
             "uint64": "long unsigned int"}
_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}
_SCALAR_NAMES = dict(_SCALAR_TYPE, bool="Bool", uint16="UInt16", uint32="UInt32",
                     uint64="UInt64", int64="Long", int32="Int", int16="Short", int8="Char",
                     uint8="Byte")


def _g(v):
    """A double as C++'s ostream prints it in PyTorch's messages (like printf %g)."""
    return "%g" % v


def _clamp_uniform_bounds(name, low, high):
    if name not in _FLOAT_MAX and not name.startswith("complex"):   # rand(dtype=torch.long)
        raise NotImplementedError(f'"check_uniform_bounds" not implemented for '
                                  f"'{_SCALAR_NAMES.get(name, name)}'")
    top = _FLOAT_MAX["float32" if name.startswith("complex") else name]
    tname = _TYPEMETA.get(name, name)
    if not (-top <= low <= top):
        raise RuntimeError(f"from is out of bounds for {tname}")
    if not (-top <= high <= top):
        raise RuntimeError(f"to is out of bounds for {tname}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_g(low)} > to={_g(high)}")
    if not high - low <= top:
        raise RuntimeError("uniform_ expects to-from <= std::numeric_limits<"
                           f"{_SCALAR_TYPE.get(name, name)}>::max(), "
                           f"but found to={_g(high)} and from={_g(low)} which result in to-from to "
                           "exceed the limit")
    return low, high


def _round_trip_int(v, name):
    """``static_cast<int64_t>(static_cast<scalar_t>(v))`` for a float dtype.

    Out-of-range and infinite values convert like x86's cvttss2si: to INT64_MIN.
    """
    with np.errstate(over="ignore"):
        f = float(cast_from_int64(np.array([v], np.int64), name).astype(_F64)[0])
    if not -2.0 ** 63 <= f < 2.0 ** 63:
        return -(1 << 63)
    return int(f)


def _update_from(name, low):
    fp1 = _round_trip_int(low + 1, name)
    if fp1 < low:
        n = abs(low + 1).bit_length() - 1
        low = fp1 + (1 << (n - _FLOAT_DIGITS[name] + 1))
    return low


def _update_to(name, high):
    tm1 = _round_trip_int(high - 1, name)
    if tm1 >= high:
        n = abs(high - 1).bit_length() - 1
        high = tm1 - (1 << (n - _FLOAT_DIGITS[name] + 1))
    return high


def _check_in_range(name, low, to_inc):
    if name in _FLOAT_DIGITS:
        lo, hi = -_FLOAT_MAX[name], _FLOAT_MAX[name]
    else:
        lo, hi = _INT_BOUNDS[name]
    tname = _TYPEMETA.get(name, name)
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {tname}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {tname}")
    if name in _FLOAT_DIGITS:
        d = _FLOAT_DIGITS[name]
        for what, v in (("from", low), ("to - 1", to_inc)):
            if not -(1 << d) <= v <= 1 << d:
                warnings.warn(f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision "
                              f"limitations {tname} can support discrete uniform distribution "
                              "only within this range. This warning will become an error in "
                              "version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)


def _from_to_range(name, low, high):
    """(range, base) of ``random_from_to_impl`` for ``[low, high)`` or ``[low, max]``."""
    if high is not None:
        high = int(high)
        if not low < high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={low} >= to={high}")
        if name in _FLOAT_DIGITS:
            low, high = _update_from(name, low), _update_to(name, high)
            if not low < high:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' "
                                   f"casted to dtype, but got from={low} >= to={high}")
        _check_in_range(name, low, high - 1)
        return (high - low) & ((1 << 64) - 1), low
    if name in _FLOAT_DIGITS:
        to_inc = min(1 << _FLOAT_DIGITS[name], (1 << 63) - 1)
        low = _update_from(name, low)
        if not low < to_inc:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={low} > "
                               f"to_inc={to_inc}")
    else:
        to_inc = _INT_BOUNDS[name][1]
    _check_in_range(name, low, to_inc)
    return (to_inc - low + 1) & ((1 << 64) - 1), low
