"""torch.angle against PyTorch at the edges: signed zeros and nan of real inputs (PyTorch
tests x < 0, not atan2's sign bit), every input dtype, and the gradient, which PyTorch makes
zero for real inputs and at a complex zero."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

REAL = [-2.0, -0.0, 0.0, 3.0, math.nan, -math.inf, math.inf]
COMPLEX = [complex(-1, 0), complex(-1, -0.0), complex(0, 1), complex(0, 0), complex(-0.0, 0),
           complex(3, -4)]


def _np(t):
    return np.asarray(t.detach().numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "uint8", "bool"])
def test_real_values_and_dtype(dtype):
    data = [-1, 0, 2] if dtype in ("int64", "uint8", "bool") else REAL
    if dtype == "uint8":
        data = [0, 1, 200]
    ours = torchish.angle(torchish.tensor(data, dtype=getattr(torchish, dtype)))
    theirs = torch.angle(torch.tensor(data, dtype=getattr(torch, dtype)))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(_np(ours.float()), _np(theirs.float()))


def test_complex_values():
    ours = torchish.tensor(COMPLEX).angle()
    theirs = torch.tensor(COMPLEX).angle()
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-6)


@pytest.mark.parametrize("data", [REAL, COMPLEX])
def test_gradient(data):
    grads = []
    for lib in (torchish, torch):
        x = lib.tensor(data, dtype=lib.complex128 if isinstance(data[0], complex) else
                       lib.float64, requires_grad=True)
        y = x.angle()
        assert y.grad_fn.name() == "AngleBackward0"
        (y * lib.arange(1.0, len(data) + 1, dtype=lib.float64)).sum().backward()
        grads.append(_np(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
