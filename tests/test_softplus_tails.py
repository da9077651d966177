"""softplus in its tails: log1p(exp(beta * x)) / beta below the threshold keeps tiny positive
results (no flush to 0 while they are normal numbers), x above it, for any beta's sign; and
its gradient there. (XLA's CPU runtime flushes denormals: results under float32's 1.2e-38
are 0, PyTorch's a denormal.)"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

POINTS = {"float32": [-80.0, -20.0, -1.0, 1e-3, 19.0, 21.0, 100.0],
          "float64": [-700.0, -100.0, -20.0, 1e-3, 19.0, 21.0, 100.0]}


def _run(T, dtype, kw):
    x = T.tensor(POINTS[dtype], dtype=getattr(T, dtype), requires_grad=True)
    y = T.nn.functional.softplus(x, **kw)
    g, = T.autograd.grad(y.sum(), x)
    return np.array(y.tolist()), np.array(g.tolist())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", [{}, {"beta": 2.0}, {"beta": 0.5, "threshold": 5.0},
                                {"beta": -0.5, "threshold": 50.0}])
def test_softplus_tails(dtype, kw):
    (y, g), (ty, tg) = _run(torchish, dtype, kw), _run(torch, dtype, kw)
    rtol = 3e-7 if dtype == "float32" else 1e-15
    assert ((y == 0) == (ty == 0)).all() and ((g == 0) == (tg == 0)).all()
    np.testing.assert_allclose(y, ty, rtol=rtol)
    np.testing.assert_allclose(g, tg, rtol=rtol)
