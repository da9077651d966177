"""Ops whose saved values depend on the overload PyTorch picks (`op(saves=callable)`): pow's
PowBackward0/1/2 pack different tensors, and `grad_fn._saved_result` exists only where PyTorch
saves the result. Checked against real PyTorch."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

BASE = np.array([1.5, 2.0, 3.0], np.float32)
EXPONENT = np.array([[0.5], [2.0]], np.float32)

PROGRAMS = {
    "pow tensor tensor": lambda T, x, y: T.pow(x, y),
    "pow tensor number": lambda T, x, y: T.pow(x, 2.5),
    "pow number tensor": lambda T, x, y: T.pow(2.0, y),
    "number ** tensor": lambda T, x, y: 2 ** y,
    "tensor ** tensor": lambda T, x, y: x ** y,
    "__rpow__ tensor": lambda T, x, y: y.__rpow__(x),
    "pow_ tensor": lambda T, x, y: (x * 1).pow_(y[1]),
    "pow_ number": lambda T, x, y: (x * 1).pow_(2.5),
}


def _run(T, program, x_grad=True):
    """(values packed, in order; grad_fn name; the gradients of x and y)."""
    x = T.tensor(BASE, requires_grad=x_grad)
    y = T.tensor(EXPONENT, requires_grad=True)
    packed = []

    def pack(t):
        packed.append(np.asarray(t.detach().tolist()))
        return t
    with T.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = program(T, x, y)
    if out.grad_fn is None:   # (`pow(x, 2.5)` of an x without grad)
        return packed, None, [None, None]
    name = type(out.grad_fn).__name__ if T is torch else out.grad_fn.name()
    out.sum().backward()
    grads = [None if t.grad is None else np.asarray(t.grad.tolist()) for t in (x, y)]
    return packed, name, grads


@pytest.mark.parametrize("x_grad", [True, False])
@pytest.mark.parametrize("label", list(PROGRAMS))
def test_packed_values_match_torch(label, x_grad):
    ours, theirs = _run(torchish, PROGRAMS[label], x_grad), _run(torch, PROGRAMS[label], x_grad)
    assert ours[1] == theirs[1]
    assert len(ours[0]) == len(theirs[0])
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for a, b in zip(ours[2], theirs[2]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5)


def _saved(T, program, attr):
    x = T.tensor(BASE, requires_grad=True)
    y = T.tensor(EXPONENT, requires_grad=True)
    try:
        value = getattr(program(T, x, y).grad_fn, attr)
    except AttributeError:
        return "AttributeError"
    return np.asarray(value.tolist()) if hasattr(value, "tolist") else value


@pytest.mark.parametrize("attr", ["_saved_result", "_saved_self", "_saved_exponent"])
@pytest.mark.parametrize("label", ["pow tensor tensor", "pow tensor number",
                                   "pow number tensor", "number ** tensor", "__rpow__ tensor"])
def test_saved_attributes_match_torch(label, attr):
    ours, theirs = _saved(torchish, PROGRAMS[label], attr), _saved(torch, PROGRAMS[label], attr)
    if isinstance(theirs, np.ndarray):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    else:
        assert (type(ours), ours) == (type(theirs), theirs)
