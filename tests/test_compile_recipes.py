"""PyTorch's compile recipes against `torchish.compile`: a compiled `opt.step()` after an eager
backward with a Tensor `lr` a scheduler changes (no recompile), `state_dict()` of a compiled
module and loading it back, `torch.compiler.disable` on a submodule's forward, and varying
batch sizes with `dynamic=True`/`mark_dynamic`."""
import importlib
import logging

import numpy as np
import pytest

import torchish as torch

real = pytest.importorskip("torch")
importlib.import_module("torch._dynamo.utils")


def _backend(mod, name="aot_eager"):
    return dict(backend=name) if mod is real else {}


def _graphs(mod):
    return mod._dynamo.utils.counters["stats"]["unique_graphs"]


def _compiled_optimizer_step(mod, opt_cls):
    mod.manual_seed(0)
    m = mod.nn.Linear(3, 2)
    with mod.no_grad():
        m.weight.copy_(mod.tensor([[0.5, -0.25, 0.75], [-1.0, 0.5, 0.25]]))
    opt = opt_cls(mod, m.parameters())
    sched = mod.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    @mod.compile(fullgraph=False, **_backend(mod, "eager"))
    def opt_step():
        opt.step()

    mod._dynamo.utils.counters.clear()
    mod._dynamo.reset()
    x = mod.arange(6.0).reshape(2, 3) / 5
    for _ in range(3):
        m(x).pow(2).sum().backward()
        opt_step()
        sched.step()
        opt.zero_grad()
    state = [{k: np.asarray(v) for k, v in s.items()}
             for s in opt.state_dict()["state"].values()]
    return m.weight.tolist(), float(opt.param_groups[0]["lr"]), state, _graphs(mod)


@pytest.mark.parametrize("opt_cls", [
    lambda mod, p: mod.optim.Adam(p, lr=mod.tensor(0.01)),
    lambda mod, p: mod.optim.AdamW(p, lr=mod.tensor(0.01), weight_decay=0.1),
], ids=["adam", "adamw"])
def test_compiled_optimizer_step_with_a_tensor_lr_compiles_once(opt_cls):
    want = _compiled_optimizer_step(real, opt_cls)
    got = _compiled_optimizer_step(torch, opt_cls)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-7)
    assert got[1] == want[1]
    for g, w in zip(got[2], want[2]):
        assert g.keys() == w.keys()
        for k in g:
            np.testing.assert_allclose(g[k], w[k], rtol=1e-5, atol=1e-7)
    # PyTorch creates the optimizer's state before tracing its step, and the scheduler's new
    # `lr` is an input: one graph for all three calls; so does torchish
    assert got[3] == want[3] == 1


def _state_dicts(mod):
    mod.manual_seed(0)
    m = mod.nn.Sequential(mod.nn.Linear(3, 2), mod.nn.BatchNorm1d(2))
    c = mod.compile(m, **_backend(mod))
    c(mod.ones(4, 3))
    sd = c.state_dict()
    plain = mod.nn.Sequential(mod.nn.Linear(3, 2), mod.nn.BatchNorm1d(2))
    errors = []
    for target, source in ((plain, sd), (c, plain.state_dict())):
        try:
            target.load_state_dict(source)
        except RuntimeError as exc:
            errors.append(str(exc))
    stripped = {k.removeprefix("_orig_mod."): v for k, v in sd.items()}
    plain.load_state_dict(stripped)
    c.load_state_dict({"_orig_mod." + k: v * 2 for k, v in plain.state_dict().items()})
    return (list(sd), errors, c._orig_mod is m, type(c).__name__,
            m[0].weight.tolist() == (plain[0].weight * 2).tolist()), c(mod.ones(4, 3)).tolist()


def test_state_dict_of_a_compiled_module_as_pytorch():
    (ours, ours_out), (theirs, theirs_out) = _state_dicts(torch), _state_dicts(real)
    assert ours == theirs
    # equal rows: BatchNorm's output is rounding noise around 0
    np.testing.assert_allclose(ours_out, theirs_out, atol=1e-5)


class _Net:
    @staticmethod
    def make(mod):
        class Net(mod.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = mod.nn.Linear(3, 3), mod.nn.Linear(3, 1)

            def forward(self, x):
                return self.b(self.a(x).relu())
        return Net()


def _disabled_submodule(mod):
    mod.manual_seed(0)
    net = _Net.make(mod)
    seen = []
    forward = net.a.forward

    def noted(x):
        seen.append(mod.compiler.is_compiling())
        return forward(x)
    net.a.forward = mod.compiler.disable(noted)
    c = mod.compile(net, **_backend(mod))
    x = mod.arange(6.0).reshape(2, 3) / 5
    ys = [c(x), c(x)]
    ys[1].sum().backward()
    return ([y.tolist() for y in ys], net.a.weight.grad.tolist(), net.b.weight.grad.tolist(),
            ys[1].grad_fn.name(), seen)


def test_disable_on_a_submodule_forward():
    got, want = _disabled_submodule(torch), _disabled_submodule(real)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    # a graph break: PyTorch compiles the parts around it, torchish runs the forward eagerly
    # (the README says so), so the result's grad_fn is the eager one
    assert (got[3], want[3]) == ("AddmmBackward0", "CompiledFunctionBackward")
    # not compiling inside, and run on every call
    assert got[4] == want[4] == [False, False]


def _batch_sizes(mod, how):
    mod.manual_seed(0)
    lin = mod.nn.Linear(3, 2)
    f = mod.compile(lambda t: lin(t).tanh(), dynamic=True if how == "dynamic" else None,
                    **_backend(mod, "eager"))
    mod._dynamo.utils.counters.clear()
    mod._dynamo.reset()
    outs = []
    for n in (2, 3, 5, 3):
        t = mod.arange(n * 3.0).reshape(n, 3) / 7
        if how == "mark":
            mod._dynamo.mark_dynamic(t, 0)
        outs.append(f(t).tolist())
    return outs, _graphs(mod)


@pytest.mark.parametrize("how", ["dynamic", "mark", "default"])
def test_varying_batch_sizes_match_eager(how):
    logging.disable(logging.WARNING)
    try:
        want, want_graphs = _batch_sizes(real, how)
        got, graphs = _batch_sizes(torch, how)
    finally:
        logging.disable(logging.NOTSET)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    # PyTorch: one graph with a symbolic batch size (two without a hint: static, then
    # automatic dynamic); torchish: one executable per shape (the README says so)
    assert want_graphs == (2 if how == "default" else 1)
    assert graphs == 3
