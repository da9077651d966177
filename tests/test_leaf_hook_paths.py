"""Leaf tensor hooks where PyTorch runs them: for an undefined gradient (a custom Function's
None; they see None and `.grad` stays None) and on what `autograd.grad` captures."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


class _NoGrad:
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return None


def _function_returning_none(T):
    fn = type("NoGrad", (T.autograd.Function,), dict(vars(_NoGrad)))
    x = T.ones(2, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    x.register_post_accumulate_grad_hook(lambda p: seen.append(("post", p.grad)))
    (fn.apply(x) * 3).sum().backward()
    return seen, x.grad


def test_leaf_hooks_see_an_undefined_gradient():
    assert _function_returning_none(torchish) == _function_returning_none(torch)



def _captured(T, create_graph):
    x = T.tensor([0.0, 2.0, -3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    x.register_post_accumulate_grad_hook(lambda p: seen.append("post"))
    g, = T.autograd.grad((x * x).sum(), x, create_graph=create_graph)
    return seen, g.tolist(), g.requires_grad, x.grad


@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_of_an_autograd_grad_input(create_graph):
    assert _captured(torchish, create_graph) == _captured(torch, create_graph)
