"""`torchish.compile`: a compiled training step leaves exactly the state eager execution does."""
import copy

import numpy as np
import pytest

import torchish as torch
import torchish.nn as nn
import torchish.nn.functional as F

import os, sys  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "examples"))
from models import GPT, LeNet, mlp  # noqa: E402


def _train_step(model, opt, loss_fn):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _assert_state_equal(m1, m2, o1, o2, rtol=2e-5, atol=2e-6):
    for (n1, p1), (n2, p2) in zip(m1.named_parameters(), m2.named_parameters()):
        assert n1 == n2
        np.testing.assert_allclose(p1.detach().numpy(), p2.detach().numpy(), rtol=rtol,
                                   atol=atol, err_msg=n1)
        assert (p1.grad is None) == (p2.grad is None)
        if p1.grad is not None:
            np.testing.assert_allclose(p1.grad.numpy(), p2.grad.numpy(), rtol=1e-4, atol=1e-5,
                                       err_msg=n1)
    for (n1, b1), (n2, b2) in zip(m1.named_buffers(), m2.named_buffers()):
        np.testing.assert_allclose(b1.numpy(), b2.numpy(), rtol=rtol, atol=atol, err_msg=n1)
    s1, s2 = o1.state_dict(), o2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for k in s1["state"]:
        for name, v in s1["state"][k].items():
            w = s2["state"][k][name]
            if isinstance(v, torch.Tensor):
                np.testing.assert_allclose(v.numpy(), w.numpy(), rtol=1e-4, atol=1e-6)
            else:
                assert v == w


MODELS = {
    "mlp_adam": (lambda: mlp(), lambda p: torch.optim.Adam(p, lr=1e-3),
                 lambda: (torch.randn(16, 784), torch.randint(0, 10, (16,)))),
    "lenet_sgd_momentum": (lambda: LeNet(), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
                           lambda: (torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,)))),
    "gpt_adamw": (lambda: GPT(vocab=50, d_model=32, n_head=4, n_layer=2, block=16),
                  lambda p: torch.optim.AdamW(p, lr=3e-3),
                  lambda: (torch.randint(0, 50, (4, 16)), torch.randint(0, 50, (4, 16)))),
}


def _lm_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_step_equals_eager_over_20_steps(name):
    make_model, make_opt, make_batch = MODELS[name]
    torch.manual_seed(0)
    m1 = make_model()
    m2 = copy.deepcopy(m1)
    o1, o2 = make_opt(m1.parameters()), make_opt(m2.parameters())
    loss_fn = _lm_loss if name.startswith("gpt") else F.cross_entropy
    eager = _train_step(m1, o1, loss_fn)
    compiled = torch.compile(_train_step(m2, o2, loss_fn))
    for i in range(20):
        x, y = make_batch()
        l1 = eager(x, y)
        l2 = compiled(x, y)
        np.testing.assert_allclose(l2.item(), l1.item(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"step {i}")
    if name.startswith("gpt"):
        # The key bias of attention has a mathematically zero gradient (softmax ignores a
        # per-row constant); Adam turns its rounding noise into lr-sized steps, so eager and
        # compiled rounding differences show up there. Everything else agrees to ~1e-6.
        _assert_state_equal(m1, m2, o1, o2, rtol=1e-3, atol=1e-3)
    else:
        _assert_state_equal(m1, m2, o1, o2)
    assert len(compiled._compiled.cache) <= 2  # one trace without optimizer state, one with


def test_retrace_on_new_shape_and_dtype():
    calls = []

    @torch.compile
    def f(x):
        calls.append(1)  # runs only while tracing
        return (x * 2).sum()

    assert f(torch.ones(3)).item() == 6
    assert f(torch.ones(3)).item() == 6
    assert len(calls) == 1
    assert f(torch.ones(4)).item() == 8
    assert len(calls) == 2
    assert f(torch.ones(4, dtype=torch.float64)).dtype is torch.float64
    assert len(calls) == 3


def test_compiled_module_forward_is_differentiable():
    torch.manual_seed(0)
    m1 = mlp()
    m2 = copy.deepcopy(m1)
    cm = torch.compile(m2)
    x = torch.randn(5, 784)
    y1, y2 = m1(x), cm(x)
    np.testing.assert_allclose(y2.detach().numpy(), y1.detach().numpy(), rtol=1e-5, atol=1e-6)
    y1.square().sum().backward()
    y2.square().sum().backward()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert "OptimizedModule" in repr(cm)


def test_compiled_module_updates_batchnorm_buffers():
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
    m2 = copy.deepcopy(m1)
    cm = torch.compile(m2)
    for _ in range(3):
        x = torch.randn(6, 4)
        m1(x)
        cm(x)
    np.testing.assert_allclose(m2[1].running_mean.numpy(), m1[1].running_mean.numpy(),
                               rtol=1e-5, atol=1e-6)
    assert m2[1].num_batches_tracked.item() == 3


def test_data_dependent_control_flow_names_the_line():
    @torch.compile
    def f(x):
        if x.sum() > 0:  # data-dependent
            return x
        return -x

    with pytest.raises(RuntimeError, match="test_compile.py:[0-9]+ .*if x.sum\\(\\) > 0"):
        f(torch.ones(2))


def test_compile_accepts_pytorch_keywords_and_decorator_forms():
    @torch.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def f(x):
        return x + 1

    assert f(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert torch.compile(lambda x: x, disable=True)(3) == 3


def test_dropout_in_compiled_code_is_random_but_reproducible():
    @torch.compile
    def f(x):
        return F.dropout(x, 0.5, training=True)

    torch.manual_seed(1)
    a = f(torch.ones(1000))
    b = f(torch.ones(1000))
    torch.manual_seed(1)
    c = f(torch.ones(1000))
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert set(np.unique(a.numpy())) <= {0.0, 2.0}
