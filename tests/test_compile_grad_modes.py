"""Grad modes inside `torchish.compile`: the compiled backward (one `jax.vjp` of the traced
step) must reach exactly what PyTorch's tape reaches. Each snippet runs in real PyTorch
(eagerly: PyTorch's compiled functions give the same gradients), eagerly in torchish and
compiled in torchish; the results' values, `requires_grad`, `grad_fn` presence and the
parameters' `.grad` (None or values) must agree."""
import numpy as np
import pytest

import torchish

real = pytest.importorskip("torch")

CASES = {
    "no_grad_view": "with T.no_grad():\n    v = w[:2]\nreturn (v * b * x).sum()",
    "no_grad_mul": "with T.no_grad():\n    v = w[:2] * 1\nreturn (v * b * x).sum()",
    "detach": "return (w[:2].detach() * b * x).sum()",
    "detach_then_view": "return (w.detach()[:2] * b).sum()",
    "inference_mode": "with T.inference_mode():\n    v = w[:2] * 2\nreturn (b + v).sum()",
    "inference_mode_clone": "with T.inference_mode():\n    v = w[:2] * 2\n"
                            "return (b * v.clone()).sum()",
    "set_grad_enabled_false": "with T.set_grad_enabled(False):\n    v = w[:2].exp()\n"
                              "return (v * b).sum()",
    "enable_grad_inside_no_grad": "with T.no_grad():\n    with T.enable_grad():\n"
                                  "        v = w[:2] * 2\n    u = w[1:] * 3\n"
                                  "return (v * b + u).sum()",
    "result_made_under_no_grad": "with T.no_grad():\n    return w[:2] * b",
    "no_grad_of_graph_value": "y = w * 2\nwith T.no_grad():\n    z = y * 3\nreturn z + b.sum()",
    "requires_grad_false_mid": "v = w.detach()\nv.requires_grad_(False)\n"
                               "return (v[:2] * b).sum()",
    "new_leaf_inside": "v = w.detach() * 1\nv.requires_grad_()\nreturn (v[:2] * b).sum()",
    "retain_grad_local": "y = w * 2\ny.retain_grad()\nreturn (y[:2] * b).sum()",
    "tensor_hook": "y = w * 2\ny.register_hook(lambda g: g * 10)\nreturn (y[:2] * b).sum()",
    "data_read": "return (w.data[:2] * b).sum()",
    "scalar_from_no_grad": "with T.no_grad():\n    s = w.sum()\nreturn b * s",
    "argmax_index": "i = w.argmax()\nreturn b[0] * i + (b * 2).sum()",
    "integer_cast": "k = (w * 2).long()\nreturn (b * k[:2]).sum()",
    "no_grad_inplace_on_copy": "with T.no_grad():\n    c = w.clone()\n    c.mul_(2)\n"
                               "return (c[:2] * b).sum()",
    "where_mask": "m = w > 0.5\nreturn T.where(m[:2], b, b * 2).sum()",
    "autograd_grad_create_graph": "y = (w * w).sum()\n"
                                  "g, = T.autograd.grad(y, w, create_graph=True)\n"
                                  "return (g[:2] * b).sum()",
    "autograd_grad": "y = (w * w).sum()\ng, = T.autograd.grad(y, w)\nreturn (g[:2] * b).sum()",
    "no_grad_decorator": "@T.no_grad()\ndef h(t):\n    return t * 2\nreturn (h(w)[:2] * b).sum()",
    "detach_and_graph": "return (w.detach() * w).sum() + b.sum()",
    "no_grad_plus_graph": "with T.no_grad():\n    s = w * 5\nreturn (s + w).sum() + b.sum()",
    "stack_under_no_grad": "with T.no_grad():\n    s = T.stack([w, w])\n"
                           "return (s.sum(0)[:2] * b).sum()",
    "clone_detach": "return (w.clone().detach()[:2] * b).sum()",
    "requires_grad_seen": "with T.no_grad():\n    v = w * 1\n"
                          "return (b * float(v.requires_grad) + b).sum()",
    "detach_inplace": "y = w * 2\ny.detach_()\nreturn (y[:2] * b).sum()",
    "no_grad_inplace_on_leaf": "with T.no_grad():\n    w.mul_(2)\nreturn (w[:2] * b).sum()",
    "no_grad_setitem_on_leaf": "with T.no_grad():\n    w[0] = 7\nreturn (w * w).sum() + b.sum()",
    "backward_inside_then_no_grad": "with T.no_grad():\n    v = w * 3\n"
                                    "(v[:2] * b).sum().backward()\nreturn b * 1",
}

XFAIL = {}


def _build(mod, src):
    g = {"T": mod}
    exec("def f(x, w, b):\n" + "\n".join("    " + line for line in src.split("\n")), g)
    return g["f"]


def _run(mod, src, compiled):
    w = mod.tensor([0.5, 1.5, 2.5], requires_grad=True)
    b = mod.tensor([1.0, 2.0], requires_grad=True)
    x = mod.tensor([1.0, 3.0])
    f = _build(mod, src)
    if compiled:
        f = mod.compile(f)
    out = f(x, w, b)
    info = [np.asarray(out.detach().tolist()).round(4).tolist(), out.requires_grad,
            out.grad_fn is not None]
    if out.requires_grad:
        out.sum().backward()
    info += [None if p.grad is None else np.asarray(p.grad.tolist()).round(4).tolist()
             for p in (w, b)]
    info.append(np.asarray(w.detach().tolist()).round(4).tolist())
    return info


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason=XFAIL[n])) if n in XFAIL else n for n in CASES])
def test_snippet(name):
    src = CASES[name]
    expected = _run(real, src, False)
    assert _run(torchish, src, False) == expected
    assert _run(torchish, src, True) == expected


class _Scaled:
    """A module whose forward uses its weight only under no_grad (a running statistic)."""

    @staticmethod
    def make(mod):
        class M(mod.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = mod.nn.Parameter(mod.tensor([0.5, 1.5]))
                self.b = mod.nn.Parameter(mod.tensor([1.0, 2.0]))

            def forward(self, x):
                with mod.no_grad():
                    s = self.w * 2
                return (s * self.b * x).sum()
        return M()


@pytest.mark.parametrize("grad", [True, False])
def test_compiled_module_no_grad_inside(grad):
    def run(mod, compiled):
        m = _Scaled.make(mod)
        f = mod.compile(m) if compiled else m
        with mod.set_grad_enabled(grad):
            out = f(mod.tensor([1.0, 3.0]))
        info = [round(float(out), 4), out.requires_grad, out.grad_fn is not None]
        if out.requires_grad:
            out.backward()
        return info + [None if p.grad is None else p.grad.tolist() for p in (m.w, m.b)]
    expected = run(real, False)
    assert run(torchish, False) == expected
    assert run(torchish, True) == expected


def test_autograd_grad_fullgraph_is_unsupported():
    # PyTorch breaks the graph at `torch.autograd.grad` (trace_autograd_ops is off)
    def f(w):
        y = (w * w).sum()
        return torchish.autograd.grad(y, w)[0] * 2
    w = torchish.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(torchish._dynamo.exc.Unsupported) as info:
        torchish.compile(f, fullgraph=True)(w)
    assert str(info.value).startswith(
        "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`\n"
        "  Explanation: Attempted to call `torch.autograd.grad` with config "
        "`torch._dynamo.config.trace_autograd_ops` set to `False`.\n")
    assert torchish.compile(f)(w).tolist() == [4.0, 8.0]   # (without fullgraph: eagerly)


def test_tensor_hook_fullgraph_runs():
    # PyTorch traces the hook with fullgraph=True; torchish runs the step eagerly, silently
    def f(w):
        y = w * 2
        y.register_hook(lambda g: g * 10)
        return y.sum()
    w = torchish.tensor([1.0, 2.0], requires_grad=True)
    torchish.compile(f, fullgraph=True)(w).backward()
    assert w.grad.tolist() == [20.0, 20.0]


def test_no_grad_constant_repeat_calls():
    # the cached signature keeps the constant (second call: no retrace)
    w = torchish.ones(3, requires_grad=True)
    b = torchish.ones(2, requires_grad=True)

    def f(x):
        with torchish.no_grad():
            v = w[:2] * 1
        return (v * b * x).sum()
    cf = torchish.compile(f)
    for _ in range(2):
        cf(torchish.arange(2.0)).backward()
    assert w.grad is None
    assert b.grad.tolist() == [0.0, 2.0]


@pytest.mark.parametrize("body", ["x.detach()[1:]", "x.detach()", "x.data[1:]",
                                  "x.detach()[1:][1:]", "x[1:]"])
@pytest.mark.parametrize("grad", [True, False])
def test_returned_view_of_input(body, grad):
    # a result viewing an input's storage: its `_base` and `requires_grad` as PyTorch's
    def run(mod):
        w = mod.ones(3, requires_grad=True)
        f = eval("lambda x: " + body)
        if mod is real:
            f = real.compile(f, backend="eager")
        else:
            f = mod.compile(f)
        with mod.set_grad_enabled(grad):
            r = f(w)
        return r.requires_grad, r._base is w, r._base is None, r.grad_fn is None
    assert run(torchish) == run(real)


def test_custom_function_backward():
    # a custom Function's own backward (not the derivative of its forward) is what runs
    def run(mod):
        class Scaled(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 100
        w = mod.tensor([1.0, 2.0], requires_grad=True)
        f = lambda x: Scaled.apply(x).sum()   # noqa: E731
        f = real.compile(f, backend="eager") if mod is real else mod.compile(f)
        f(w).backward()
        return w.grad.tolist()
    assert run(torchish) == run(real)


@pytest.mark.parametrize("write", ["w[0] = 7", "w[1:].mul_(3)", "w.add_(1)"])
def test_no_grad_write_inside_func_grad(write):
    """An in-place write under no_grad inside torch.func.grad: new values, the old gradient
    (also through a view made under no_grad, which reads as a reverse-mode constant)."""
    def run(T):
        def g(w):
            w = w * 1
            with T.no_grad():
                exec(write, {"w": w})
            return (w * w).sum()
        return T.func.grad(g)(T.tensor([1., 1.5, 2.5])).tolist()
    assert run(torchish) == run(real)
