"""abs' is PyTorch's sgn(x) = (x > 0) - (x < 0): +0 at -0 and at nan, so the gradient's zeros
carry the upstream gradient's sign (JAX's own rule is 1 at 0 and keeps -0's sign). Checked
bit for bit (signs of zero, nan) against real PyTorch, eagerly and under torch.func.grad."""
import math

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

VALUES = [math.nan, -0.0, 0.0, math.inf, -math.inf, -2.0, 3.0]


def _bits(t):
    a = t.detach().numpy()
    return a.tolist(), np.signbit(a).tolist()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("upstream", [1.0, -1.0])
def test_abs_gradient_matches_pytorch_bitwise(dtype, upstream):
    got = []
    for T in (torchish, torch):
        x = T.tensor(VALUES, dtype=getattr(T, dtype), requires_grad=True)
        x.abs().backward(T.full_like(x, upstream))
        got.append(_bits(x.grad))
    assert str(got[0]) == str(got[1])   # (str: nan == nan)


def test_abs_gradient_under_func_grad():
    got = []
    for T in (torchish, torch):
        x = T.tensor(VALUES)
        got.append(_bits(T.func.grad(lambda t: (-t.abs()).sum())(x)))
    assert str(got[0]) == str(got[1])
