"""Higher-order autograd (`create_graph=True`), differential against real PyTorch.

Each case is a program written against the `torch` API, run with T = torch and T = torchish:
which gradients require grad, their grad_fn names, unused inputs (None or PyTorch's error),
second and third derivative values, gradient penalties leaving `.grad` None where PyTorch does.
"""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _np(x):
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x)


def _same(a, b, rtol=1e-5, atol=1e-6, where="result"):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, rtol, atol, f"{where}[{i}]")
    elif a is None or isinstance(a, (str, bool, int)):
        assert a == b, (where, a, b)
    else:
        np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol, err_msg=where)


def run_both(program, **tol):
    _same(program(torch), program(torchish), **tol)


def facts(g):
    """What a gradient looks like from outside: None, or (requires_grad, grad_fn name)."""
    if g is None:
        return None
    return [g.requires_grad, g.grad_fn.name() if g.grad_fn is not None else None]


def _inputs(T):
    r = np.random.RandomState(0)

    def t(*shape):
        return T.tensor(r.randn(*shape), dtype=T.float64, requires_grad=True)
    return dict(x=t(2, 3), w=t(2, 3), m=t(3, 4), v=t(3), b=t(), img=t(1, 2, 6, 6),
                ker=t(3, 2, 3, 3), tgt=T.tensor([0, 2]))


# (expression, names of the inputs it is differentiated w.r.t.); `F` is nn.functional
CASES = [
    ("x ** 3", "x"), ("x ** w.abs()", "xw"), ("(x * x + 1).sqrt()", "x"), ("x.sin()", "x"),
    ("x.cos()", "x"), ("x.exp()", "x"), ("(x * x + 1).log()", "x"), ("x.tanh()", "x"),
    ("x.sigmoid()", "x"), ("x.relu()", "x"), ("x * w", "xw"), ("x * w + b", "xwb"),
    ("x / w", "xw"), ("x - w", "xw"), ("x + w", "xw"), ("-x * w", "xw"), ("x.abs() * w", "xw"),
    ("x.square()", "x"), ("(x * x + 1).rsqrt()", "x"), ("x.reciprocal()", "x"),
    ("x @ m", "xm"), ("(x @ v) * x.sum()", "xv"), ("(x * x).mean()", "x"),
    ("(x * x).sum(1)", "x"), ("x.sum() * 2", "x"), ("x.max()", "x"), ("x.amax(1)", "x"),
    ("x.softmax(1) * w", "xw"), ("x.log_softmax(1) * w", "xw"), ("F.gelu(x)", "x"),
    ("F.gelu(x, approximate='tanh')", "x"), ("F.silu(x)", "x"), ("F.softplus(x)", "x"),
    ("F.elu(x)", "x"), ("F.leaky_relu(x, 0.1)", "x"), ("F.hardtanh(x) * w", "xw"),
    ("F.mse_loss(x, w)", "xw"), ("F.cross_entropy(x, tgt)", "x"),
    ("F.nll_loss(x, tgt) * x.sum()", "x"), ("F.layer_norm(x, (3,)) * w", "xw"),
    ("F.linear(x, m.t())", "xm"), ("F.linear(x, m.t(), m[0])", "xm"),
    ("F.conv2d(img, ker) ** 2", ("img", "ker")), ("F.max_pool2d(img, 2) ** 2", ("img",)),
    ("F.avg_pool2d(img, 2) ** 2", ("img",)), ("x.clamp(-0.5, 0.5) * w", "xw"),
    ("T.where(x > 0, x * w, w)", "xw"), ("x.t() @ w", "xw"), ("x.view(6) * w.view(6)", "xw"),
    ("v.expand(2, 3) * x", "xv"), ("T.cat([x, w]) ** 2", "xw"), ("x[0] * w[1]", "xw"),
    ("x.atan()", "x"), ("x.erf()", "x"), ("T.addcmul(x, x, w)", "xw"), ("x.std()", "x"),
    ("x.var(1)", "x"), ("x.logsumexp(1)", "x"), ("x.cumsum(1) ** 2", "x"),
    ("F.hardswish(x)", "x"), ("F.mish(x)", "x"), ("F.dropout(x, 0.0) ** 2", "x"),
    ("F.batch_norm(x, None, None, training=True) * w", "xw"),
    ("F.smooth_l1_loss(x, w)", "xw"), ("F.l1_loss(x, w) * x.sum()", "xw"),
]


@pytest.mark.parametrize("expr,wrt", CASES, ids=[c[0] for c in CASES])
def test_first_and_second_gradients(expr, wrt):
    def program(T):
        env = _inputs(T)
        env.update(T=T, F=T.nn.functional)
        ins = [env[n] for n in wrt]
        out = eval(expr, env)
        return _first_and_second(T, out.sum(), ins)
    run_both(program, rtol=1e-7, atol=1e-9)


def _first_and_second(T, out, ins):
    """First gradients (with create_graph), their facts, and the gradients of their squares."""
    gs = T.autograd.grad(out, ins, create_graph=True, allow_unused=True)
    live = [g for g in gs if g is not None and g.requires_grad]
    second = []
    if live:
        total = sum((g * g).sum() for g in live)
        second = T.autograd.grad(total, ins, allow_unused=True)
    return [facts(g) for g in gs], list(gs), list(second)


def test_third_derivatives():
    def program(T):
        x = T.tensor([0.5, 1.5, -2.0], dtype=T.float64, requires_grad=True)
        w = T.tensor([1.0, -0.5, 2.0], dtype=T.float64, requires_grad=True)
        y = (x.tanh() * w * x.exp()).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        h = T.autograd.grad(g.sum(), [x, w], create_graph=True)
        k = T.autograd.grad(h[0].sum(), [x, w], create_graph=True)
        k2 = T.autograd.grad(k[1].sum(), [x, w], allow_unused=True)
        return g, list(h), list(k), list(k2), [facts(t) for t in (g,) + h + k]
    run_both(program, rtol=1e-9)


@pytest.mark.parametrize("fn", ["tanh", "sigmoid", "exp", "sin"])
def test_names_of_gradients_of_gradients(fn):
    def program(T):
        x = T.tensor([0.5, 1.5, -2.0], requires_grad=True)
        w = T.tensor([1.0, -0.5, 2.0], requires_grad=True)
        (g,) = T.autograd.grad((getattr(x, fn)() * w).sum(), x, create_graph=True)
        h = T.autograd.grad(g.sum(), [x, w], create_graph=True)
        return facts(g), [facts(t) for t in h], list(h)
    run_both(program)


def test_unused_inputs_are_none_or_pytorchs_error():
    def program(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        b = T.tensor(0.3, requires_grad=True)
        g = T.autograd.grad((x * w + b).sum(), [x, w, b], create_graph=True)
        unused = T.autograd.grad(g[0].sum(), [x, w, b], allow_unused=True, retain_graph=True)
        try:
            T.autograd.grad(g[0].sum(), [x, w])
            error = None
        except RuntimeError as exc:
            error = str(exc)
        return [facts(t) for t in g], list(unused), error
    run_both(program)


def test_gradient_free_gradients_are_plain_tensors():
    def program(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = []
        for f in (lambda: x - w, lambda: x.sum() * 2, lambda: (x + 1) * 3, lambda: x.mean(),
                  lambda: x.amax()):
            g = T.autograd.grad(f().sum(), [x, w], create_graph=True, allow_unused=True)
            out.append([facts(t) for t in g])
        return out
    run_both(program)


def test_pass_through_gradient_is_the_incoming_tensor():
    for T in (torch, torchish):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0], requires_grad=True)
        gy = T.tensor([0.5, 2.0], requires_grad=True)
        gx, gw = T.autograd.grad(x + w, [x, w], grad_outputs=gy, create_graph=True)
        assert gx is gy and gw is gy, T.__name__


def test_separate_nodes_per_input():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0], requires_grad=True)
        gx, gw = T.autograd.grad((x * w).sum(), [x, w], create_graph=True)
        return gx.grad_fn is not gw.grad_fn, facts(gx), facts(gw)
    run_both(program)


def _copy_params(src, dst):
    for p, q in zip(src.parameters(), dst.parameters()):
        q.data = torchish.tensor(p.detach().cpu().numpy())


def _gp_program(build):
    """WGAN-GP: penalty on the input gradient of a critic, then backward; .grad of parameters
    the penalty does not reach stays None."""
    r = np.random.RandomState(1)
    real, fake = r.randn(5, 4).astype("f"), r.randn(5, 4).astype("f")
    alpha = r.rand(5, 1).astype("f")
    ref = build(torch)

    def program(T):
        model = build(T)
        if T is torchish:
            _copy_params(ref, model)
        else:
            model.load_state_dict(ref.state_dict())
        interp = T.tensor(alpha * real + (1 - alpha) * fake, requires_grad=True)
        out = model(interp)
        (g,) = T.autograd.grad(out, interp, grad_outputs=T.ones_like(out), create_graph=True)
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        gp.backward()
        return [facts(g), gp] + [p.grad for p in model.parameters()]
    return program


def test_gradient_penalty_linear():
    run_both(_gp_program(lambda T: T.nn.Linear(4, 1)))


def test_gradient_penalty_mlp():
    def build(T):
        T.manual_seed(0)
        return T.nn.Sequential(T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Linear(8, 8),
                               T.nn.ReLU(), T.nn.Linear(8, 1))
    run_both(_gp_program(build))


def test_gradient_penalty_then_optimizer_skips_none_grads():
    def program(T):
        T.manual_seed(0)
        lin = T.nn.Linear(3, 1)
        with T.no_grad():
            lin.weight.copy_(T.tensor([[0.5, -1.0, 2.0]]))
            lin.bias.fill_(0.25)
        opt = T.optim.Adam(lin.parameters(), lr=0.1, weight_decay=0.1)
        x = T.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0]], requires_grad=True)
        for _ in range(2):
            opt.zero_grad()
            (g,) = T.autograd.grad(lin(x).sum(), x, create_graph=True)
            ((g.norm(dim=1) - 1) ** 2).mean().backward()
            opt.step()
        return lin.weight, lin.bias, lin.bias.grad
    run_both(program)


def test_hessian_vector_product():
    def program(T):
        x = T.tensor([0.3, -1.2, 2.0], dtype=T.float64, requires_grad=True)
        A = T.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 1.0, 1.0]], dtype=T.float64)
        y = (x @ A @ x.sin() + x.pow(4).sum()) * x.exp().sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        vec = T.tensor([1.0, 0.0, -1.0], dtype=T.float64)
        (hv,) = T.autograd.grad(g, x, grad_outputs=vec, retain_graph=True)
        (hv2,) = T.autograd.grad((g * vec).sum(), x)
        return hv, hv2, facts(g)
    run_both(program, rtol=1e-10)


def test_backward_twice_through_freed_gradient_graph():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        (g,) = T.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
        s = g.sum()
        s.backward()
        try:
            s.backward()
        except RuntimeError as exc:
            return x.grad, str(exc)[:60]
        return x.grad, None
    run_both(program)


def test_steady_state_does_not_retrace(monkeypatch):
    from torchish.autograd import double_backward
    x = torchish.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torchish.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def step():
        (g,) = torchish.autograd.grad((x.tanh() * w).sum(), x, create_graph=True)
        return torchish.autograd.grad(g.sum(), [x, w])
    first = step()
    traced = []
    monkeypatch.setattr(double_backward, "_make_plan",
                        lambda *a: traced.append(a) or pytest.fail("retraced"))
    again = step()
    assert not traced
    _same(first, again)


def test_gradient_penalty_inside_compile_equals_eager():
    def make():
        torchish.manual_seed(0)
        return torchish.nn.Sequential(torchish.nn.Linear(4, 8), torchish.nn.Tanh(),
                                      torchish.nn.Linear(8, 1))
    r = np.random.RandomState(0)
    data = torchish.tensor(r.randn(5, 4).astype("f"))

    def stepper(model, opt):
        def step(x):
            opt.zero_grad()
            x = x.clone().requires_grad_(True)
            (g,) = torchish.autograd.grad(model(x).sum(), x, create_graph=True)
            gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
            gp.backward()
            opt.step()
            return gp
        return step
    eager_model, compiled_model = make(), make()
    eager = stepper(eager_model, torchish.optim.Adam(eager_model.parameters(), lr=0.01))
    compiled = torchish.compile(stepper(compiled_model,
                                        torchish.optim.Adam(compiled_model.parameters(),
                                                            lr=0.01)))
    for _ in range(3):
        a, b = eager(data), compiled(data)
        np.testing.assert_allclose(b.item(), a.item(), rtol=1e-5)
    for p, q in zip(eager_model.parameters(), compiled_model.parameters()):
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().cpu().numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert compiled_model[2].bias.grad is None and eager_model[2].bias.grad is None


def test_backward_create_graph_stores_copies_in_grad():
    def program(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0], requires_grad=True)
        gy = T.tensor([0.5, 2.0], requires_grad=True)
        (x + w).backward(gy, create_graph=True)
        shared = [x.grad is gy, x.grad is w.grad, facts(x.grad)]
        (x * w).sum().backward()   # accumulates into x.grad only
        y = T.tensor([1.0, 2.0], requires_grad=True)
        (y * y).sum().backward(create_graph=True)
        return shared, x.grad, w.grad, gy, facts(y.grad)
    run_both(program)


def _vectors(T):
    r = np.random.RandomState(3)

    def t(*shape):
        return T.tensor(r.randn(*shape), dtype=T.float64, requires_grad=True)
    return dict(a=t(24), b=t(24), A=t(4, 6), B=t(4, 6), idx=T.tensor([[0], [1], [2], [3]]),
                rows=T.tensor([0, 2]))


# Scalar programs of a, b (24 elements) and A, B (4 x 6) whose gradients' top-level node is
# named after the op PyTorch's derivative formula ends in, not after the last primitive of
# JAX's pullback (table `_FUSED_AT` in torchish/autograd/double_backward.py)
NAMED_CASES = [
    "a.prod()", "A.prod(1).sum()", "a.norm()", "A.norm(dim=1).sum()", "a.norm(p=3)",
    "F.pairwise_distance(A, B).sum()", "a.mean() * b.mean()", "A.mean(1).mul(B[:, 0]).sum()",
    "F.binary_cross_entropy_with_logits(a, b.sigmoid())",
    "F.binary_cross_entropy_with_logits(a, b.sigmoid(), reduction='sum')",
    "T.lerp(a, b, 0.3).pow(2).sum()", "T.lerp(a, b, b.sigmoid()).pow(2).sum()",
    "a.max() * b.sum()", "a.min() * b.sum()", "a.median() * b.sum()",
    "A.max(1).values.mul(B[:, 0]).sum()", "A.median(1).values.mul(B[:, 0]).sum()",
    "A.kthvalue(2, 1).values.mul(B[:, 0]).sum()", "a.sort().values.mul(b).sum()",
    "a.topk(3).values.pow(2).sum()", "T.minimum(a, b).pow(2).sum()",
    "T.maximum(a, b).pow(2).sum()", "(a.masked_fill(b > 0, 0.) * b).sum()",
    "T.stack([a, b]).pow(2).sum()", "T.dot(a, b).pow(2)", "(A @ b[:6]).pow(2).sum()",
    "(A.gather(1, idx) * B[:, :1]).sum()", "(A.index_select(0, rows) * B[:2]).sum()",
    "(A[rows] * B[:2]).sum()", "a.roll(2).mul(b).sum()", "a.repeat(2).pow(2).sum()",
    "(A.permute(1, 0) * B.t()).sum() * A.sum()", "A.transpose(0, 1).pow(2).sum()",
    "(a.unsqueeze(0) * B.reshape(24)).sum()", "a.exp2().sum()", "a.abs().sqrt().sum()",
    "T.hypot(a, b).sum()", "T.logaddexp(a, b).sum()", "T.xlogy(a, b.abs()).sum()",
    "a.sinc().sum()", "a.cumprod(0).sum()", "a.logcumsumexp(0).sum()",
    "F.logsigmoid(a).sum()", "F.glu(A, 1).pow(2).sum()", "F.prelu(a, b[:1]).pow(2).sum()",
    "F.softshrink(a).pow(2).sum()", "F.hardshrink(a).pow(2).sum()",
    "F.rrelu(a, training=False).pow(2).sum()", "a.cummax(0).values.mul(b).sum()",
    "a.cummin(0).values.mul(b).sum()", "A.nanmedian(1).values.mul(B[:, 0]).sum()",
    "a.nanmedian() * b.sum()", "T.fmax(a, b).pow(2).sum()", "T.fmin(a, b).pow(2).sum()",
    "A.mode(1).values.mul(B[:, 0]).sum()",
]


@pytest.mark.parametrize("expr", NAMED_CASES)
def test_names_of_gradients_follow_pytorchs_formulas(expr):
    def program(T):
        env = _vectors(T)
        env.update(T=T, F=T.nn.functional)
        ins = [env[n] for n in "abAB"]
        return _first_and_second(T, eval(expr, env), ins)
    run_both(program, rtol=1e-7, atol=1e-9)


def test_cdist_gradients_are_named_after_its_fused_backward():
    # PyTorch cannot differentiate _cdist_backward again: compare the first gradients only
    def program(T):
        env = _vectors(T)
        gs = T.autograd.grad(T.cdist(env["A"], env["B"]).sum(), [env["A"], env["B"]],
                             create_graph=True)
        return [facts(g) for g in gs], list(gs)
    run_both(program, rtol=1e-7, atol=1e-9)


def _edges(g):
    return [None if f is None else f.name() for f, _ in g.grad_fn.next_functions]


def test_gradient_graphs_are_shaped_as_pytorchs():
    # the gradient's node and its edges, in PyTorch's order: sum_to_size's view of a broadcast
    # operand, `grad.mm(mat2.t())` led by the gradient, tanh_backward(grad, result) and
    # `grad * result` reaching the input through the forward node, CopyBackwards' empty edge
    def program(T):
        F = T.nn.functional
        x = T.tensor([[0.5], [-1.0], [2.0]], requires_grad=True)
        w1 = T.tensor([[0.3], [-0.7]], requires_grad=True)
        b1 = T.tensor([0.1, 0.2], requires_grad=True)
        w2 = T.tensor([[0.5, -0.4]], requires_grad=True)
        b2 = T.tensor([0.05], requires_grad=True)
        u = F.linear(T.tanh(F.linear(x, w1, b1)), w2, b2)
        (du,) = T.autograd.grad(u, x, T.ones_like(u), create_graph=True)
        (gb,) = T.autograd.grad((u ** 2).sum(), b2, create_graph=True)
        c = T.tensor([[1.0], [2.0]], requires_grad=True)
        (gc,) = T.autograd.grad(((c + T.ones(3, 2, 4)) ** 2).sum(), c, create_graph=True)
        v = T.tensor([0.5, -1.0], requires_grad=True)
        (ge,) = T.autograd.grad((v.exp() * 2).sum(), v, create_graph=True)
        (gs,) = T.autograd.grad((v.sigmoid() ** 2).sum(), v, create_graph=True)
        tanh_node = du.grad_fn.next_functions[0][0]
        out = [facts(du), _edges(du), [None if f is None else f.name()
                                       for f, _ in tanh_node.next_functions],
               facts(gb), _edges(gb), facts(gc), facts(ge), _edges(ge), _edges(gs)]
        (d2u,) = T.autograd.grad(du.sum(), x, create_graph=True)
        out += [d2u, facts(d2u), _edges(d2u)]
        v.grad = None
        (v.exp() ** 2).sum().backward(create_graph=True)
        out += [v.grad, _edges(v.grad)]
        return out
    run_both(program)


def test_second_order_through_inplace_ops():
    # an in-place activation's gradient reads its result (tanh_, sigmoid_ on a view: the base's
    # old value is what its producer made), so second derivatives reach the input through it
    def program(T):
        # (float64: float32 1 - tanh(6) ** 2 keeps few digits)
        x = T.tensor([[0.5, -1.0], [2.0, -0.3]], dtype=T.float64, requires_grad=True)
        out = []
        for mode in range(3):
            y = x * 3
            if mode == 0:
                y.tanh_()
            elif mode == 1:
                y[0].sigmoid_()
            else:
                y[:, 1].exp_()
            (g,) = T.autograd.grad((y ** 2).sum(), x, create_graph=True)
            (h,) = T.autograd.grad((g ** 2).sum(), x)
            out += [g, h, facts(g)]
        return out
    run_both(program, rtol=1e-9, atol=1e-12)


def test_matrix_product_gradient_nodes_take_pytorchs_transposes():
    def program(T):
        x = T.tensor([[0.5, -1.0, 0.2], [2.0, -0.3, 1.0]], requires_grad=True)
        w = T.tensor([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], requires_grad=True)
        (gx, gw) = T.autograd.grad(((x @ w).tanh() ** 2).sum(), [x, w], create_graph=True)
        out = []
        for g in (gx, gw):
            out.append([facts(g), _edges(g)])
            out.append([[None if f is None else f.name() for f, _ in n.next_functions]
                        for n, _ in g.grad_fn.next_functions if n is not None])
        (d,) = T.autograd.grad((gx.sum() + gw.sum()), x, create_graph=True)
        return out, gx, gw, d, facts(d)
    run_both(program)
