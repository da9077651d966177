"""`torchish.compile` against PyTorch's `torch.compile`: graph breaks on Python values
(`.item()`, `float(t)`, `if t > 0`), gradients of expanded and activation inputs, and the
API's edges."""
import logging
import warnings

import numpy as np
import pytest

import torchish as torch

real = pytest.importorskip("torch")


def _item_if(x):
    y = x * 2
    if y.sum().item() > 0:
        return y + 1
    return y - 1


def _float_if(x):
    y = x * 2
    return y + 1 if float(y.sum()) > 0 else y - 1


def _int_add(x):
    y = x * 2
    return y + int(y.sum())


def _tensor_if(x):
    y = x * 2
    return y + 1 if y.sum() > 0 else y - 1


def _tolist(x):
    y = x * 2
    return y + len(y.tolist())


@pytest.mark.parametrize("fn", [_item_if, _float_if, _int_add, _tensor_if, _tolist])
def test_python_values_break_the_graph_without_a_warning(fn):
    # PyTorch breaks the graph there (no warning; a log record for `.item()`) and the result
    # is eager's, for every sign of the data
    for sign in (1.0, -1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = torch.compile(fn)(torch.full((3,), sign))
        want = fn(real.full((3,), sign))
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_item_break_logs_once_as_pytorch(caplog):
    import torchish._compile_step as step
    step._ITEM_LOGGED.clear()
    with caplog.at_level(logging.WARNING, logger="torchish._dynamo"):
        torch.compile(_item_if)(torch.ones(2))
        torch.compile(_float_if)(torch.ones(2))
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1
    assert logged[0].startswith("Graph break from `Tensor.item()`, consider setting:\n"
                                "    torch._dynamo.config.capture_scalar_outputs = True\n")
    assert "in _item_if\n" in logged[0]


@pytest.mark.parametrize("fn", [_item_if, _float_if, _tensor_if, _tolist])
def test_explain_of_a_python_value_break_matches_pytorch(fn):
    import torch._dynamo   # noqa: F401
    counts = []
    for mod in (real, torch):
        mod._dynamo.reset()
        logging.disable(logging.WARNING)
        try:
            out = mod._dynamo.explain(fn)(mod.ones(3))
        finally:
            logging.disable(logging.NOTSET)
        counts.append((out.graph_count, out.graph_break_count,
                       [r.reason.split("\n")[0] for r in out.break_reasons]))
    assert counts[1] == counts[0]


def _float_add(x):
    return x + float(x.sum())


def _int_slice(x):
    return x[: int(x.sum()) - 1]


@pytest.mark.parametrize("fn", [_float_add, _int_add, _int_slice])
def test_fullgraph_takes_python_numbers_of_tensors_as_pytorch(fn):
    # PyTorch traces them as symbolic numbers; torchish runs that signature eagerly
    got = torch.compile(fn, fullgraph=True)(torch.ones(3))
    np.testing.assert_array_equal(got.numpy(), fn(real.ones(3)).numpy())


# ---- an expanded input: gradients per viewed element, as PyTorch's compiled forward gives ----

def _weighted_sum(x):
    return (x * x * (1 + x.new_ones(x.shape).cumsum(0))).sum()


def _expanded_grads(mod, compiled):
    f = mod.compile(_weighted_sum) if compiled else _weighted_sum
    base = mod.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    f(base.expand(4, 3)).backward()
    leaf = mod.tensor([[0.5, -1.0, 2.0]]).expand(4, 3).requires_grad_()
    f(leaf).backward()
    lin = mod.nn.Linear(3, 2)
    with mod.no_grad():
        lin.weight.copy_(mod.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]]))
        lin.bias.copy_(mod.tensor([0.5, -2.0]))
    base2 = mod.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    m = mod.compile(lin) if compiled else lin
    m(base2.expand(4, 3)).pow(2).sum().backward()
    return [t.detach().numpy() for t in (base.grad, leaf.grad, base2.grad, lin.weight.grad)]


def test_gradients_through_an_expanded_input_match_pytorch():
    # (PyTorch's compiled forward gives its eager gradients: per element of the expanded view)
    want = _expanded_grads(real, False)
    for g, w in zip(_expanded_grads(torch, True), want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5)


def test_a_step_with_backward_inside_gives_an_expanded_leaf_its_own_grad():
    def run(mod, compiled):
        leaf = mod.tensor([[0.5, -1.0, 2.0]]).expand(2, 3).requires_grad_()

        def step():
            _weighted_sum(leaf).backward()
            return leaf.grad.sum()
        s = mod.compile(step) if compiled else step
        s()
        return leaf.grad.numpy()
    np.testing.assert_allclose(run(torch, True), run(real, False), rtol=1e-6)


def _fresh_inputs(mod, compiled):
    """A compiled forward given a new activation each call, and a step (backward inside) given
    a new leaf needing grad each call: the input gradients, and how often each traced."""
    traced = []

    def f(x):
        traced.append("f")
        return (x * x).sum()
    lin = mod.nn.Linear(3, 1)
    with mod.no_grad():
        lin.weight.copy_(mod.tensor([[0.5, -1.0, 2.0]]))
        lin.bias.fill_(0.25)

    def step(x):
        traced.append("step")
        loss = (lin(x) ** 2).sum()
        loss.backward()
        return loss
    g, s = (mod.compile(f), mod.compile(step)) if compiled else (f, step)
    w = mod.tensor([0.5, -1.0, 2.0], requires_grad=True)
    grads = []
    for i in range(3):
        g(w * (i + 1)).backward()
        x = mod.full((2, 3), i + 1.0, requires_grad=True)
        s(x)
        grads += [x.grad.numpy(), lin.weight.grad.numpy().copy()]
    return grads + [w.grad.numpy()], traced


def test_new_activations_and_leaves_each_call_do_not_retrace():
    got, traced = _fresh_inputs(torch, True)
    for g, w in zip(got, _fresh_inputs(real, False)[0]):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # (the step traces again once: the weight's `.grad` exists from the second call on)
    assert traced.count("f") == 1 and traced.count("step") == 2


# ---- the API around compile ------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(mode="reduce-overhead"), dict(dynamic=True),
                                dict(backend="eager"), dict(backend="aot_eager"),
                                dict(backend="inductor", mode="max-autotune")])
def test_compile_accepts_pytorch_settings(kw):
    torch.compiler.reset()
    torch._dynamo.reset()
    assert torch.compile(lambda x: x * 2, **kw)(torch.ones(2)).tolist() == [2.0, 2.0]


def test_disable_decorator_runs_inside_compiled_code():
    calls = []

    @torch.compiler.disable
    def noted(x):
        calls.append(torch.compiler.is_compiling())
        return x + 1
    assert torch.compile(lambda x: noted(x) * 2)(torch.ones(2)).tolist() == [4.0, 4.0]
    assert calls == [False]


def test_recompile_limit_log_text(caplog):
    f = torch.compile(lambda x: x * 2, dynamic=False)
    with torch._dynamo.config.patch(cache_size_limit=2), \
            caplog.at_level(logging.WARNING, logger="torchish._dynamo"):
        for n in (1, 2, 3, 4):
            assert f(torch.ones(n)).tolist() == [2.0] * n
    logged = [r.getMessage().split("\n") for r in caplog.records]
    assert len(logged) == 1
    lines = logged[0]
    assert lines[0] == "torch._dynamo hit config.recompile_limit (2)"
    assert lines[1].startswith("   function: '<lambda>' (")
    assert lines[3] == 'To log all recompilation reasons, use TORCH_LOGS="recompiles".'
    assert lines[4].startswith("To diagnose recompilation issues, see https://")


def test_graph_break_counters_as_pytorch():
    import torch._dynamo.utils   # noqa: F401
    breaks = []
    for mod in (real, torch):
        mod._dynamo.reset()   # (PyTorch keeps the code it compiled for `_item_if` before)
        counts = mod._dynamo.utils.counters["graph_break"]
        before = sum(counts.values())
        logging.disable(logging.WARNING)
        try:
            f = mod.compile(_item_if, backend="eager")   # (PyTorch: no inductor compile)
            f(mod.ones(3)), f(-mod.ones(3)), f(mod.ones(3))
            mod.compile(lambda x: x * 3, backend="eager")(mod.ones(2))
        finally:
            logging.disable(logging.NOTSET)
        breaks.append(sum(counts.values()) - before)
    assert breaks[1] == breaks[0] == 1


# ---- a `disable`d function breaks the graph: it runs on every call ---------------------------

def _disabled_calls(mod, **kw):
    mod._dynamo.reset()   # (PyTorch keeps the code it compiled for the lambda below)
    calls = []

    @mod.compiler.disable
    def side(x):
        calls.append(mod.compiler.is_compiling())
        return x + 1

    @mod._dynamo.disable
    def side2(x):
        calls.append("side2")
        return x * 3

    f = mod.compile(lambda x: side2(side(x.sin())).cos(), backend="eager", **kw)
    outs = [f(mod.full((2,), float(i))).tolist() for i in range(3)]
    return outs, calls


def test_disabled_function_runs_eagerly_on_every_call():
    import torch._dynamo   # noqa: F401
    got, want = _disabled_calls(torch), _disabled_calls(real)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert got[1] == want[1] == [False, "side2"] * 3


def test_disabled_function_with_fullgraph_is_unsupported():
    import torch._dynamo   # noqa: F401
    errors = []
    for mod in (real, torch):
        with pytest.raises(mod._dynamo.exc.Unsupported) as info:
            _disabled_calls(mod, fullgraph=True)
        errors.append(str(info.value).split("\n")[:3])
    first = [line.split(" at 0x")[0] for line in errors[1]]
    assert first == [line.split(" at 0x")[0] for line in errors[0]]


# ---- backward inside a compiled step, into the eager graph an argument carries ---------------

def _two_models(mod, compiled):
    mod.manual_seed(0)
    a, b = mod.nn.Linear(3, 4), mod.nn.Linear(4, 2)
    with mod.no_grad():
        for p in (*a.parameters(), *b.parameters()):
            p.copy_(mod.linspace(-1, 1, p.numel()).reshape(p.shape))
    opt = mod.optim.SGD([*a.parameters(), *b.parameters()], lr=0.1)

    def step(h):
        loss = b(h).pow(2).sum()
        loss.backward()
        return loss
    if compiled:
        step = mod.compile(step, **({} if mod is torch else {"backend": "aot_eager"}))
    out = []
    for i in range(2):
        opt.zero_grad()
        h = a(mod.arange(6.0).reshape(2, 3) / 6 + i).relu()   # eager: h carries a's graph
        loss = step(h)
        out += [loss.item(), a.weight.grad.numpy().copy(), b.weight.grad.numpy().copy()]
        opt.step()
    return out + [a.weight.detach().numpy()]


def test_backward_inside_a_step_reaches_the_graph_of_an_argument():
    for g, w in zip(_two_models(torch, True), _two_models(real, True)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


# ---- torch._dynamo.utils.counters["stats"] ---------------------------------------------------

def _stats(mod):
    import torch._dynamo.utils   # noqa: F401
    counters = mod._dynamo.utils.counters
    counters.clear()
    mod._dynamo.reset()
    f = mod.compile(lambda x, y: ((x.sin() * y + 1).relu().sum(), (x * y).t()),
                    backend="eager")
    f(mod.ones(2, 3), mod.ones(3))
    f(mod.ones(2, 3), mod.ones(3))
    return dict(counters["stats"])


def test_stats_count_graphs_and_captured_calls():
    assert _stats(torch) == _stats(real)
