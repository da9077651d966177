"""`torch.autograd.graph` beyond the engine, against real PyTorch: register_multi_grad_hook,
GradientEdge / get_gradient_edge (also as `autograd.grad` inputs), increment_version."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _multi_grad_hook_log(T):
    T.manual_seed(0)
    a, b, c = (T.randn(3, requires_grad=True) for _ in range(3))
    seen, any_seen = [], []
    h = T.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: seen.append([g is not None for g in grads]))
    (a * 2 + b).sum().backward()
    (c * 3).sum().backward()
    h.remove()
    (a * 2).sum().backward()
    T.autograd.graph.register_multi_grad_hook((a, b), lambda g: any_seen.append(g.tolist()),
                                              mode="any")
    (a + b * 2).sum().backward()
    return seen, any_seen


def test_register_multi_grad_hook():
    assert _multi_grad_hook_log(torchish) == _multi_grad_hook_log(torch)
    with pytest.raises(ValueError, match="Expects mode to be one of"):
        torchish.autograd.graph.register_multi_grad_hook([], print, mode="some")


def test_gradient_edges():
    facts = []
    for T in (torchish, torch):
        x = T.ones(3, requires_grad=True)
        y = x * 2
        edge = T.autograd.graph.get_gradient_edge(y)
        g, = T.autograd.grad((y * 3).sum(), [edge])
        facts.append((type(edge).__name__, edge.node.name(), edge.output_nr,
                      T.autograd.graph.get_gradient_edge(x).node.name(), g.tolist()))
        with pytest.raises(RuntimeError, match="does not require gradients"):
            T.autograd.graph.get_gradient_edge(T.ones(2))
    assert facts[0] == facts[1]


def test_increment_version():
    versions = []
    for T in (torchish, torch):
        t = T.ones(2)
        before = t._version
        T.autograd.graph.increment_version(t)
        versions.append(t._version - before)
    assert versions == [1, 1]
