"""What a function sees of its inputs inside `torch.func`'s reverse-mode transforms (grad,
grad_and_value, vjp, jacrev, hessian), against PyTorch: leaves requiring grad with grad mode
on, the tape's errors for in-place ops on them, `detach()`/`no_grad()` as constants of the
transform, `autograd.grad` inside, `backward()` refused."""
import numpy as np
import pytest

import torchish

real = pytest.importorskip("torch")

LIBS = [torchish, real]


def _seen(lib, transform):
    """What `f` reports about its input and an intermediate inside `transform`."""
    seen = []

    def f(x):
        y = x * 2
        for t in (x, y):
            seen.append((t.requires_grad, t.is_leaf, type(t.grad_fn).__name__,
                         lib.is_grad_enabled()))
        return (y ** 2).sum()
    x = lib.tensor([1., 2.])
    fn = lib.func
    if transform == "vjp":
        fn.vjp(f, x)
    elif transform == "grad_outside_no_grad":
        with lib.no_grad():
            fn.grad(f)(x)
    else:
        getattr(fn, transform)(f)(x)
    return seen[:2]


@pytest.mark.parametrize("transform", ["grad", "grad_and_value", "vjp", "jacrev", "hessian",
                                       "grad_outside_no_grad"])
def test_inputs_are_leaves_requiring_grad(transform):
    assert _seen(torchish, transform) == _seen(real, transform)


def _outcome(lib, body, x=(1., 2., 3.)):
    try:
        return lib.func.grad(body(lib))(lib.tensor(x)).tolist()
    except Exception as e:   # noqa: BLE001 (the outcome compared is the error)
        return type(e).__name__, str(e)


def _inplace_mul(lib):
    def f(x):
        x.mul_(2)
        return (x * x).sum()
    return f


def _inplace_add(lib):
    def f(x):
        x.add_(1)
        return (x * x).sum()
    return f


def _detach(lib):
    return lambda x: (x * x.detach()).sum()


def _no_grad_part(lib):
    def f(x):
        with lib.no_grad():
            y = x * 2
            v = x[0]
        return (x * y).sum() + v * x[1]
    return f


def _no_grad_inplace(lib):
    def f(x):
        b, c = x * 2, x.new_ones(3)
        with lib.no_grad():
            b.mul_(3)          # new values, b's gradient unchanged
            c.add_(x)          # a constant
        return (b * x).sum() + (c * x).sum() + lib.nn.functional.cosine_similarity(
            x[None], c[None] + x[None]).sum()
    return f


def _no_grad_all(lib):
    def f(x):
        with lib.no_grad():
            return (x * x).sum()
    return f


def _autograd_grad(lib):
    def f(x):
        y = (x * x).sum()
        return lib.autograd.grad(y, x, create_graph=True)[0].sum()
    return f


def _backward(lib):
    def f(x):
        y = (x * x).sum()
        y.backward()
        return y
    return f


def _nested_no_grad(lib):
    def f(x):
        def inner(z):
            with lib.no_grad():
                w = z * x
            return (w * z).sum()
        return lib.func.grad(inner)(x).sum()
    return f


def _nested(lib):
    return lambda x: lib.func.grad(lambda z: (z ** 3 * x).sum())(x).sum()


@pytest.mark.parametrize("body", [_inplace_mul, _inplace_add, _detach, _no_grad_part,
                                  _no_grad_inplace, _no_grad_all, _autograd_grad, _backward,
                                  _nested_no_grad, _nested])
def test_grad_of(body):
    got, want = _outcome(torchish, body), _outcome(real, body)
    if isinstance(want, list):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        assert got == want


def test_inplace_on_a_clone_and_on_an_undifferentiated_argument():
    def f(lib):
        def g(x, s):
            s.mul_(2)   # (argnums=0: `s` is not differentiated, an in-place op is fine)
            y = x.clone()
            y.add_(s)
            return (y * x).sum()
        return g
    got = torchish.func.grad(f(torchish))(torchish.tensor([1., 2.]), torchish.tensor([3., 4.]))
    want = real.func.grad(f(real))(real.tensor([1., 2.]), real.tensor([3., 4.]))
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_outer_graph_still_reaches_the_argument():
    # a differentiated argument requiring grad outside: the result joins the outer tape
    results = []
    for lib in LIBS:
        x = lib.tensor([1., 2.], requires_grad=True)
        g = lib.func.grad(lambda z: (z ** 3).sum())(x)
        g.sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["complex64", "int64"])
def test_hessian_refuses_inputs_as_pytorch(dtype):
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            lib.func.hessian(lambda x: (x * x).sum().real)(lib.ones(2, dtype=getattr(lib, dtype)))
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[0] == errors[1]
