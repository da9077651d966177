"""`torch.utils.checkpoint` against real PyTorch: which backward passes each variant allows."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(T, reentrant, how):
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
    x = T.randn(5, 3, requires_grad=True)
    out = T.utils.checkpoint.checkpoint(net, x, use_reentrant=reentrant).sum()
    try:
        if how == "grad":
            res = T.autograd.grad(out, x)[0]
        elif how == "inputs":
            out.backward(inputs=[x])
            res = x.grad
        else:
            out.backward()
            res = net[0].weight.grad
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return [round(v, 5) for v in res.flatten().tolist()]


@pytest.mark.parametrize("how", ["grad", "inputs", "backward"])
@pytest.mark.parametrize("reentrant", [True, False])
def test_reentrant_checkpoint_refuses_partial_backward(reentrant, how):
    # the reentrant variant's inner backward would accumulate into every leaf
    assert _outcome(torchish, reentrant, how) == _outcome(torch, reentrant, how)


def _validity_seen(T):
    seen = []

    class Probe(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(T.autograd._is_checkpoint_valid())
            return g * 2

    a = T.ones(2, requires_grad=True)
    Probe.apply(a).sum().backward()
    T.autograd.grad(Probe.apply(a).sum(), a)
    Probe.apply(a).sum().backward(inputs=[a])
    return seen, T.autograd._is_checkpoint_valid()


def test_is_checkpoint_valid():
    assert _validity_seen(torchish) == _validity_seen(torch) == ([True, False, False], True)
