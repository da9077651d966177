"""`torchish.compile` against PyTorch's `torch.compile`: Python control flow on `float(t)` and
`int(t)` with `fullgraph=True`, `torch._dynamo.explain`'s op counts after a break that stops
the trace, and view arguments (slices of a dataset, rows of a weight, expanded leaves) taken
per call without retracing."""
import importlib
import logging

import numpy as np
import pytest

import torchish as torch

real = pytest.importorskip("torch")
importlib.import_module("torch._dynamo.utils")


def _float_if(x):
    y = x * 2
    if float(y.sum()) > 0:
        return y + 1
    return y - 1


def _int_if(x):
    y = x * 2
    return y + 1 if int(y.sum()) >= 1 else y - 1


def _float_scaled_if(x):
    s = float(x.sum()) * 2 + 1
    return x * s if s > 2 else x


@pytest.mark.parametrize("fn", [_float_if, _int_if, _float_scaled_if])
def test_fullgraph_branch_on_a_python_number_of_a_tensor_raises_as_pytorch(fn):
    errors = []
    for mod in (real, torch):
        mod._dynamo.reset()
        with pytest.raises(Exception) as info:
            mod.compile(fn, fullgraph=True, backend="eager")(mod.ones(3))
        errors.append(info.value)
    want, got = errors
    assert type(got).__name__ == type(want).__name__ == "UserError"
    head = "Consider annotating your code using torch._check*(). Could not guard on " \
           "data-dependent expression"
    assert str(want).startswith(head) and str(got).startswith(head)
    assert got.user_stack[-1].name == fn.__name__


def _float_math(x):
    n = int(x.sum())
    return x[: n - 1] * float(x.max())


def test_fullgraph_arithmetic_on_a_python_number_of_a_tensor_still_runs():
    # PyTorch traces these symbolically; torchish runs the signature eagerly, same results
    want = real.compile(_float_math, fullgraph=True, backend="eager")(real.arange(4.0))
    got = torch.compile(_float_math, fullgraph=True)(torch.arange(4.0))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- explain: counts after a break that stops the trace --------------------------------------

def _jump(x):
    y = x * 2
    y = y + 1
    if y.sum() > 0:
        return y.sin() * 3
    return y.cos()


def _printed(x):
    y = x * 2 + 1
    print("value", y)
    return y.exp() * 2


def _explain(mod, fn):
    mod._dynamo.reset()
    logging.disable(logging.WARNING)
    try:
        return mod._dynamo.explain(fn)(mod.ones(3))
    finally:
        logging.disable(logging.NOTSET)


@pytest.mark.parametrize("fn", [_jump, _printed])
def test_explain_counts_ops_past_a_stop(fn, capsys):
    want, got = _explain(real, fn), _explain(torch, fn)
    assert (got.graph_count, got.graph_break_count) == (want.graph_count,
                                                        want.graph_break_count)
    # PyTorch counts only the FX graph's function calls (`*`, `+`, `>`), not its method calls
    # (`.sum()`, `.sin()`); torchish counts every op, on both sides of the break
    assert len(got.ops_per_graph) == len(want.ops_per_graph) == 2
    assert all(len(g) >= len(w) for g, w in zip(got.ops_per_graph, want.ops_per_graph))
    assert got.op_count == sum(map(len, got.ops_per_graph)) >= want.op_count > 0
    assert got.ops_per_graph[0][:2] == ["mul", "add"]
    assert "mul" in got.ops_per_graph[1]


# ---- view arguments: read per call, as PyTorch takes every tensor argument as an input -------

def _weighted(a):
    return (a * a * a.detach().new_ones(a.shape).cumsum(0)).sum()


def _view_calls(mod, backend):
    counters = mod._dynamo.utils.counters
    counters.clear()
    mod._dynamo.reset()
    f = mod.compile(_weighted, **backend)
    data = mod.arange(12.0).reshape(4, 3)
    out = [f(data[i]).item() for i in range(3)]            # rows of a dataset tensor
    w = (mod.arange(12.0).reshape(4, 3) / 3).requires_grad_()
    for i in range(2):
        f(w[i]).backward()                                 # rows of a leaf needing grad
        f(w.t()[i]).backward()                             # columns: strided views
    b = mod.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    for _ in range(2):
        f(b.expand(4, 3)).backward()                       # an element read four times
    graphs = counters["stats"]["unique_graphs"]
    leaf = mod.tensor([[0.5, -1.0, 2.0]]).expand(4, 3).requires_grad_()
    f(leaf).backward()                                     # a leaf that is a view
    return out, w.grad.tolist(), b.grad.tolist(), leaf.grad.tolist(), graphs


def test_new_view_arguments_each_call_do_not_retrace():
    want = _view_calls(real, dict(backend="aot_eager"))
    got = _view_calls(torch, {})
    assert got[:4] == want[:4]
    # PyTorch compiles a signature per length and grad mode (without, 3; with, 3 and 4):
    # so does torchish (and one more for the leaf view, as for any leaf argument)
    assert got[4] == want[4] == 4


def _write_through(mod):
    buf = mod.zeros(4, 3)
    f = mod.compile(lambda a: a.add_(1).sum(), backend="eager") if mod is real \
        else mod.compile(lambda a: a.add_(1).sum())
    sums = [f(buf[1]).item(), f(buf[2]).item(), f(buf[2]).item()]
    base = mod.zeros(2, 3)
    g = mod.compile(lambda a, b: (a.mul_(2) + b).sum(), backend="eager") if mod is real \
        else mod.compile(lambda a, b: (a.mul_(2) + b).sum())
    base[0] = 1
    return sums, buf.tolist(), g(base[0], base).item(), base.tolist()


def test_an_in_place_write_to_a_view_argument_reaches_its_base():
    assert _write_through(torch) == _write_through(real)
