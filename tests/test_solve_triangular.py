"""Differential tests of torch.linalg.solve_triangular against PyTorch: the operand checks
(dimensions, squareness, compatible shapes, batch broadcasting, dtypes) in PyTorch's order and
words, and the result in A's dtype when B's differs."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

A = [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 4.0]]


def _outcome(m, a, b, **kw):
    """What solve_triangular does with operands built by `a(m)`, `b(m)` under module `m`."""
    try:
        r = m.linalg.solve_triangular(a(m), b(m), upper=False, **kw)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return str(r.dtype), tuple(r.shape), r.tolist()


@pytest.mark.parametrize("a, b, kw", [
    (lambda m: m.ones(3), lambda m: m.ones(3, 1), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(3), {}),
    (lambda m: m.ones(2, 3), lambda m: m.ones(3), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(2, 1), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(3, 2), {"left": False}),
    (lambda m: m.tensor(A).expand(2, 3, 3), lambda m: m.ones(4, 3, 1), {}),
    (lambda m: m.tensor(A).int(), lambda m: m.ones(3, 1), {}),
    (lambda m: m.tensor(A).half(), lambda m: m.ones(3, 1).half(), {}),
    (lambda m: m.tensor(A).bfloat16(), lambda m: m.ones(3, 1), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(3, 2, dtype=m.float64), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(3, 2, dtype=m.int64), {}),
    (lambda m: m.tensor(A), lambda m: m.ones(1, 3), {"left": False}),
])
def test_operands_as_pytorch(a, b, kw):
    expected = _outcome(torch, a, b, **kw)
    got = _outcome(torchish, a, b, **kw)
    assert got[:2] == expected[:2]
    if len(expected) == 3:
        np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)


def test_mixed_dtype_gradients():
    grads = []
    for m in (torch, torchish):
        a = m.tensor(A, requires_grad=True)
        b = m.ones(3, 2, dtype=m.float64, requires_grad=True)
        r = m.linalg.solve_triangular(a, b, upper=False)
        r.sum().backward()
        grads.append((r.grad_fn.name(), str(a.grad.dtype), str(b.grad.dtype), a.grad.tolist(),
                      b.grad.tolist()))
    assert grads[1][:3] == grads[0][:3]
    np.testing.assert_allclose(grads[1][3], grads[0][3], rtol=1e-6)
    np.testing.assert_allclose(grads[1][4], grads[0][4], rtol=1e-6)
