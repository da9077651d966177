"""PyTorch's CPU gamma sampler (`torch._standard_gamma`, `torch._sample_dirichlet`), replayed
on the host from the engine's stream.

Helpers of ``_random_engine.MT19937Engine``. PyTorch draws element by element in memory order
(a serial kernel): Marsaglia and Tsang's rejection method, with a boost for concentrations
below 1, reading `uniform_real_distribution<double>` (U53) and `normal_distribution<double>`
(Box-Muller with the generator's cached second value) as it goes. The arithmetic mixes float
constants into double expressions exactly as the C++ does (`1.0f / 3.0f` is the float
0.33333334, not a third), without FMA contraction.
"""
import math

import numpy as np

from ._random_discrete import _UniformReader

_F32 = np.float32
_THIRD_F = float(_F32(1.0) / _F32(3.0))   # 1.0f / 3.0f, promoted to double
_C_F = float(_F32(0.0331))               # 0.0331f


def _sample(alpha, uniform, normal, single):
    """One `sample_gamma` draw for concentration `alpha` (a Python float holding the value in
    the kernel's scalar type: float32 when `single`), as a double."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - uniform(), inv)
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    # `alpha - 1.0f / 3.0f`: a float subtraction for a float alpha, a double one otherwise
    d = float(_F32(alpha) - _F32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - uniform()
        xx = x * x
        if u < 1.0 - _C_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


class _Stream:
    """U53 uniforms and `normal_distribution<double>` values in the engine's order, read ahead
    in bulk (see `_random_discrete._UniformReader`); `commit` advances the engine by what was
    used and leaves the Box-Muller cache as PyTorch's generator would hold it."""

    def __init__(self, engine):
        self._engine = engine
        self.uniform = _UniformReader(engine)
        self._cached = engine._normal_double

    def normal(self):
        if self._cached is not None:
            value, self._cached = self._cached, None
            return value
        u1, u2 = self.uniform(), self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self._cached = r * math.sin(theta)
        return r * math.cos(theta)

    def commit(self):
        self.uniform.commit()
        self._engine._normal_double = self._cached


def _samples(engine, values, single):
    stream = _Stream(engine)
    try:
        return [_sample(a, stream.uniform, stream.normal, single) for a in values]
    finally:
        stream.commit()


def standard_gamma(engine, alphas):
    """`torch._standard_gamma(alphas)` for a float32 or float64 NumPy array."""
    alphas = np.asarray(alphas)
    flat = _samples(engine, alphas.ravel().tolist(), alphas.dtype == np.float32)
    out = np.array(flat, np.float64).astype(alphas.dtype)
    # the kernel returns max(smallest normal number, sample) in the scalar type
    return np.maximum(out, np.finfo(alphas.dtype).tiny).reshape(alphas.shape)


def dirichlet(engine, alphas):
    """`torch._sample_dirichlet(alphas)`: double gammas normalised over the last dimension,
    clamped to [smallest normal number, the largest value below 1] of the input's type.
    Returns the sample and the gammas (in the input's type)."""
    alphas = np.asarray(alphas)
    tiny = np.finfo(np.float64).tiny
    flat = _samples(engine, alphas.astype(np.float64).ravel().tolist(), False)
    gammas = np.maximum(np.array(flat, np.float64), tiny).reshape(alphas.shape)
    total = np.zeros(gammas.shape[:-1], np.float64)
    for k in range(gammas.shape[-1]):   # left to right, as PyTorch's sum over a short row
        total = total + gammas[..., k]
    ratio = (gammas / total[..., None]).astype(alphas.dtype)
    top = np.nextafter(alphas.dtype.type(1.0), alphas.dtype.type(0.0))
    return (np.minimum(top, np.maximum(np.finfo(alphas.dtype).tiny, ratio)),
            gammas.astype(alphas.dtype))
