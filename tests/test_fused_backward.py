"""The whole-graph backward (autograd/fused_backward.py): a repeated backward pass runs as one
compiled function. It must give what the node-by-node engine and real PyTorch give, and step
aside whenever something observable (hooks, errors, retain_grad) depends on running per node."""
import numpy as np
import pytest

import torchish
from torchish.autograd import fused_backward

REPEATS = fused_backward._MIN_REPEATS + 3  # enough backward passes to reach the fused path


def fused_runs():
    return fused_backward.FUSED_RUNS[0]


def _np(t):
    return None if t is None else np.array(t.detach().cpu().numpy())  # a copy: torch aliases


def _mlp_steps(T, zero_grad=True, steps=REPEATS):
    """Backward passes of a small MLP (shared weight use and a diamond included); the grads
    after each pass."""
    T.manual_seed(0)
    w1 = T.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4), requires_grad=True)
    b1 = T.tensor(np.linspace(0, 0.5, 6, dtype=np.float32), requires_grad=True)
    w2 = T.tensor(np.linspace(1, -1, 18, dtype=np.float32).reshape(3, 6), requires_grad=True)
    x = T.tensor(np.linspace(-2, 2, 20, dtype=np.float32).reshape(5, 4))
    y = T.tensor([0, 2, 1, 1, 0])
    out = []
    for _ in range(steps):
        if zero_grad:
            for p in (w1, b1, w2):
                p.grad = None
        h = T.nn.functional.linear(x, w1, b1)
        h = h.relu() + h.sigmoid() * h       # h feeds two branches
        logits = h @ w2.t()
        loss = T.nn.functional.cross_entropy(logits, y) + (w1 * w1).sum() * 1e-2
        loss.backward()
        out.append([_np(p.grad) for p in (w1, b1, w2)])
    return out


@pytest.mark.parametrize("zero_grad", [True, False], ids=["grad-None", "accumulate"])
def test_matches_pytorch(zero_grad):
    torch = pytest.importorskip("torch")
    before = fused_runs()
    ours = _mlp_steps(torchish, zero_grad)
    assert fused_runs() > before  # the later passes took the fused path
    for mine, ref in zip(ours, _mlp_steps(torch, zero_grad)):
        for a, b in zip(mine, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_matches_node_by_node(monkeypatch):
    fused = _mlp_steps(torchish, zero_grad=False)
    monkeypatch.setattr(fused_backward, "try_run", lambda *a: False)
    plain = _mlp_steps(torchish, zero_grad=False)
    for f, p in zip(fused, plain):
        for a, b in zip(f, p):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _linear_grads(seed):
    torchish.manual_seed(seed)
    body = torchish.nn.Sequential(torchish.nn.Linear(4, 16), torchish.nn.ReLU(),
                                  torchish.nn.Linear(16, 2))
    x, y = torchish.randn(8, 4), torchish.randint(0, 2, (8,))
    torchish.nn.functional.cross_entropy(body(x), y).backward()
    return [_np(p.grad) for p in body.parameters()]


def test_bits_equal_node_by_node(monkeypatch):
    # a run resumed from a checkpoint (its passes fused from the start) repeats the
    # uninterrupted one (whose first passes ran node by node) bit for bit, as PyTorch does:
    # the per-node engine computes AddmmBackward0 with its TBackward0 as one kernel
    # (fused_views), where XLA may swap the weight gradient's matmul operands (other bits on
    # AVX2 CPUs), and the fused pass must leave it that freedom too
    plain = [_linear_grads(seed) for seed in range(6)]
    monkeypatch.setattr(fused_backward, "repeats_needed", lambda nodes: 0)
    before = fused_runs()
    fused = [_linear_grads(seed) for seed in range(6)]
    assert fused_runs() == before + 6
    for f, p in zip(fused, plain):
        for a, b in zip(f, p):
            np.testing.assert_array_equal(a, b)


def test_multiple_roots_and_retain_graph():
    x = torchish.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for i in range(REPEATS):
        x.grad = None
        a, b = (x * x).sum(), (x.exp() * 2).sum()
        torchish.autograd.backward([a, b], [torchish.tensor(1.0), torchish.tensor(0.5)],
                                   retain_graph=True)
        np.testing.assert_allclose(_np(x.grad), 2 * _np(x) + np.exp(_np(x)), rtol=1e-6)
        a.backward()  # the retained graph runs again
        np.testing.assert_allclose(_np(x.grad), 4 * _np(x) + np.exp(_np(x)), rtol=1e-6)


def test_graph_freed_after_fused_pass():
    x = torchish.tensor([1.0, 2.0], requires_grad=True)
    before = fused_runs()
    for _ in range(REPEATS):
        y = (x.sin() * x).sum()
        y.backward()
    assert fused_runs() > before
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.backward()


def test_inplace_change_of_saved_tensor_still_raises():
    x = torchish.tensor([1.0, 2.0], requires_grad=True)
    for i in range(REPEATS + 1):
        h = x * 2
        y = h.sin()           # SinBackward0 saves h
        if i == REPEATS:
            h.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
        else:
            y.sum().backward()


@pytest.mark.parametrize("kind", ["tensor hook", "retain_grad", "node hook", "leaf hook"])
def test_hooks_run_every_pass(kind):
    x = torchish.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    before = fused_runs()
    for _ in range(REPEATS):
        x.grad = None
        h = x * 3
        if kind == "tensor hook":
            h.register_hook(lambda g: seen.append(_np(g)))
        elif kind == "retain_grad":
            h.retain_grad()
        elif kind == "node hook":
            h.grad_fn.register_hook(lambda gi, go: seen.append(_np(gi[0])))
        out = (h * h).sum()
        if kind == "leaf hook" and not seen:
            x.register_hook(lambda g: seen.append(_np(g)))
        out.backward()
        if kind == "retain_grad":
            seen.append(_np(h.grad))
        np.testing.assert_allclose(_np(x.grad), 18 * _np(x), rtol=1e-6)
    assert fused_runs() == before   # every pass ran node by node
    assert len(seen) == REPEATS
    expected = 18 * _np(x) if kind in ("node hook", "leaf hook") else 6 * _np(x)
    for g in seen:
        np.testing.assert_allclose(g, expected, rtol=1e-6)


def test_autograd_grad_and_inputs_take_the_engine():
    x = torchish.tensor([1.0, 2.0], requires_grad=True)
    w = torchish.tensor([3.0, 4.0], requires_grad=True)
    before = fused_runs()
    for _ in range(REPEATS):
        (g,) = torchish.autograd.grad((x * w).sum(), [x])
        np.testing.assert_allclose(_np(g), [3.0, 4.0])
        x.grad = w.grad = None
        (x * w).sum().backward(inputs=[w])
        assert x.grad is None
        np.testing.assert_allclose(_np(w.grad), [1.0, 2.0])
    assert fused_runs() == before


def test_new_shapes_give_correct_grads():
    for n in (2, 3, 2, 5, 3, 3, 3, 3):
        x = torchish.ones(n, requires_grad=True)
        for _ in range(REPEATS):
            x.grad = None
            (x * torchish.arange(n, dtype=torchish.float32)).sum().backward()
            np.testing.assert_allclose(_np(x.grad), np.arange(n))


def test_a_pass_that_cannot_compile_runs_node_by_node(monkeypatch):
    def broken(key):
        def run(*args):
            raise ValueError("cannot fuse")  # e.g. leaves on different devices
        return run
    monkeypatch.setattr(fused_backward, "_make_pass", broken)
    monkeypatch.setattr(fused_backward, "_COMPILED", {})
    monkeypatch.setattr(fused_backward, "_SEEN", {})
    before = fused_runs()
    x = torchish.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(REPEATS):
        x.grad = None
        (x * x).sum().backward()
        np.testing.assert_allclose(_np(x.grad), [2.0, 4.0])
    assert fused_runs() == before
    assert list(fused_backward._COMPILED.values()) == [False]


def test_large_graphs_stay_node_by_node(monkeypatch):
    monkeypatch.setattr(fused_backward, "_MAX_NODES", 5)
    x = torchish.tensor([0.5, 1.0], requires_grad=True)
    before = fused_runs()
    for _ in range(REPEATS):
        x.grad = None
        y = x
        for _ in range(6):
            y = y * 2
        y.sum().backward()
        np.testing.assert_allclose(_np(x.grad), [64.0, 64.0])
    assert fused_runs() == before


def _multi_output_steps(T):
    """Multi-output ops (chunk views, max with indices) where only some outputs get a
    gradient, and a leaf used by two ops."""
    x = T.tensor(np.linspace(-1, 2, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    w = T.tensor([0.5, -1.0, 2.0, 1.5], requires_grad=True)
    out = []
    for _ in range(REPEATS):
        x.grad = w.grad = None
        a, b = (x * w).chunk(2, dim=1)          # two views of one product
        values, _ = (a.exp() - w[:2]).max(dim=1)  # indices get no gradient
        loss = values.sum() + (b * b).mean()
        loss.backward()
        out.append([_np(x.grad), _np(w.grad)])
    return out


def test_multi_output_ops_match_pytorch():
    torch = pytest.importorskip("torch")
    before = fused_runs()
    ours = _multi_output_steps(torchish)
    assert fused_runs() > before
    for mine, ref in zip(ours, _multi_output_steps(torch)):
        for a, b in zip(mine, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
