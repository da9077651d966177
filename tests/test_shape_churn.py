"""Programs whose shapes change every step (torchish/_eager_jit.py: past `CHURN` shapes a kernel
compiles new ones at a lighter optimization level): packed GRU/LSTM over many length sets, CTC
loss over many length sets, an op chain over many shapes -- values, gradients and grad_fn names
against PyTorch, on shapes both before and after the kernels churn."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
import torchish._eager_jit as eager_jit  # noqa: E402

# Kernels here churn after CHURN shapes, fewer than torchish's own threshold: every compile
# costs time, and the path past the threshold is the same whatever the threshold.
CHURN = 3


@pytest.fixture(autouse=True)
def _low_churn_threshold(monkeypatch):
    monkeypatch.setattr(eager_jit, "CHURN", CHURN)


TOL = dict(rtol=2e-5, atol=2e-6)


def ours_of(t, requires_grad=False):
    out = torchish.tensor(t.detach().numpy().copy())
    return out.requires_grad_(True) if requires_grad else out


def check(ours, theirs, what):
    a, b = ours.detach().numpy(), theirs.detach().numpy()
    assert a.shape == b.shape, what
    np.testing.assert_allclose(a, b, err_msg=what, **TOL)


def length_sets(count, batch, t_max, seed):
    """Distinct length sets with a sequence of `t_max` steps; none all equal (PyTorch's packed
    LSTM names its output's node ViewBackward0 then: not reproduced)."""
    rng = np.random.default_rng(seed)
    sets = set()
    while len(sets) < count:
        lengths = (t_max, *(int(v) for v in rng.integers(1, t_max + 1, batch - 1)))
        if len(set(lengths)) > 1:
            sets.add(lengths)
    return sorted(sets)


@pytest.mark.parametrize("cls_name", ["GRU", "LSTM"])
def test_packed_rnn_over_many_length_sets(cls_name):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls_name)(3, 4, num_layers=2, bidirectional=True)
    ours = getattr(torchish.nn, cls_name)(3, 4, num_layers=2, bidirectional=True)
    ours.load_state_dict({k: ours_of(v) for k, v in theirs.state_dict().items()})
    for lengths in length_sets(CHURN + 3, 5, 7, seed=1):
        x = torch.randn(max(lengths) + 1, 5, 3, requires_grad=True)
        xo = ours_of(x, True)
        outs = []
        for lib, mod, inp in ((torch, theirs, x), (torchish, ours, xo)):
            rnn_utils = lib.nn.utils.rnn
            packed = rnn_utils.pack_padded_sequence(inp, lib.tensor(lengths),
                                                    enforce_sorted=False)
            y, state = mod(packed)
            h = state[0] if cls_name == "LSTM" else state
            padded, lens = rnn_utils.pad_packed_sequence(y)
            ((padded * padded).sum() + (h * h * 0.5).sum()).backward()
            outs.append((y.data, padded, lens, h))
        what = f"{cls_name} {lengths}"
        for a, b in zip(outs[1], outs[0]):
            check(a, b, what)
        assert outs[1][0].grad_fn.name() == outs[0][0].grad_fn.name(), what
        assert outs[1][3].grad_fn.name() == outs[0][3].grad_fn.name(), what
        check(xo.grad, x.grad, what + " input grad")
        for (name, p), q in zip(theirs.named_parameters(), ours.parameters()):
            check(q.grad, p.grad, f"{what} {name}.grad")
        theirs.zero_grad()
        ours.zero_grad()


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_ctc_loss_over_many_length_sets(reduction):
    rng = np.random.default_rng(2)
    for step in range(CHURN + 3):
        T, N, C = int(rng.integers(6, 14)), 3, 5
        lp = torch.randn(T, N, C).log_softmax(2).detach().requires_grad_()
        il = torch.tensor(rng.integers(T // 2, T + 1, N))
        tl = torch.tensor(rng.integers(1, 4, N))
        tg = torch.randint(1, C, (N, 3))
        lpo = ours_of(lp, True)
        theirs = torch.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction,
                                              zero_infinity=True)
        ours = torchish.nn.functional.ctc_loss(lpo, ours_of(tg), ours_of(il), ours_of(tl),
                                               reduction=reduction, zero_infinity=True)
        theirs.sum().backward()
        ours.sum().backward()
        what = f"step {step} T={T} {il.tolist()} {tl.tolist()}"
        check(ours, theirs, what)
        check(lpo.grad, lp.grad, what + " grad")
        assert ours.grad_fn.name() == theirs.grad_fn.name(), what


def test_op_chain_past_the_churn_threshold(monkeypatch):
    """An op chain over more shapes than CHURN gives PyTorch's values, grads and names. (Which
    of its kernels take the churn path depends on what earlier tests in the process compiled:
    the path itself is counted on fresh kernels in tests/test_eager_jit.py.)"""
    # each shape compiles the chain's ~40 kernels afresh: a threshold of 2 gives two shapes on
    # each side of it with four shapes
    monkeypatch.setattr(eager_jit, "CHURN", 2)
    for n in range(1, eager_jit.CHURN + 3):
        x = torch.randn(3, n, 6, dtype=torch.float64, requires_grad=True)
        w = torch.randn(6, dtype=torch.float64, requires_grad=True)
        xo, wo = ours_of(x, True), ours_of(w, True)
        results = []
        for lib, a, b in ((torch, x, w), (torchish, xo, wo)):
            F = lib.nn.functional
            h = F.gelu(F.layer_norm(a, (6,), b)) * a.tanh() + a[:, -1:]
            out = h.softmax(1).log1p() - h.sum(1, keepdim=True).sigmoid()
            out.pow(2).mean().backward()
            results.append((h, out))
        for ours, theirs in zip(results[1], results[0]):
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-12, atol=1e-13, err_msg=str(n))
            assert ours.grad_fn.name() == theirs.grad_fn.name()
        np.testing.assert_allclose(xo.grad.numpy(), x.grad.numpy(), rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(wo.grad.numpy(), w.grad.numpy(), rtol=1e-11, atol=1e-13)
