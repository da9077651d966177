"""Regression tests for what the sweep25a ported programs (tabular autoencoder, GRUCell sampler,
detection head with hand-written IoU/NMS) and their probes exposed, against real PyTorch: the
gradient of the infinity-norm distances. cdist / pdist give every tied largest |difference| the
full gradient (PyTorch's distance backward), where torch.dist / norm share it among the ties;
a zero difference gets gradient 0 in all of them (sign(0)), where JAX's max and |x|' did not."""
import math

import numpy as np

import pytest

import torchish

torch = pytest.importorskip("torch")

_INF = math.inf
_A = [[0.0, 1.0], [2.0, 3.0], [0.0, 1.0], [-1.0, 4.0]]
_B = [[0.0, 1.0], [1.0, 1.0], [3.0, 0.0]]


def _grads(T, fn, *data):
    leaves = [T.tensor(d, requires_grad=True) for d in data]
    out = fn(T, *leaves)
    weights = T.arange(1.0, out.numel() + 1).reshape(out.shape)  # distinct upstream grads
    (out * weights).sum().backward()
    return [out.detach().numpy()] + [x.grad.numpy() for x in leaves]


def _same(fn, *data):
    ours = _grads(torchish, fn, *data)
    theirs = _grads(torch, fn, *data)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0)


@pytest.mark.parametrize("p", [_INF, 1.0, 2.0])
def test_cdist_ties_and_zero_differences(p):
    _same(lambda T, a, b: T.cdist(a, b, p=p), _A, _B)


def test_cdist_inf_batched_and_empty_columns():
    _same(lambda T, a, b: T.cdist(a[None].expand(2, 4, 2), b[None], p=_INF), _A, _B)
    _same(lambda T, a, b: T.cdist(a[:, :0], b[:, :0], p=_INF), _A, _B)


@pytest.mark.parametrize("p", [_INF, 1.0])
def test_pdist_ties_and_zero_differences(p):
    _same(lambda T, a: T.nn.functional.pdist(a, p=p), _A)


def test_dist_inf_shares_ties_and_zero_gives_zero():
    _same(lambda T, a, b: T.dist(a, b, p=_INF), _A, _A)     # all differences 0
    _same(lambda T, a: T.dist(a, T.zeros(3), p=_INF), [2.0, -2.0, 1.0])   # a tie: shared


def test_cdist_inf_under_compile():
    # the rule is written in JAX, so it holds on tracers too
    def loss(a, b):
        return torchish.cdist(a, b, p=_INF).sum()

    a = torchish.tensor(_A, requires_grad=True)
    b = torchish.tensor(_B)
    torchish.compile(loss)(a, b).backward()
    ta = torch.tensor(_A, requires_grad=True)
    torch.cdist(ta, torch.tensor(_B), p=_INF).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())


@pytest.mark.parametrize("fn", [
    lambda T, x: T.linalg.vector_norm(x, _INF),
    lambda T, x: T.linalg.vector_norm(x, -_INF),
    lambda T, x: x.norm(_INF),
    lambda T, x: T.linalg.vector_norm(x, _INF, dim=1),
    lambda T, x: T.nn.functional.pairwise_distance(x, T.zeros(2), p=_INF, eps=0.0),
], ids=["vector_norm", "vector_norm_neg_inf", "norm", "vector_norm_dim", "pairwise_distance"])
@pytest.mark.parametrize("data", [[[0.0, 0.0], [0.0, 0.0]], [[2.0, -2.0], [1.0, 0.0]]],
                         ids=["zeros", "ties"])
def test_inf_norms_zero_entries_get_zero_gradient(fn, data):
    # PyTorch's norm backward is sgn(x) * (share of the ties): 0 at a zero entry, also when the
    # norm itself is 0 (JAX's |x|' is 1 at 0 and its max shares the gradient among the zeros)
    _same(fn, data)


@pytest.mark.parametrize("fn, data", [
    (lambda T, x: x.pow(0.0), [[0.0, 2.0]]),
    (lambda T, x, e: x.pow(e), [[0.0, 0.0, 2.0, 0.0], [0.0, 2.0, 0.0, -1.0]]),
    (lambda T, x, e: T.pow(x, e), [[0.0, 3.0], [0.0, 0.5]]),
    (lambda T, y, x: T.atan2(y, x), [[0.0, 1e-30, 1.0], [0.0, 1e-30, 2.0]]),
    (lambda T, x, y: T.hypot(x, y), [[0.0, 3.0], [0.0, 4.0]]),
    (lambda T, x, y: T.xlogy(x, y), [[0.0, 0.0, 2.0], [0.0, 1.0, 3.0]]),
], ids=["pow_number_0", "pow_tensor_0", "pow_tensor", "atan2_origin", "hypot_origin",
        "xlogy_zero"])
def test_binary_derivatives_at_zero(fn, data):
    # PyTorch's formulas: x ** 0 has derivative 0, atan2's 1/(x^2+y^2) is 0 where that is 0,
    # hypot's x/hypot is nan at the origin, xlogy's d/dx is xlogy(x != 0, y)
    _same_nan(fn, *data)


def _same_nan(fn, *data):
    ours = _grads(torchish, fn, *data)
    theirs = _grads(torch, fn, *data)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=0, equal_nan=True)


def test_binary_forward_ad_with_one_tangent():
    # forward mode with a tangent on one operand only: the other operand's partial (x / y at
    # y = 0, log of a negative base) must not turn its absent tangent into nan
    import torchish.autograd.forward_ad as ours_fwd
    import torch.autograd.forward_ad as theirs_fwd

    def run(T, fwd):
        out = []
        with fwd.dual_level():
            x = fwd.make_dual(T.tensor([-2.0, 0.5, 3.0]), T.ones(3))
            for y in (x.pow(3), T.xlogy(x, T.tensor([0.0, 1.0, 2.0])),
                      T.atan2(x, T.zeros(3)), T.hypot(x, T.zeros(3)), x.pow(T.tensor(2.0))):
                out.append(fwd.unpack_dual(y).tangent.numpy())
        return out

    for a, b in zip(run(torchish, ours_fwd), run(torch, theirs_fwd)):
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
