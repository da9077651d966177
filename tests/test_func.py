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
