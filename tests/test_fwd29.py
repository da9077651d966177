"""Forward-mode `torch.func` transforms (`jvp`, `jacfwd`, `hessian`, `linearize`, and vmap /
grad compositions with them) raise PyTorch's forward-AD NotImplementedError for an op
without a forward formula (`cdist`, `grid_sample`, ...) or a derivative-less overload
(`floor_divide`, `heaviside`, `remainder(2, x)`, `scatter(reduce=)`) when an operand carries
the transform's tangent, and compute as PyTorch where none does; differential against
PyTorch."""
import warnings

import numpy as np
import pytest

from test_forward_ad_refusals import FORWARD, _x

torch = pytest.importorskip("torch")


def _same(run):
    """`run(m)` under PyTorch and torchish: the same exception (type and message), or
    values equal to rounding."""
    import torchish
    got = []
    for m in (torch, torchish):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = run(m)
                got.append(("ok", np.asarray(out.detach().numpy())))
            except Exception as e:   # compared across the two libraries: type and message
                got.append((type(e).__name__, str(e)))
    (kind, theirs), (our_kind, ours) = got
    assert our_kind == kind, f"torch: {kind} {theirs}\nours: {our_kind} {ours}"
    if kind == "ok":
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    else:
        assert ours == theirs
    return kind


def _sample(m, name):
    return lambda d: FORWARD[name](m, m.nn.functional, d)


@pytest.mark.parametrize("name", list(FORWARD))
def test_jvp(name):
    kind = _same(lambda m: m.func.jvp(_sample(m, name), (_x(m),),
                                      (m.ones(3, 4, dtype=m.float64),))[1])
    assert (kind == "ok") == (name == "mul_still_works")


@pytest.mark.parametrize("name", list(FORWARD))
def test_jacfwd(name):
    kind = _same(lambda m: m.func.jacfwd(_sample(m, name))(_x(m)))
    assert (kind == "ok") == (name == "mul_still_works")


@pytest.mark.parametrize("name", list(FORWARD))
def test_hessian(name):
    kind = _same(lambda m: m.func.hessian(lambda d: _sample(m, name)(d).sum())(_x(m)))
    assert (kind == "ok") == (name == "mul_still_works")


@pytest.mark.parametrize("name", ["cdist", "floor_divide", "scatter_reduce_arg_"])
def test_linearize(name):
    def run(m):
        m.func.linearize(_sample(m, name), _x(m))
        return m.zeros(())
    assert _same(run) == "NotImplementedError"


def _data(m):
    x = m.tensor([[0.3, 0.9], [0.5, 0.1], [0.7, 0.25]], dtype=m.float64)
    y = m.tensor([[0.2, 0.6], [0.8, 0.4], [0.35, 0.95], [0.1, 0.2]], dtype=m.float64)
    return x, y, m.ones_like(x), m.stack([x, 2 * x])


def _under_no_grad(m, fn):
    with m.no_grad():
        return fn()


# (program, whether PyTorch refuses it): checked against PyTorch either way
CASES = {
    "vmap_over_jvp": (True, lambda m, f, x, y, t, xs: f.vmap(
        lambda a: f.jvp(lambda b: m.cdist(b, y), (a,), (t,))[1])(xs)),
    "jvp_over_vmap": (True, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: f.vmap(lambda r: m.floor_divide(r, 2.))(a), (x,), (t,))[1]),
    "jacfwd_over_grad": (True, lambda m, f, x, y, t, xs: f.jacfwd(f.grad(
        lambda a: m.nn.functional.multi_margin_loss(a, m.tensor([0, 1, 0]))))(x)),
    "grad_over_jvp": (True, lambda m, f, x, y, t, xs: f.grad(
        lambda a: f.jvp(lambda b: m.cdist(b, y).sum(), (a,), (t,))[1])(x)),
    "jvp_over_grad": (True, lambda m, f, x, y, t, xs: f.jvp(
        f.grad(lambda a: m.cdist(a, y).sum()), (x,), (t,))[1]),
    "under_no_grad": (True, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: _under_no_grad(m, lambda: m.cdist(a, y)), (x,), (t,))[1]),
    "tangent_second": (True, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: m.heaviside(y[:3], a), (x,), (t,))[1]),
    "undifferentiated_argnum": (True, lambda m, f, x, y, t, xs: f.jacfwd(
        lambda a, b: a * m.floor_divide(b, 2.).sum(), argnums=1)(x, y)),
    "hessian_argnums": (True, lambda m, f, x, y, t, xs: f.hessian(
        lambda a, b: (a.sum() * m.cdist(b, y)).sum(), argnums=(0, 1))(x, x)[0][1]),
    "jacfwd_has_aux": (True, lambda m, f, x, y, t, xs: f.jacfwd(
        lambda a: (a * 2, m.cdist(a, y)), has_aux=True)(x)[1]),
    # no operand carries a tangent: computed
    "constants_only": (False, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: a * m.cdist(y, y).sum(), (x,), (t,))[1]),
    "other_argnum": (False, lambda m, f, x, y, t, xs: f.jacfwd(
        lambda a, b: a * m.floor_divide(b, 2.).sum(), argnums=0)(x, y)),
    "batched_not_dual": (False, lambda m, f, x, y, t, xs: f.vmap(
        lambda c: f.jvp(lambda a: a + m.floor_divide(c, 2.), (x,), (t,))[1])(xs)),
    "detached": (False, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: m.floor_divide(a.detach(), 2.) + a, (x,), (t,))[1]),
    "integer_operand": (False, lambda m, f, x, y, t, xs: f.jvp(
        lambda a: a * m.floor_divide(a.long(), 2), (x,), (t,))[1]),
    "hessian_constant_refused_op": (False, lambda m, f, x, y, t, xs: f.hessian(
        lambda a: (a.sin() * m.floor_divide(y[:3], 2.)).sum())(x)),
    "linearize_ok": (False, lambda m, f, x, y, t, xs: f.linearize(
        lambda a: m.sin(a) * 2, x)[1](t)),
    "jacfwd_linalg_cholesky": (False, lambda m, f, x, y, t, xs: f.jacfwd(
        lambda a: m.linalg.cholesky(a @ a.T + m.eye(3, dtype=m.float64)))(x)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_compositions(name):
    refused, program = CASES[name]
    kind = _same(lambda m: program(m, m.func, *_data(m)))
    assert kind == ("NotImplementedError" if refused else "ok")


def test_compiled_jvp_refuses():
    """Inside compiled code (the data JAX tracers of jit) the refusal is the same."""
    import torchish
    x, y, t, _ = _data(torchish)
    step = torchish.compile(lambda a: torchish.func.jvp(lambda b: torchish.cdist(b, y),
                                                        (a,), (t,))[1])
    with pytest.raises(NotImplementedError) as got:
        step(x)
    x, y, t, _ = _data(torch)
    with pytest.raises(NotImplementedError) as expected:
        torch.func.jvp(lambda b: torch.cdist(b, y), (x,), (t,))
    assert str(got.value) == str(expected.value)
