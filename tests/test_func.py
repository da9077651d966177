"""`torchish.func` transforms against finite differences and real `torch.func`."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7]])


def f_scalar(T):
    return lambda x: (x.sin() * x.exp()).sum() + (x @ x.t()).trace()


def f_vector(T):
    return lambda x: (x.tanh() * 2).sum(0)


def _both(T):
    return T.tensor(X, dtype=T.float64)


def _close(a, b):
    np.testing.assert_allclose(np.asarray(b.detach().cpu().numpy() if hasattr(b, "detach") else b),
                               a.detach().cpu().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd", "hessian"])
def test_transforms_match_torch_func(transform):
    fn = f_scalar if transform in ("grad", "hessian") else f_vector
    expected = getattr(torch.func, transform)(fn(torch))(_both(torch))
    ours = getattr(torchish.func, transform)(fn(torchish))(_both(torchish))
    _close(expected, ours)


def test_grad_and_value_and_vjp_jvp():
    g_t, v_t = torch.func.grad_and_value(f_scalar(torch))(_both(torch))
    g_i, v_i = torchish.func.grad_and_value(f_scalar(torchish))(_both(torchish))
    _close(g_t, g_i)
    _close(v_t, v_i)
    out_t, pull_t = torch.func.vjp(f_vector(torch), _both(torch))
    out_i, pull_i = torchish.func.vjp(f_vector(torchish), _both(torchish))
    ct = [1.0, -2.0, 0.5]
    _close(pull_t(torch.tensor(ct, dtype=torch.float64))[0],
           pull_i(torchish.tensor(ct, dtype=torchish.float64))[0])
    tan = np.ones_like(X)
    p_t, t_t = torch.func.jvp(f_vector(torch), (_both(torch),),
                              (torch.tensor(tan),))
    p_i, t_i = torchish.func.jvp(f_vector(torchish), (_both(torchish),),
                                 (torchish.tensor(tan),))
    _close(t_t, t_i)


def test_vmap_in_dims_out_dims():
    def fn(T):
        return lambda a, b: (a * b).sum()
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(3.0)
    exp = torch.func.vmap(fn(torch), in_dims=(0, None))(torch.tensor(a), torch.tensor(b))
    ours = torchish.func.vmap(fn(torchish), in_dims=(0, None))(torchish.tensor(a),
                                                               torchish.tensor(b))
    _close(exp, ours)
    exp = torch.func.vmap(lambda x: x * 2, in_dims=1, out_dims=1)(torch.tensor(a))
    ours = torchish.func.vmap(lambda x: x * 2, in_dims=1, out_dims=1)(torchish.tensor(a))
    _close(exp, ours)


def test_grad_against_finite_differences():
    x = X.copy()
    g = torchish.func.grad(f_scalar(torchish))(torchish.tensor(x)).cpu().numpy()
    f = f_scalar(torchish)
    eps = 1e-6
    for idx in np.ndindex(x.shape):
        p, m = x.copy(), x.copy()
        p[idx] += eps
        m[idx] -= eps
        num = (f(torchish.tensor(p)).item() - f(torchish.tensor(m)).item()) / (2 * eps)
        assert g[idx] == pytest.approx(num, rel=1e-6, abs=1e-6)


def test_functional_call_and_grad_over_params():
    torch.manual_seed(0)
    tm = torch.nn.Linear(3, 2).double()
    im = torchish.nn.Linear(3, 2).double()
    im.load_state_dict({k: torchish.tensor(v.detach().cpu().numpy()) for k, v in
                        tm.state_dict().items()})
    x = X

    def loss_t(params):
        return torch.func.functional_call(tm, params, (torch.tensor(x),)).square().sum()

    def loss_i(params):
        return torchish.func.functional_call(im, params, (torchish.tensor(x),)).square().sum()

    gt = torch.func.grad(loss_t)(dict(tm.named_parameters()))
    gi = torchish.func.grad(loss_i)(dict(im.named_parameters()))
    for k in gt:
        _close(gt[k], gi[k])


def test_autograd_functional_jacobian_hessian():
    from torchish.autograd import functional as AF
    jt = torch.autograd.functional.jacobian(f_vector(torch), _both(torch))
    ji = AF.jacobian(f_vector(torchish), _both(torchish))
    _close(jt, ji)
    ht = torch.autograd.functional.hessian(f_scalar(torch), _both(torch))
    hi = AF.hessian(f_scalar(torchish), _both(torchish))
    _close(ht, hi)


def _captured_params_program(T):
    """Transforms over functions that reach parameters through closures, not arguments."""
    import copy
    T.manual_seed(0)
    out = []
    lin = T.nn.Linear(3, 2)
    y = T.vmap(lambda r: lin(r))(T.tensor(X, dtype=T.float32))
    out.append((y.requires_grad, y.grad_fn is not None))
    y.sum().backward()
    out += [lin.weight.grad, lin.bias.grad]
    w = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = T.tensor([0.1, 0.2, 0.3], requires_grad=True)
    g = T.func.grad(lambda v: (v * w).sin().sum())(x)
    g.sum().backward()
    out += [g.requires_grad, w.grad, x.grad]
    # a Jacobian that does not depend on the bias leaves its .grad None
    lin2 = T.nn.Linear(2, 2)
    j = T.func.jacrev(lambda v: lin2(v))(T.ones(2))
    j.sum().backward()
    out += [lin2.weight.grad, lin2.bias.grad]
    # ensembling: the base module's own parameters are swapped out, so they get no grad
    models = [T.nn.Linear(3, 2) for _ in range(2)]
    params, buffers = T.func.stack_module_state(models)
    base = copy.deepcopy(models[0])
    ens = T.vmap(lambda p, b, i: T.func.functional_call(base, (p, b), (i,)),
                 in_dims=(0, 0, None))(params, buffers, T.ones(4, 3))
    ens.sum().backward()
    out += [base.weight.grad, params["weight"].grad]
    with T.no_grad():
        out.append(T.vmap(lin)(T.ones(3, 3)).requires_grad)
    return out


def test_transforms_record_through_captured_parameters():
    expected, ours = _captured_params_program(torch), _captured_params_program(torchish)
    assert len(expected) == len(ours)
    for a, b in zip(expected, ours):
        if a is None or isinstance(a, (bool, tuple)):
            assert a == b
        else:
            np.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy(), rtol=1e-6, atol=1e-6)


def _autograd_functional_semantics(T):
    """What torch.autograd.functional's results carry (grad, tuple-ness) and its errors."""
    from importlib import import_module
    AF = import_module(T.__name__ + ".autograd.functional")
    out = []
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([1.0, 2.0])
    cube = lambda t: (t ** 3).sum()  # noqa: E731
    for inp in (a, b):
        for cg in (False, True):
            res = [AF.jacobian(lambda t: t ** 3, inp, create_graph=cg),
                   AF.hessian(cube, inp, create_graph=cg),
                   *AF.vjp(lambda t: t ** 3, inp, T.ones(2), create_graph=cg),
                   *AF.jvp(lambda t: t ** 3, inp, T.ones(2), create_graph=cg),
                   *AF.hvp(cube, inp, T.ones(2), create_graph=cg),
                   *AF.vhp(cube, inp, T.ones(2), create_graph=cg)]
            out.append([(r.requires_grad, r.grad_fn is not None) for r in res])
    out.append(AF.jacobian(lambda t: 2 * t, b, create_graph=True).requires_grad)
    out.append(AF.hvp(lambda x, y: (x * y).sum() ** 2, (a, b), (T.ones(2), T.ones(2))))
    out.append(AF.vhp(lambda x, y: (x * y ** 2).sum(), (a, b), (T.ones(2), T.zeros(2))))
    out.append(AF.hvp(cube, T.tensor(2.0)))
    out.append(AF.jvp(lambda x: (x ** 3, x * 2), T.tensor(2.0)))
    out.append(AF.jvp(lambda x, y: x * y, (T.tensor(2.0), T.tensor(3.0)),
                      (T.tensor(1.0), T.tensor(0.0))))
    g = lambda x, y: T.stack([x.sum() * y[0], (x * x).sum() + y[1]])  # noqa: E731
    out.append(AF.jacobian(g, (b, b), create_graph=True)[0].requires_grad)
    out.append(AF.jacobian(g, (b, b), vectorize=True, strategy="forward-mode"))
    out.append(AF.hessian(lambda x, y: (x * y).sum() ** 2, (b, b), vectorize=True))
    two = (T.ones(2), T.ones(2))
    for bad in [lambda: AF.vjp(lambda x: x * 2, T.ones(2)),
                lambda: AF.jvp(lambda x: x * 2, T.ones(2)),
                lambda: AF.vjp(lambda x: x * 2, T.ones(2), T.ones(3)),
                lambda: AF.jvp(lambda x, y: x * y, two, (T.ones(2),)),
                lambda: AF.jvp(lambda x, y: x * y, two, (T.ones(2), T.ones(3))),
                lambda: AF.hvp(lambda x: x * 2, T.ones(2), T.ones(2)),
                lambda: AF.vhp(lambda x: (x * 2, x), T.ones(2), T.ones(2)),
                lambda: AF.hessian(lambda x: x * 2, T.ones(2)),
                lambda: AF.jacobian(lambda x: x * 2, T.ones(2), strategy="fwd"),
                lambda: AF.jacobian(lambda x: x * 2, T.ones(2), strategy="forward-mode"),
                lambda: AF.jacobian(lambda x: x * 2, T.ones(2), strategy="forward-mode",
                                    create_graph=True, vectorize=True),
                lambda: AF.jacobian(lambda x: x * 2, T.ones(2), strict=True, vectorize=True),
                lambda: AF.jacobian(lambda x, y: x * 2, two, strict=True),
                lambda: AF.jacobian(lambda x: T.ones(2), T.ones(2), strict=True),
                lambda: AF.jacobian(lambda x: x * 2, T.ones(2), strict=True, create_graph=True),
                lambda: AF.hessian(lambda x: x.sum() * 2, T.ones(2), strict=True),
                lambda: AF.vjp(lambda x, y: (x * 2).sum(), two, strict=True),
                lambda: AF.jacobian(lambda x: x * 2, [T.ones(2)])]:
        try:
            bad()
            out.append("no error")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


def test_autograd_functional_semantics_match_torch():
    def norm(x):
        if isinstance(x, (tuple, list)):
            return [norm(y) for y in x]
        if hasattr(x, "detach"):
            return x.detach().cpu().numpy().tolist()
        return x
    assert norm(_autograd_functional_semantics(torchish)) == norm(
        _autograd_functional_semantics(torch))


def _vectorized_create_graph_nodes(T):
    AF = T.autograd.functional
    x = T.tensor([0.5, -1.0, 2.0])
    y = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    jac = AF.jacobian(lambda a, b: (a[:2] @ b, a.prod()), (x, y), create_graph=True,
                      vectorize=True)
    hess = AF.hessian(lambda a: (a ** 3).sum() + a[0] * a[1], x, create_graph=True,
                      vectorize=True)
    w = T.tensor([1.0, 2.0], requires_grad=True)
    j = AF.jacobian(lambda a: (a * w).sin(), T.tensor([0.3, 0.4]), create_graph=True,
                    vectorize=True)
    j.trace().backward()
    return ([type(t.grad_fn).__name__ for row in jac for t in row],
            type(hess.grad_fn).__name__, w.grad.tolist())


def test_vectorized_jacobian_create_graph_ends_in_a_view():
    # PyTorch splits the batched result and views each block: grad_fn ViewBackward0
    ours, ref = _vectorized_create_graph_nodes(torchish), _vectorized_create_graph_nodes(torch)
    assert ours[:2] == ref[:2]
    np.testing.assert_allclose(ours[2], ref[2], rtol=1e-6)


def _jvp_vjp_tape_program(T):
    """func.jvp / func.vjp results stay on the tape of the primals and of captured parameters
    (a PINN loss built from a jvp trains the network)."""
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(2, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
    x = T.tensor(X[:, :2].copy(), dtype=T.float32)
    out = []
    v, t = T.func.jvp(net, (x,), (T.ones(2, 2),))
    out.append((v.requires_grad, t.requires_grad))
    (t ** 2).sum().backward()
    out.append(net[0].weight.grad.clone())
    net.zero_grad()
    o, fn = T.func.vjp(lambda z: net(z).sum(), x)
    g, = fn(T.tensor(1.0))
    out.append((o.requires_grad, g.requires_grad, g))
    g.pow(2).sum().backward()
    out.append(net[2].weight.grad)
    xr = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    o, fn = T.func.vjp(lambda z: (z ** 3, z.sum()), xr)
    g, = fn((T.ones(3), T.tensor(2.0)))
    g.sum().backward()
    out += [o[0], g, xr.grad]
    with T.no_grad():
        out.append(T.func.jvp(net, (x,), (T.ones(2, 2),))[1].requires_grad)
    return out


def test_func_jvp_vjp_compose_with_tape():
    def same(a, b):
        if isinstance(b, (tuple, list)):
            assert len(a) == len(b)
            for x, y in zip(a, b):
                same(x, y)
        elif hasattr(b, "detach"):
            np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(),
                                       rtol=1e-5, atol=1e-6)
        else:
            assert a == b
    same(_jvp_vjp_tape_program(torchish), _jvp_vjp_tape_program(torch))


def _functional_call_keys_program(T):
    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.BatchNorm1d(2), T.nn.Linear(2, 1))
    x = T.tensor(X[:, :2].copy(), dtype=T.float32)
    out = []
    for d, kw in [({"0.weight": T.zeros(2, 2), "bogus": T.zeros(1)}, dict(strict=True)),
                  ({"0.weight": T.zeros(2, 2)}, dict(strict=True)),
                  ({"0.weight": T.zeros(2, 2), "bogus": T.zeros(1)}, {}),
                  ({"0.weight": T.zeros(2, 2), "0.bogus": T.zeros(1)}, {}),
                  (dict(net.state_dict()), dict(strict=True)),
                  (({"0.weight": T.zeros(2, 2)}, {"0.weight": T.ones(2, 2)}), {})]:
        try:
            out.append(T.func.functional_call(net, d, (x,), **kw).detach().numpy().tolist())
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    out.append((hasattr(net, "bogus"), hasattr(net[0], "bogus")))
    return out


def test_functional_call_strict_unknown_and_repeated_keys():
    ours, theirs = _functional_call_keys_program(torchish), _functional_call_keys_program(torch)
    assert [o for o in ours if isinstance(o, (str, tuple))] == \
        [o for o in theirs if isinstance(o, (str, tuple))]
    for a, b in zip(ours, theirs):
        if isinstance(b, list):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dicts_keep_their_key_order_through_transforms():
    # JAX rebuilds dicts with sorted keys; torch.func hands the function, and returns, the
    # caller's order (per-sample gradients by vmap(grad(...)) over named_parameters)
    def program(T):
        model = T.nn.Linear(3, 2)
        with T.no_grad():
            model.weight.copy_(T.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            model.bias.copy_(T.tensor([0.01, -0.02]))
        params = {k: v.detach() for k, v in model.named_parameters()}
        seen = []

        def loss(p, x):
            seen.append(list(p))
            return T.func.functional_call(model, p, (x,)).pow(2).sum()
        xs = T.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
        per = T.func.vmap(T.func.grad(loss), in_dims=(None, 0))(params, xs)
        jac = T.func.jacrev(loss)(params, xs[0])
        return seen, [(k, v.tolist()) for k, v in per.items()], list(jac)
    assert program(torch) == program(torchish)


def test_transform_argument_errors_match_torch():
    def program(T):
        out = []
        for fn, kw in [(lambda t: t * 2, {}), (lambda t: 3.0, {}),
                       (lambda t: (t * 2).sum(), {"has_aux": True}),
                       (lambda t: ((t * 2).sum(), 1), {"has_aux": True})]:
            try:
                T.func.grad(fn, **kw)(T.ones(2))
            except Exception as e:  # noqa: BLE001 - comparing the exact error is the point
                out.append((type(e).__name__, str(e)))
        try:
            T.func.vmap(lambda t: t.sum())(T.ones(3, 2), in_dims=1)
        except TypeError as e:
            out.append(str(e))
        return out
    assert program(torch) == program(torchish)


def _vmap_error_cases(T):
    vmap = T.func.vmap
    f = lambda a, b: a + b  # noqa: E731
    z = T.zeros
    return [
        lambda: vmap(f)(z(3, 2), z(4, 2)),
        lambda: vmap(f, in_dims=(0, 1))(z(3, 2), z(4, 2)),
        lambda: vmap(f, in_dims=(0, -3))(z(3, 2), z(3, 2)),
        lambda: vmap(f, in_dims=(0,))(z(3, 2), z(3, 2)),
        lambda: vmap(f, in_dims=(None, None))(z(3, 2), z(3, 2)),
        lambda: vmap(f, in_dims=(0, 0))(z(3, 2), 1.0),
        lambda: vmap(f, in_dims=(0, 0.5))(z(3, 2), z(3, 2)),
        lambda: vmap(f, in_dims=[0, 0])(z(3, 2), z(3, 2)),
        lambda: vmap(lambda d: d["a"] + d["b"])({"b": z(3), "a": z(4)}),
        lambda: vmap(lambda d: d["a"], in_dims=({"a": 0},))({"a": z(3), "b": z(2)}),
        lambda: vmap(f)(z(()), z(3)),
        lambda: vmap(lambda a: a)(),
        lambda: vmap(f, out_dims=(0, 1))(z(3, 2), z(3, 2)),
        lambda: vmap(lambda a: a, out_dims=0.5)(z(3, 2)),
        lambda: vmap(lambda a: (a, 2.0))(z(3, 2)),
        lambda: vmap(lambda a: a, chunk_size=0),
    ]


@pytest.mark.parametrize("case", range(16))
def test_vmap_argument_errors_match_torch(case):
    # PyTorch validates in_dims/out_dims itself (sizes listed in input order); JAX's
    # in_axes/out_axes messages must not leak through
    msgs = []
    for T in (torch, torchish):
        with pytest.raises(ValueError) as info:
            _vmap_error_cases(T)[case]()
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_vmap_out_dims_one_tuple_and_none_leaf():
    for T in (torch, torchish):
        x = T.arange(6.0).reshape(3, 2)
        assert tuple(T.func.vmap(lambda a: a * 2, out_dims=(1,))(x).shape) == (2, 3)
        out = T.func.vmap(lambda a: (a, 2.0), out_dims=(0, None))(x)
        assert out[1] == 2.0 and tuple(out[0].shape) == (3, 2)


@pytest.mark.parametrize("read", ["item", "float", "bool"])
def test_vmap_reading_a_batched_value_raises_like_torch(read):
    # a batched tensor has no single value: vmap's own errors, even for 0-d examples;
    # an unbatched tensor made inside the function still reads fine
    fns = {"item": lambda a: a.item(), "float": lambda a: float(a),
           "bool": lambda a: a if bool(a > 0) else a}
    msgs = []
    for T in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            T.vmap(fns[read])(T.zeros(3))
        msgs.append(str(info.value))
        out = T.vmap(lambda a: a + T.ones(2).sum().item())(T.zeros(3))
        assert out.tolist() == [2.0, 2.0, 2.0]
    assert msgs[1] == msgs[0]


def _view_read_in_a_trace(T):
    # `xs` (a view) is first read while `grad` traces a function whose captured `w` requires
    # grad; what was read there must not serve later eager reads
    w = T.tensor(1.5, requires_grad=True)
    xs = T.arange(6.0).reshape(2, 3)[:, :2]
    g = T.func.grad(lambda p: T.func.vmap(lambda r: (r * p * w).sum())(xs).sum())(T.tensor(2.0))
    return [g.detach(), xs * 2, T.nn.functional.linear(xs, T.ones(1, 2))]


def test_view_read_inside_a_trace_is_not_cached():
    for a, b in zip(_view_read_in_a_trace(torch), _view_read_in_a_trace(torchish)):
        np.testing.assert_allclose(b.numpy(), a.numpy())


def _non_float_inputs(T):
    F = T.func
    i, f = T.tensor([1, 2]), T.tensor([1.0, 2.0])
    calls = [lambda: F.grad(lambda v: v.sum())(i),
             lambda: F.grad(lambda a, b: (a * b).sum(), argnums=1)(f, i),
             lambda: F.grad(lambda a, b: (a * b).sum(), argnums=0)(f, i),
             lambda: F.grad(lambda d: (d["a"] * d["b"]).sum())({"a": f, "b": i}),
             lambda: F.grad(lambda v: v.sum())(T.tensor([True, False])),
             lambda: F.grad_and_value(lambda v: v.sum())(i),
             lambda: F.grad(lambda v: v.sum())(3.0),
             lambda: F.jacrev(lambda v: v * 2)(i),
             lambda: F.jacrev(lambda a, b: a * b, argnums=(0, 1))(f, f.to(T.complex64)),
             lambda: F.vjp(lambda v: v * 2, i)]
    out = []
    for call in calls:
        try:
            r = call()
            out.append(r.tolist() if isinstance(r, T.Tensor) else sorted(r))
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


def test_reverse_transforms_reject_non_float_inputs_like_torch():
    assert _non_float_inputs(torchish) == _non_float_inputs(torch)


def _captured_mutations(T):
    """In-place ops inside torch.func.grad on a tensor made before the transform raise
    PyTorch's error (the tensor keeps its value); ones on tensors made inside run."""
    buf = T.zeros(3)
    x = T.tensor([0.5, -1.0, 2.0])
    out = []
    for f in [lambda b, x: b.add_(x), lambda b, x: b.add_(1), lambda b, x: b.copy_(x),
              lambda b, x: b.zero_(), lambda b, x: b.fill_(2.0), lambda b, x: b.clamp_(0, 1),
              lambda b, x: b.exp_()]:
        try:
            T.func.grad(lambda x: (f(buf, x) * x).sum())(x)
            out.append("ran")
        except RuntimeError as e:
            out.append(str(e))
    out.append(buf.tolist())

    def fresh(x):
        b = T.zeros(3)
        b.copy_(x)
        b.mul_(2)
        return (b * x).sum()
    out.append(T.func.grad(fresh)(x).tolist())
    bn = T.nn.BatchNorm1d(3)   # training mode: its running stats are captured
    try:
        T.func.grad(lambda x: bn(x.view(1, 3).expand(2, 3)).sum())(x)
    except RuntimeError as e:
        out.append(str(e).split("(aten::")[0])
    out.append(bn.running_mean.tolist())
    return out


def test_in_place_on_a_captured_tensor_inside_grad_raises():
    assert _captured_mutations(torchish) == _captured_mutations(torch)
