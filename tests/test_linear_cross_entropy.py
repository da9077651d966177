"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss (PyTorch 2.13) against PyTorch:
values, gradients, grad_fn, K-dimensional heads, probabilities as targets, errors, repr."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X, W3, B3 = (RNG.standard_normal(s).astype(np.float32) for s in ((4, 3), (5, 2, 3), (5, 2)))
T1 = np.array([0, 1, 4, 2])
T2 = np.array([[0, 1], [4, 2], [3, 3], [1, 0]])
P = RNG.dirichlet(np.ones(5), 4).astype(np.float32)

CASES = {
    "plain": lambda m, x, w, b: m.nn.functional.linear_cross_entropy(x, w[:, 0], m.tensor(T1)),
    "bias_sum_smoothing": lambda m, x, w, b: m.nn.functional.linear_cross_entropy(
        x, w[:, 0], m.tensor(T1), linear_bias=b[:, 0], reduction="sum", label_smoothing=0.1),
    "k_dim_ignore": lambda m, x, w, b: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor(T2), linear_bias=b, ignore_index=3, reduction="none"),
    "probabilities": lambda m, x, w, b: m.nn.functional.linear_cross_entropy(
        x, w[:, 0], m.tensor(P), weight=m.arange(1.0, 6.0)),
    "unbatched": lambda m, x, w, b: m.nn.functional.linear_cross_entropy(
        x[0], w[:, 1], m.tensor(2)),
}


def _run(m, name):
    x, w, b = (m.tensor(a, requires_grad=True) for a in (X, W3, B3))
    out = CASES[name](m, x, w, b)
    out.sum().backward()
    return [out.grad_fn.name(), out.detach().numpy()] + [
        None if t.grad is None else t.grad.numpy() for t in (x, w, b)]


@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(name):
    ours, theirs = _run(torchish, name), _run(torch, name)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1:], theirs[1:]):
        assert (o is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


ERRORS = {
    "input_3d": lambda m: m.nn.functional.linear_cross_entropy(m.ones(1, 2, 3), m.ones(5, 3),
                                                               m.zeros(1, dtype=m.int64)),
    "weight_1d": lambda m: m.nn.functional.linear_cross_entropy(m.ones(2, 3), m.ones(3),
                                                                m.zeros(2, dtype=m.int64)),
    "in_features": lambda m: m.nn.functional.linear_cross_entropy(m.ones(2, 3), m.ones(5, 4),
                                                                  m.zeros(2, dtype=m.int64)),
    "bias_shape": lambda m: m.nn.functional.linear_cross_entropy(
        m.ones(2, 3), m.ones(5, 3), m.zeros(2, dtype=m.int64), linear_bias=m.ones(4)),
    "k_dim_unbatched": lambda m: m.nn.functional.linear_cross_entropy(
        m.ones(3), m.ones(5, 2, 3), m.zeros(2, dtype=m.int64)),
    "probabilities_ignore": lambda m: m.nn.functional.linear_cross_entropy(
        m.ones(2, 3), m.ones(5, 3), m.ones(2, 5), ignore_index=1),
    "module_weight": lambda m: m.nn.LinearCrossEntropyLoss(3, 5, weight=m.ones(4)),
    "module_smoothing": lambda m: m.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_pytorch(name):
    with pytest.raises(RuntimeError) as theirs:
        ERRORS[name](torch)
    with pytest.raises(RuntimeError) as ours:
        ERRORS[name](torchish)
    assert str(ours.value) == str(theirs.value)


def test_module_matches_pytorch():
    def run(m):
        m.manual_seed(0)
        loss = m.nn.LinearCrossEntropyLoss(3, 5, out_features=(2,), bias=True,
                                           options=m.nn.LinearCrossEntropyOptions())
        with m.no_grad():
            loss.linear.weight.copy_(m.tensor(W3.reshape(10, 3)))
            loss.linear.bias.copy_(m.tensor(B3.reshape(10)))
        x = m.tensor(X, requires_grad=True)
        with pytest.warns(UserWarning, match="linear_cross_entropy: ``options`` ignored"):
            out = loss(x, m.tensor(T2))
        out.backward()
        return repr(loss), list(loss.state_dict()), out.item(), x.grad.numpy()
    ours, theirs = run(torchish), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-7)
