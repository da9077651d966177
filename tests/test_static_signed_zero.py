"""A -0.0 static argument gets its own compiled plan: equal to 0.0 as a cache key, it gives
other signed zeros, and PyTorch's results keep them."""
import math

import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = [   # each run with 0.0 first, then -0.0 (which once reused 0.0's plan)
    lambda T, x, z: T.nn.functional.hardtanh(x, z, 1.0),
    lambda T, x, z: x.add(x, alpha=z),
    lambda T, x, z: T.nn.functional.leaky_relu(x, z),
    lambda T, x, z: x.clamp(z, 0.0),
    lambda T, x, z: T.nn.functional.threshold(x, 0.5, z),
]


def _signs(t):
    return [math.copysign(1.0, v) for v in t.tolist()]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_negative_zero_static_is_not_zero(i):
    for z in (0.0, -0.0):
        got, want = (CALLS[i](T, T.tensor([-1.0, -0.0, 0.0, 2.0]), z)
                     for T in (torchish, torch))
        assert got.tolist() == want.tolist() and _signs(got) == _signs(want)
