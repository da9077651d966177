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


def _identity_hook(*args):
    return None


def _handles(T):
    """Every kind of hook registration, each returning PyTorch's one handle class."""
    x = T.ones(2, requires_grad=True)
    y = x * 2
    m = T.nn.Linear(2, 2)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    return {"tensor": x.register_hook(_identity_hook), "nonleaf": y.register_hook(_identity_hook),
            "node": y.grad_fn.register_hook(_identity_hook),
            "node_pre": y.grad_fn.register_prehook(_identity_hook),
            "accumulate": x.register_post_accumulate_grad_hook(_identity_hook),
            "module": m.register_forward_hook(_identity_hook),
            "optimizer": opt.register_step_pre_hook(_identity_hook),
            "multi": T.autograd.graph.register_multi_grad_hook((x,), _identity_hook)}


def test_every_hook_registration_returns_removable_handle():
    import pickle

    def summary(T):
        top = T.__name__
        return {k: (type(h).__module__.replace(top, "torch"), type(h).__name__,
                    isinstance(h, T.utils.hooks.RemovableHandle)) for k, h in _handles(T).items()}
    ours = summary(torchish)
    assert ours == summary(torch)
    assert ours["tensor"] == ("torch.utils.hooks", "RemovableHandle", True)
    for T in (torchish, torch):
        m = T.nn.Linear(2, 2)
        h = m.register_forward_hook(_identity_hook)
        m2, again = pickle.loads(pickle.dumps((m, h)))
        assert type(again) is T.utils.hooks.RemovableHandle and again.id == h.id
        assert list(m2._forward_hooks.values()) == [_identity_hook]
        again.remove()
        assert len(m2._forward_hooks) == 0 and len(m._forward_hooks) == 1


def _removal_log(T):
    x = T.ones(2, requires_grad=True)
    calls = []
    with x.register_hook(lambda g: calls.append("tensor")):
        y = x * 3
        h_node = y.grad_fn.register_hook(lambda gi, go: calls.append("node"))
        h_pre = y.grad_fn.register_prehook(lambda go: calls.append("pre"))
        y.sum().backward(retain_graph=True)
    h_node.remove()
    y.sum().backward(retain_graph=True)
    h_pre.remove()
    h_pre.remove()   # a second remove does nothing
    y.sum().backward()

    def remove_myself(g):
        calls.append("once")
        handle.remove()
    handle = x.register_hook(remove_myself)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    return calls, x.grad.tolist()


def test_hook_handles_remove_their_hook():
    assert _removal_log(torchish) == _removal_log(torch)


def _multi_hook_timing(T):
    # mode "all" fires as soon as the last gradient the pass computes is ready
    a, b = T.ones(2, requires_grad=True), T.ones(2, requires_grad=True)
    order = []
    T.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grads: order.append(["all"] + [g is not None for g in grads]))
    b.register_hook(lambda g: order.append("b hook"))
    (b * 5).sum().backward()
    (a.exp() * 2).sum().backward()
    return order


def test_multi_grad_hook_fires_when_the_last_gradient_is_ready():
    assert _multi_hook_timing(torchish) == _multi_hook_timing(torch)


def _node_api(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    s = (x * 2).sum()
    out = [repr(s.grad_fn(T.tensor(1.0))), repr(s.grad_fn.next_functions[0][0](T.ones(2))),
           (x * 2).grad_fn._sequence_nr() < (x * 3).grad_fn._sequence_nr(),
           x[1:]._is_view(), x._is_view()]
    for t in (x * 2, T.ones(2)):
        try:
            t.register_post_accumulate_grad_hook(lambda p: None)
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_node_call_sequence_nr_and_post_accumulate_hook_errors():
    assert _node_api(torchish) == _node_api(torch)
