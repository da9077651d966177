"""torch.geqrf / orgqr / ormqr against real PyTorch: LAPACK's packed QR (same signs), the
explicit and implicit Q, their gradients and grad_fn names, batching, dtypes and errors."""

import numpy as np
import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _fn(name):
    return getattr(torchish, name)


def _np(t):
    return np.asarray(t.detach().cpu().tolist()).reshape(tuple(t.shape))


def _data(shape, complex_, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if complex_ else a


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 0, 3)])
def test_geqrf_matches_lapack(shape, dtype):
    a = _data(shape, dtype.startswith("complex")).astype(dtype)
    ours = _fn("geqrf")(torchish.tensor(a))
    theirs = torch.geqrf(torch.tensor(a))
    assert type(ours).__name__ == "geqrf" and ours.__match_args__ == ("a", "tau")
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype) and tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(o), t.numpy(), atol=tol, rtol=tol)


def test_geqrf_method_and_not_differentiable():
    a = _data((4, 3), False)
    A = torchish.tensor(a, requires_grad=True)
    ours = A.geqrf()
    theirs = torch.tensor(a, requires_grad=True).geqrf()
    for o, t in zip(ours, theirs):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__ == "GeqrfBackward0"
    raises_same(lambda: ours.a.sum().backward(), lambda: theirs.a.sum().backward())


@pytest.mark.parametrize("make", [
    lambda T: T.ones(3), lambda T: T.ones(3, 3, dtype=T.int64),
    lambda T: T.ones(3, 3, dtype=T.float16), lambda T: T.ones(3, 3, dtype=T.bfloat16)])
def test_geqrf_errors(make):
    raises_same(lambda: _fn("geqrf")(make(torchish)), lambda: torch.geqrf(make(torch)))


@pytest.mark.parametrize("complex_", [False, True])
def test_orgqr_is_householder_product(complex_):
    a = _data((2, 5, 3), complex_)
    qr, tau = torch.geqrf(torch.tensor(a))
    A = torchish.tensor(qr.numpy(), requires_grad=True)
    ours = _fn("orgqr")(A, torchish.tensor(tau.numpy()))
    At = qr.clone().requires_grad_()
    theirs = torch.orgqr(At, tau)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), atol=1e-12)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    ours.abs().sum().backward()
    theirs.abs().sum().backward()
    np.testing.assert_allclose(_np(A.grad), At.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(_np(A.orgqr(torchish.tensor(tau.numpy()))), theirs.detach(),
                               atol=1e-12)


def test_orgqr_integral_error():
    raises_same(lambda: _fn("orgqr")(torchish.ones(3, 2, dtype=torchish.int32),
                                      torchish.ones(2, dtype=torchish.int32)),
                 lambda: torch.orgqr(torch.ones(3, 2, dtype=torch.int32),
                                     torch.ones(2, dtype=torch.int32)))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("left,transpose,qshape,cshape", [
    (True, False, (2, 5, 3), (2, 5, 4)), (True, True, (2, 5, 3), (2, 5, 4)),
    (False, False, (2, 4, 3), (2, 2, 4)), (False, True, (2, 4, 3), (2, 2, 4)),
    (True, False, (3, 4), (3, 2)),   # a wide input (more columns than rows)
])
def test_ormqr_values_and_gradients(left, transpose, qshape, cshape, complex_):
    qr, tau = torch.geqrf(torch.tensor(_data(qshape, complex_)))
    if len(qshape) == 2 and qshape[0] < qshape[1]:
        tau = tau[:min(cshape[0], qshape[1])]
    c = _data(cshape, complex_, seed=1)
    A, C = (torchish.tensor(x, requires_grad=True) for x in (qr.numpy(), c))
    At, Ct = qr.clone().requires_grad_(), torch.tensor(c, requires_grad=True)
    ours = A.ormqr(torchish.tensor(tau.numpy()), C, left, transpose)
    theirs = torch.ormqr(At, tau, Ct, left=left, transpose=transpose)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), atol=1e-12)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == "OrmqrBackward0"
    (ours.abs() ** 2).sum().backward()
    (theirs.abs() ** 2).sum().backward()
    np.testing.assert_allclose(_np(A.grad), At.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(_np(C.grad), Ct.grad.numpy(), atol=1e-10)


def test_ormqr_keywords_and_empty():
    qr, tau = torch.geqrf(torch.tensor(_data((4, 3), False)))
    c = np.zeros((4, 0))
    ours = _fn("ormqr")(torchish.tensor(qr.numpy()), torchish.tensor(tau.numpy()),
                          torchish.tensor(c), left=True, transpose=True)
    assert tuple(ours.shape) == tuple(torch.ormqr(qr, tau, torch.tensor(c)).shape)


_F64 = "float64"


@pytest.mark.parametrize("case", [
    ((3,), (3,), (3, 2), {}),                         # input 1-D
    ((4, 3), (3,), (4,), {}),                         # other 1-D
    ((4, 3), (3,), (3, 2), {}),                       # other rows
    ((4, 3), (3,), (3, 2), {"left": False}),          # other columns
    ((4, 3), (2,), (2, 4), {"left": False}),          # tau too short on the right
    ((4, 3), (1, 3), (4, 2), {}),                     # tau ndim
    ((4, 3), (4,), (4, 2), {}),                       # tau length
    ((2, 4, 3), (2, 3), (4, 2), {}),                  # other ndim
    ((2, 4, 3), (3, 3), (3, 4, 2), {}),               # batch of tau (first)
    ((2, 4, 3), (2, 3), (3, 4, 2), {}),               # batch of other
    ((4, 3), (3,), (4, 2), {"tau": "float32"}),
    ((4, 3), (3,), (4, 2), {"other": "float32"}),
    ((4, 3), (3,), (4, 2), {"all": "int32"}),
])
def test_ormqr_errors(case):
    qs, ts, cs, kw = case
    kw = dict(kw)
    dt = {"tau": kw.pop("tau", _F64), "other": kw.pop("other", _F64)}
    if "all" in kw:
        dt = {"tau": kw["all"], "other": kw["all"]}
        qdt = kw.pop("all")
    else:
        qdt = _F64

    def call(T):
        ormqr = torch.ormqr if T is torch else _fn("ormqr")
        return ormqr(T.ones(qs, dtype=getattr(T, qdt)), T.ones(ts, dtype=getattr(T, dt["tau"])),
                       T.ones(cs, dtype=getattr(T, dt["other"])), **kw)
    raises_same(lambda: call(torchish), lambda: call(torch))


def test_ormqr_and_geqrf_under_compile():
    qr, tau = torch.geqrf(torch.tensor(_data((4, 3), False)))
    c = _data((4, 2), False, seed=2)

    def f(a, t, x):
        return _fn("ormqr")(a, t, x, transpose=True) + _fn("geqrf")(a).a[:, :2]

    args = [torchish.tensor(x) for x in (qr.numpy(), tau.numpy(), c)]
    compiled = torchish.compile(f)(*args)
    np.testing.assert_allclose(_np(compiled), _np(f(*args)), atol=1e-12)
