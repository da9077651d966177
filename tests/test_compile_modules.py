"""Compiled modules whose state changes between calls, against PyTorch's `torch.compile`:
forward hooks and pre-hooks registered before and after compiling, `train()`/`eval()`
switches (dropout, BatchNorm), a parameter replaced, `requires_grad` toggled (a layer frozen
mid-training). Results, gradients and the number of compiled graphs match."""
import importlib

import numpy as np
import pytest

import torchish as torch

real = pytest.importorskip("torch")
importlib.import_module("torch._dynamo.utils")


def _compile(mod, m):
    mod._dynamo.utils.counters.clear()
    mod._dynamo.reset()
    return mod.compile(m, backend="aot_eager") if mod is real else mod.compile(m)


def _graphs(mod):
    return mod._dynamo.utils.counters["stats"]["unique_graphs"]


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, (list, float)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
        else:
            assert g == w


def _x(mod):
    return mod.arange(6.0).reshape(2, 3) / 5 - 0.3


def _hooks(mod):
    mod.manual_seed(0)
    m = mod.nn.Sequential(mod.nn.Linear(3, 3), mod.nn.Tanh(), mod.nn.Linear(3, 1))
    m[0].register_forward_hook(lambda mod_, i, o: o * 2)           # before compiling
    c = _compile(mod, m)
    m[2].register_forward_pre_hook(lambda mod_, i: (i[0] + 1,))    # after, before a call
    outer = []
    c.register_forward_hook(lambda mod_, i, o: outer.append(1) or o - 5)   # on the wrapper
    y1 = c(_x(mod))
    inner = []
    handle = m.register_forward_hook(lambda mod_, i, o: inner.append(1) or o * 10)
    y2 = c(_x(mod))   # PyTorch: hooks added after a call are not guarded (not run)
    handle.remove()
    y3 = c(_x(mod))
    y3.sum().backward()
    return (y1.tolist(), y2.tolist(), y3.tolist(), len(outer), len(inner),
            m[0].weight.grad.tolist(), y3.grad_fn.name(), _graphs(mod))


def _modes(mod):
    mod.manual_seed(0)
    m = mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.BatchNorm1d(4), mod.nn.Dropout(0.5))
    c = _compile(mod, m)
    x = _x(mod)
    c(x)                       # train: dropout masks differ between eager and compiled code
    m.eval()
    y_eval = c(x)
    m.train()
    c(x)
    c.eval()                   # through the wrapper
    y_eval2 = c(x)
    y_eval2.sum().backward()
    bn = m[1]
    return (y_eval.tolist(), y_eval2.tolist(), bn.running_mean.tolist(),
            bn.running_var.tolist(), int(bn.num_batches_tracked), m.training, c.training,
            m[0].weight.grad.tolist(), _graphs(mod))


def _replaced(mod):
    mod.manual_seed(0)
    m = mod.nn.Sequential(mod.nn.Linear(3, 2))
    c = _compile(mod, m)
    c(_x(mod)).sum().backward()
    m[0].weight = mod.nn.Parameter(mod.arange(6.0).reshape(2, 3) / 4)
    y = c(_x(mod))
    y.sum().backward()
    return y.tolist(), m[0].weight.grad.tolist(), m[0].bias.grad.tolist(), _graphs(mod)


def _frozen(mod):
    mod.manual_seed(0)
    m = mod.nn.Sequential(mod.nn.Linear(3, 3), mod.nn.Tanh(), mod.nn.Linear(3, 1))
    opt = mod.optim.SGD(m.parameters(), lr=0.1)
    c = _compile(mod, m)
    out = []
    for i in range(4):
        if i == 2:
            m[0].requires_grad_(False)          # freeze the first layer
        if i == 3:
            m[0].weight.requires_grad_(True)    # thaw its weight only
        opt.zero_grad()
        loss = c(_x(mod)).pow(2).sum()
        loss.backward()
        opt.step()
        out += [loss.item(), [None if p.grad is None else p.grad.tolist()
                              for p in m.parameters()]]
    return out + [[p.tolist() for p in m.parameters()], _graphs(mod)]


@pytest.mark.parametrize("case", [_hooks, _modes, _replaced])
def test_compiled_module_follows_its_state_as_pytorch(case):
    _close(case(torch), case(real))


def test_freezing_a_layer_between_compiled_calls_as_pytorch():
    got, want = _frozen(torch), _frozen(real)
    assert got[-1] == want[-1] == 3    # PyTorch recompiles on the requires_grad guards
    for g, w in zip(got[:-1], want[:-1]):
        if isinstance(w, list):
            assert [x is None for x in g] == [x is None for x in w]
            _close([x for x in g if x is not None], [x for x in w if x is not None])
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5)
