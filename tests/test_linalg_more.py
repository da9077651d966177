"""Differential tests of the factorizations and solvers in `_ops/linalg_decomp.py` against
PyTorch: values, dtypes, named-tuple fields, grad_fn names, float64 gradients, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:torch.(qr|triangular_solve) is deprecated")


def _ours(t, grad=False):
    x = torchish.tensor(t.detach().cpu().numpy())
    return x.requires_grad_(True) if grad else x


def _np(x):
    return np.asarray(x.detach().cpu().numpy())


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _same(actual, expected, values=True, grad_fn=True, tol=1e-7):
    if isinstance(expected, tuple):
        assert type(actual).__name__ == type(expected).__name__
        assert len(actual) == len(expected)
        if hasattr(expected, "n_fields"):  # a torch.return_types structseq: same field names
            for f in actual.__match_args__:
                getattr(expected, f)
        for a, e in zip(actual, expected):
            _same(a, e, values, grad_fn, tol)
        return
    assert str(actual.dtype) == str(expected.dtype)
    assert tuple(actual.shape) == tuple(expected.shape)
    if grad_fn:
        assert _name(actual) == _name(expected)
    if values:
        np.testing.assert_allclose(_np(actual), _np(expected), rtol=tol, atol=tol)


def _grads(t_out, o_out, t_in, o_in):
    """Compare d(sum of outputs * fixed weights)/d(inputs) with PyTorch's."""
    rng = np.random.default_rng(0)
    t_outs = [t for t in (t_out if isinstance(t_out, tuple) else (t_out,))
              if t.requires_grad]
    o_outs = [t for t in (o_out if isinstance(o_out, tuple) else (o_out,))
              if t.requires_grad]
    assert len(t_outs) == len(o_outs)
    ws = [rng.standard_normal(tuple(t.shape)) for t in t_outs]
    tg = torch.autograd.grad(t_outs, t_in, [torch.tensor(w) for w in ws])
    og = torchish.autograd.grad(o_outs, o_in, [torchish.tensor(w) for w in ws])
    for a, e in zip(og, tg):
        np.testing.assert_allclose(_np(a), _np(e), rtol=1e-6, atol=1e-8)


@pytest.fixture(scope="module")
def mats():
    g = torch.Generator().manual_seed(0)
    A = torch.randn(2, 4, 3, dtype=torch.float64, generator=g)
    S = torch.randn(2, 3, 3, dtype=torch.float64, generator=g)
    S = S @ S.mT + 3 * torch.eye(3, dtype=torch.float64)
    B = torch.randn(2, 3, 2, dtype=torch.float64, generator=g)
    return A, S, B


def _leaves(*ts):
    t = tuple(x.detach().clone().requires_grad_(True) for x in ts)
    return t, tuple(_ours(x, True) for x in ts)


# ---- legacy spellings ---------------------------------------------------------------------

def test_svd_legacy(mats):
    A = mats[0]
    (ta,), (oa,) = _leaves(A)
    for some in (True, False):
        e, a = torch.svd(ta, some=some), torchish.svd(oa, some=some)
        assert type(a).__name__ == "svd" and a.__match_args__ == ("U", "S", "V")
        _same(a, e, values=False)
        # singular vectors are unique up to sign (PyTorch documents it): compare S and A
        np.testing.assert_allclose(_np(a.S), _np(e.S), rtol=1e-10)
        k = 3
        rec = a.U[..., :k] @ torchish.diag_embed(a.S) @ a.V[..., :k].mT
        np.testing.assert_allclose(_np(rec), A.cpu().numpy(), atol=1e-10)
    e, a = torch.svd(ta, compute_uv=False), torchish.svd(oa, compute_uv=False)
    _same(a, e)
    # a sign-invariant function of U, S, V (some=False: JAX differentiates the reduced SVD)
    for some in (True, False):
        e, a = torch.svd(ta, some), torchish.svd(oa, some)
        te = (e.U[..., :3] * e.S[..., None, :] @ e.V[..., :3].mT).pow(3).sum() + e.S.sum()
        oe = (a.U[..., :3] * a.S[..., None, :] @ a.V[..., :3].mT).pow(3).sum() + a.S.sum()
        _grads(te, oe, [ta], [oa])


def test_qr_legacy(mats):
    A = mats[0]
    (ta,), (oa,) = _leaves(A)
    for some in (True, False):
        with pytest.warns(UserWarning, match="torch.qr is deprecated"):
            a = torchish.qr(oa, some)
        e = torch.qr(ta, some)
        assert a.__match_args__ == ("Q", "R")
        _same(a, e, tol=1e-10)
    _grads(torch.qr(ta), torchish.qr(oa), [ta], [oa])


def test_triangular_solve(mats):
    _, S, B = mats
    (ts, tb), (os_, ob) = _leaves(S, B)
    for args in ((), (False,), (True, True), (False, True, True)):
        e = torch.triangular_solve(tb, ts, *args)
        a = torchish.triangular_solve(ob, os_, *args)
        assert a.__match_args__ == ("solution", "cloned_coefficient")
        _same(a, e, tol=1e-10)
        _grads(e, a, [ts, tb], [os_, ob])
    with pytest.raises(RuntimeError, match="Expected b to have at least 2 dimensions, but it has 1 "
                                           "dimensions instead"):
        torchish.triangular_solve(ob[0, :, 0], os_)


# ---- Cholesky -----------------------------------------------------------------------------

def test_cholesky_solve_inverse(mats):
    _, S, B = mats
    L = torch.linalg.cholesky(S)
    (tl, tb), (ol, ob) = _leaves(L, B)
    for upper in (False, True):
        tL, oL = (tl.mT, ol.mT) if upper else (tl, ol)
        e, a = torch.cholesky_solve(tb, tL, upper), torchish.cholesky_solve(ob, oL, upper)
        _same(a, e, tol=1e-10)
        _grads(e, a, [tl, tb], [ol, ob])
        e, a = torch.cholesky_inverse(tL, upper), torchish.cholesky_inverse(oL, upper)
        _same(a, e, tol=1e-10)
        _grads(e, a, [tl], [ol])
    assert ob.cholesky_solve(ol).shape == (2, 3, 2)
    with pytest.raises(RuntimeError, match="b should have at least 2 dimensions"):
        torchish.cholesky_solve(ob[0, :, 0], ol)


def test_cholesky_ex(mats):
    S = mats[1]
    (ts,), (os_,) = _leaves(S)
    for upper in (False, True):
        e, a = torch.linalg.cholesky_ex(ts, upper=upper), torchish.linalg.cholesky_ex(
            os_, upper=upper)
        assert a.__match_args__ == ("L", "info")
        _same(a, e, tol=1e-10)
        _grads(e[0], a[0], [ts], [os_])
    bad = torch.tensor([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 0.0], [0.0, -1.0]],
                        [[1.0, 0.0], [0.0, 1.0]]])
    info = torchish.linalg.cholesky_ex(_ours(bad)).info
    np.testing.assert_array_equal(_np(info), _np(torch.linalg.cholesky_ex(bad).info))
    with pytest.raises(torchish.linalg.LinAlgError, match="leading minor of order 2"):
        torchish.linalg.cholesky_ex(_ours(bad), check_errors=True)
    assert issubclass(torchish.linalg.LinAlgError, RuntimeError)


# ---- solve / inv --------------------------------------------------------------------------

def test_solve_inv_ex(mats):
    _, S, B = mats
    (ts, tb), (os_, ob) = _leaves(S, B)
    e, a = torch.linalg.solve_ex(ts, tb), torchish.linalg.solve_ex(os_, ob)
    assert a.__match_args__ == ("result", "info")
    _same(a, e, tol=1e-10)
    _grads(e[0], a[0], [ts, tb], [os_, ob])
    e = torch.linalg.solve_ex(ts, tb.mT, left=False)
    _same(torchish.linalg.solve_ex(os_, ob.mT, left=False), e, tol=1e-10)
    e, a = torch.linalg.solve_ex(ts, tb[..., 0]), torchish.linalg.solve_ex(os_, ob[..., 0])
    _same(a, e, tol=1e-10)
    e, a = torch.linalg.inv_ex(ts), torchish.linalg.inv_ex(os_)
    assert a.__match_args__ == ("inverse", "info")
    _same(a, e, tol=1e-10)
    _grads(e[0], a[0], [ts], [os_])
    sing = torch.zeros(3, 3, dtype=torch.float64)
    sing[0, 0] = 1
    _same(torchish.linalg.inv_ex(_ours(sing)).info, torch.linalg.inv_ex(sing).info)
    _same(torchish.linalg.solve_ex(_ours(sing), _ours(B[0])).info,
          torch.linalg.solve_ex(sing, B[0]).info)
    with pytest.raises(torchish.linalg.LinAlgError, match="diagonal element 2 is zero"):
        torchish.linalg.inv_ex(_ours(sing), check_errors=True)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor"):
        torchish.linalg.solve_ex(torchish.ones(2, 2, dtype=torchish.int64),
                                 torchish.ones(2, dtype=torchish.int64))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        torchish.linalg.solve_ex(os_, ob.float())


# ---- lstsq --------------------------------------------------------------------------------

def test_lstsq(mats):
    A = mats[0]
    C = torch.randn(2, 4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    (ta, tc), (oa, oc) = _leaves(A, C)
    e, a = torch.linalg.lstsq(ta, tc), torchish.linalg.lstsq(oa, oc)
    assert a.__match_args__ == ("solution", "residuals", "rank", "singular_values")
    _same(a, e, tol=1e-10)
    _grads(e.solution, a.solution, [ta, tc], [oa, oc])
    for driver in ("gels", "gelsd", "gelss"):
        e = torch.linalg.lstsq(A, C, driver=driver)
        _same(torchish.linalg.lstsq(_ours(A), _ours(C), driver=driver), e, tol=1e-10)
    # rank-deficient: the minimum-norm solution, rank counted, no residuals
    D = A.clone()
    D[..., 2] = D[..., 0]
    e = torch.linalg.lstsq(D, C, driver="gelsd")
    _same(torchish.linalg.lstsq(_ours(D), _ours(C), driver="gelsd"), e, tol=1e-8)
    with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
        torchish.linalg.lstsq(oa, oc, driver="bad")


# ---- LU -----------------------------------------------------------------------------------

def test_lu_factor_lu_unpack(mats):
    A, S, _ = mats
    for M in (A, A.mT, S):
        (tm,), (om,) = _leaves(M)
        e, a = torch.linalg.lu_factor_ex(tm), torchish.linalg.lu_factor_ex(om)
        assert a.__match_args__ == ("LU", "pivots", "info")
        _same(a, e, tol=1e-10)
        _grads(e[0], a[0], [tm], [om])
        e, a = torch.linalg.lu_factor(tm), torchish.linalg.lu_factor(om)
        assert a.__match_args__ == ("LU", "pivots")
        _same(a, e, tol=1e-10)
        e, a = torch.linalg.lu(tm), torchish.linalg.lu(om)
        assert a.__match_args__ == ("P", "L", "U")
        _same(a, e, tol=1e-10)
        _grads(e, a, [tm], [om])
        LU, piv = torch.linalg.lu_factor(M)
        (tl,), (ol,) = _leaves(LU)
        for flags in ((True, True), (False, True), (True, False)):
            e, a = torch.lu_unpack(tl, piv, *flags), torchish.lu_unpack(ol, _ours(piv), *flags)
            assert a.__match_args__ == ("P", "L", "U")
            _same(a, e, tol=1e-10)
        e, a = torch.lu_unpack(tl, piv), torchish.lu_unpack(ol, _ours(piv))
        _grads(e, a, [tl], [ol])
    sing = torch.zeros(3, 3)
    _same(torchish.linalg.lu_factor_ex(_ours(sing)), torch.linalg.lu_factor_ex(sing))
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        torchish.linalg.lu_factor(_ours(sing))
    with pytest.raises(RuntimeError, match="Expected tensor with 2 or more dimensions"):
        torchish.linalg.lu_factor(torchish.ones(3))


def test_lu_solve(mats):
    _, S, B = mats
    LU, piv = torch.linalg.lu_factor(S)
    (tl, tb), (ol, ob) = _leaves(LU, B)
    op = _ours(piv)
    for left in (True, False):
        for adjoint in (False, True):
            tB, oB = (tb, ob) if left else (tb.mT, ob.mT)
            e = torch.linalg.lu_solve(tl, piv, tB, left=left, adjoint=adjoint)
            a = torchish.linalg.lu_solve(ol, op, oB, left=left, adjoint=adjoint)
            _same(a, e, tol=1e-10)
            _grads(e, a, [tl, tb], [ol, ob])


# ---- small composites ---------------------------------------------------------------------

def test_vecdot_diagonal_vander(mats):
    A = mats[0]
    (ta,), (oa,) = _leaves(A)
    e, a = torch.linalg.vecdot(ta, ta * 2), torchish.linalg.vecdot(oa, oa * 2)
    _same(a, e, tol=1e-10)
    _grads(e, a, [ta], [oa])
    _same(torchish.linalg.vecdot(oa[0, 0], oa[0, 1]), torch.linalg.vecdot(ta[0, 0], ta[0, 1]))
    _same(torchish.linalg.vecdot(oa, oa, dim=-2), torch.linalg.vecdot(ta, ta, dim=-2))
    with pytest.raises(RuntimeError, match="Expected x and y to have the same dtype"):
        torchish.linalg.vecdot(oa, oa.float())
    e, a = torch.linalg.diagonal(ta, offset=1), torchish.linalg.diagonal(oa, offset=1)
    _same(a, e)
    x = ta[0, :, 0]
    ox = oa[0, :, 0]
    for N in (None, 2, 5):
        e, a = torch.linalg.vander(x, N=N), torchish.linalg.vander(ox, N=N)
        _same(a, e, tol=1e-10)
        _grads(e, a, [ta], [oa])
    i = torch.tensor([1, 2, 3])
    _same(torchish.linalg.vander(_ours(i)), torch.linalg.vander(i))
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        torchish.linalg.vander(ox, N=0)


def test_cond(mats):
    A, S, _ = mats
    (ts, ta), (os_, oa) = _leaves(S, A)
    for p in (None, 2, -2, 1, -1, "fro", "nuc", float("inf"), float("-inf")):
        e, a = torch.linalg.cond(ts, p), torchish.linalg.cond(os_, p)
        _same(a, e, tol=1e-9)
        if p in (None, 2, -2, "nuc"):  # PyTorch's backward of the others fails (in-place inv)
            _grads(e, a, [ts], [os_])
    _same(torchish.linalg.cond(oa), torch.linalg.cond(ta), tol=1e-9)
    sing = torch.zeros(3, 3, dtype=torch.float64)
    _same(torchish.linalg.cond(_ours(sing), 1), torch.linalg.cond(sing, 1))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        torchish.linalg.cond(oa, 1)


# ---- eig, tensorinv/tensorsolve, householder_product ------------------------------------

def test_eig(mats):
    S = mats[1][0] + torch.triu(mats[1][1])  # nonsymmetric
    (ts,), (os_,) = _leaves(S)
    e, a = torch.linalg.eig(ts), torchish.linalg.eig(os_)
    assert a.__match_args__ == ("eigenvalues", "eigenvectors")
    # geev on both sides: same order and normalisation (unit norm, real largest component)
    _same(a, e, tol=1e-9)
    e, a = torch.linalg.eigvals(ts), torchish.linalg.eigvals(os_)
    _same(a, e, tol=1e-9)
    te, oe = e.real.sum() + (e.imag ** 2).sum(), a.real.sum() + (a.imag ** 2).sum()
    _grads(te, oe, [ts], [os_])
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        torchish.linalg.eig(torchish.ones(2, 3))


def test_tensorinv_tensorsolve(mats):
    g = torch.Generator().manual_seed(2)
    X = torch.randn(4, 2, 2, dtype=torch.float64, generator=g)
    (tx,), (ox,) = _leaves(X)
    e, a = torch.linalg.tensorinv(tx, ind=1), torchish.linalg.tensorinv(ox, ind=1)
    _same(a, e, grad_fn=False, tol=1e-10)  # PyTorch's node is ReshapeAliasBackward0
    _grads(e, a, [tx], [ox])
    with pytest.raises(RuntimeError, match="strictly positive integer for 'ind'"):
        torchish.linalg.tensorinv(ox, ind=0)
    Y = torch.randn(6, 2, 3, dtype=torch.float64, generator=g)
    B = torch.randn(2, 3, dtype=torch.float64, generator=g)
    (ty, tb), (oy, ob) = _leaves(Y, B)
    e, a = torch.linalg.tensorsolve(ty, tb, dims=(0,)), torchish.linalg.tensorsolve(oy, ob,
                                                                                    dims=(0,))
    _same(a, e, grad_fn=False, tol=1e-10)
    _grads(e, a, [ty, tb], [oy, ob])


def test_householder_product(mats):
    A = mats[0][0]
    q, tau = torch.geqrf(A)
    (tq, tt), (oq, ot) = _leaves(q, tau)
    e = torch.linalg.householder_product(tq, tt)
    a = torchish.linalg.householder_product(oq, ot)
    _same(a, e, tol=1e-10)
    np.testing.assert_allclose(_np(a), torch.linalg.qr(A).Q.cpu().numpy(), atol=1e-10)
    _grads(e, a, [tq, tt], [oq, ot])
    with pytest.raises(RuntimeError, match="must be greater than or equal to"):
        torchish.linalg.householder_product(oq.mT, ot)


def test_out_and_namespaces(mats):
    _, S, B = mats
    out = (torchish.empty(0, dtype=torchish.float64), torchish.empty(0, dtype=torchish.int32))
    r = torchish.linalg.inv_ex(_ours(S), out=out)
    assert r[0] is out[0] and r[1] is out[1]
    np.testing.assert_allclose(_np(out[0]), torch.linalg.inv(S).cpu().numpy(), rtol=1e-10)
    o = torchish.empty(0, dtype=torchish.float64)
    assert torchish.cholesky_solve(_ours(B), _ours(torch.linalg.cholesky(S)), out=o) is o
    with pytest.raises(TypeError):
        torchish.linalg.vander(_ours(B[0, :, 0]), out=o)
    assert torchish.lu(_ours(S), get_infos=True).__match_args__ == ("LU", "pivots", "info")
    assert _ours(S).lu()[1].dtype == torchish.int32
    assert _ours(S).cholesky_inverse().shape == (2, 3, 3)
    assert type(_ours(S).svd()).__name__ == "svd"


# ---- errors: PyTorch's exception type and message ------------------------------------------

ERRORS = [
    lambda t: t.cholesky_solve(t.ones(3, 2), t.ones(3, 4)),
    lambda t: t.cholesky_solve(t.ones(3, 2), t.ones(2, 2)),
    lambda t: t.cholesky_solve(t.ones(3, 2, dtype=t.float64), t.ones(3, 3)),
    lambda t: t.cholesky_solve(t.ones(3, 2, dtype=t.int64), t.ones(3, 3, dtype=t.int64)),
    lambda t: t.cholesky_inverse(t.ones(3)),
    lambda t: t.cholesky_inverse(t.ones(3, 3, dtype=t.int64)),
    lambda t: t.triangular_solve(t.ones(2, 2), t.ones(3, 3)),
    lambda t: t.svd(t.ones(3)),
    lambda t: t.svd(t.ones(3, 3, dtype=t.int64)),
    lambda t: t.linalg.cholesky_ex(t.ones(3, 2)),
    lambda t: t.linalg.solve_ex(t.ones(3, 3), t.ones(2, 2)),
    lambda t: t.linalg.solve_ex(t.ones(3, 3), t.ones(2, 2), left=False),
    lambda t: t.linalg.inv_ex(t.ones(3, 2)),
    lambda t: t.linalg.lstsq(t.ones(3, 2, dtype=t.int64), t.ones(3, 2, dtype=t.int64)),
    lambda t: t.linalg.lstsq(t.ones(3, 2), t.ones(3, 2, dtype=t.float64)),
    lambda t: t.linalg.lu_factor(t.ones(3, 3, dtype=t.int64)),
    lambda t: t.linalg.lu_factor(t.ones(3, 3), pivot=False),
    lambda t: t.linalg.lu(t.ones(3)),
    lambda t: t.linalg.lu_solve(t.eye(3), t.ones(3, dtype=t.int64), t.ones(3, 2)),
    lambda t: t.linalg.lu_solve(t.ones(3, 2), t.ones(2, dtype=t.int32), t.ones(3, 2)),
    lambda t: t.lu_unpack(t.eye(3), t.ones(3, dtype=t.int64)),
    lambda t: t.linalg.vecdot(t.ones(3), t.ones(4)),
    lambda t: t.linalg.cond(t.ones(3)),
    lambda t: t.linalg.cond(t.ones(3, 3, dtype=t.int64)),
    lambda t: t.linalg.eig(t.ones(3)),
    lambda t: t.linalg.householder_product(t.ones(3, 2), t.ones(2, 2)),
    lambda t: t.linalg.householder_product(t.ones(3, 2), t.ones(2, dtype=t.float64)),
    # the plain (not *_ex) factorizations check `info` as PyTorch's do
    lambda t: t.linalg.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda t: t.linalg.cholesky(t.stack([t.eye(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])])),
    lambda t: t.linalg.cholesky(t.tensor([[1.0, 2.0], [2.0, 1.0]]), upper=True),
    lambda t: t.tensor([[1.0, 2.0], [2.0, 1.0]]).cholesky(),
    lambda t: t.linalg.inv(t.zeros(2, 2)),
    lambda t: t.inverse(t.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda t: t.linalg.inv(t.stack([t.eye(2), t.tensor([[1.0, 2.0], [2.0, 4.0]])])),
    lambda t: t.linalg.solve(t.tensor([[1.0, 2.0], [2.0, 4.0]]), t.ones(2)),
    lambda t: t.linalg.solve(t.stack([t.eye(2), t.zeros(2, 2)]), t.ones(2, 2)),
    lambda t: t.linalg.solve(t.ones(3, 3), t.ones(4)),
    lambda t: t.linalg.solve(t.ones(3, 3), t.ones(2, 4), left=False),
    lambda t: t.linalg.inv(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.linalg.cholesky(t.ones(2, 2, dtype=t.int64)),
    lambda t: t.linalg.inv(t.ones(2, 3)),
    lambda t: t.linalg.cholesky(t.ones(2, 3)),
    lambda t: t.linalg.eigh(t.ones(2, 3)),
    lambda t: t.linalg.eigvalsh(t.ones(2, 3)),
    lambda t: t.linalg.eigh(t.ones(3)),
    lambda t: t.linalg.det(t.ones(2, 3)),
    lambda t: t.linalg.matrix_exp(t.ones(2, 3)),
    lambda t: t.linalg.det(t.eye(2, dtype=t.int64)),
    lambda t: t.eye(2, dtype=t.int64).det(),
    lambda t: t.matrix_exp(t.eye(2, dtype=t.int64)),
    lambda t: t.linalg.solve(t.eye(2, dtype=t.int64), t.eye(2, dtype=t.int64)),
    lambda t: t.linalg.solve(t.eye(2), t.ones(2, dtype=t.float64)),
    lambda t: t.linalg.svdvals(t.eye(2, dtype=t.int64)),
    lambda t: t.linalg.svd(t.eye(2, dtype=t.int64)),
    lambda t: t.linalg.qr(t.eye(2, dtype=t.int64)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_errors(k):
    with pytest.raises(Exception) as expected:
        ERRORS[k](torch)
    with pytest.raises(Exception) as actual:
        ERRORS[k](torchish)
    assert type(actual.value).__name__ == type(expected.value).__name__   # _LinAlgError too
    assert isinstance(actual.value, RuntimeError) == isinstance(expected.value, RuntimeError)
    assert str(actual.value) == str(expected.value)


def test_plain_factorizations_grad_fn():
    for name, fn in [("cholesky", lambda t, x: t.cholesky(x)),
                     ("linalg.cholesky", lambda t, x: t.linalg.cholesky(x)),
                     ("inverse", lambda t, x: t.inverse(x)),
                     ("linalg.solve", lambda t, x: t.linalg.solve(x, t.ones(2)))]:
        expected = fn(torch, torch.eye(2, requires_grad=True)).grad_fn.name()
        assert fn(torchish, torchish.eye(2, requires_grad=True)).grad_fn.name() == expected, name


def test_lu_solve_legacy(mats):
    _, S, B = mats
    LU, piv = torch.linalg.lu_factor(S)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        a = torchish.lu_solve(_ours(B), _ours(LU), _ours(piv))
    _same(a, torch.linalg.lu_solve(LU, piv, B), grad_fn=False, tol=1e-10)


# ---- einsum: PyTorch's equation/operand validation and messages ------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (2, 3)]), ("ijk", [(2, 3)]), ("i", [(2, 3)]), ("ij,jk", [(2, 3)]),
    ("ij", [(2, 3), (3,)]), ("ij->k", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ij->jk", [(2, 3)]),
    ("i1", [(2, 3)]), ("i_j", [(2, 3)]), ("ij->i1", [(2, 3)]), ("ij-", [(2, 3)]),
    ("ij->ji,", [(2, 3)]), ("ij->->j", [(2, 3)]), ("...->...->...", [(2, 3)]),
    ("...ij", [(2, 3)]), ("...ij", [(2, 3, 4)]), ("i...", [(2, 3, 4)]), ("i...j...", [(2, 3, 4)]),
    ("i.j", [(2, 3)]), ("i..j", [(2, 3)]), ("ij..", [(2, 3)]), ("i....j", [(2, 3)]),
    ("ij->...", [(2, 3)]), ("ij->...i", [(2, 3)]), ("...->......", [(2, 3)]),
    ("ij->j.", [(2, 3)]), ("ij->..", [(2, 3)]), ("...ijk", [(2, 3)]), ("i...jk", [(2, 3)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("ij,jk->ik", [(2, 3), (1, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 1)]), ("ii", [(2, 3)]), ("ii->i", [(1, 3)]), ("ii->", [(2, 2)]),
    ("ii,i->i", [(1, 1), (3,)]), ("ii...", [(2, 3, 4)]),
    ("...i,...i->...", [(2, 3), (4, 3)]), ("...i,...i->...", [(2, 3), (1, 3)]),
    ("...ij,...j->...i", [(4, 2, 3), (5, 1, 3)]), ("...ij,...j", [(2, 3), (7, 3)]),
    ("ii...,i...->i...", [(3, 3, 4, 5), (3, 6, 5)]), ("ij...,j...->i...", [(2, 3, 4, 5), (3, 5)]),
    ("->", [()]), ("", [()]), ("...", [()]), ("i j", [(2, 3)]), ("ij ->j i", [(2, 3)]),
    ("ij,->ji", [(2, 3)]), (",ij->ji", [(2, 3)]), ("ba", [(2, 3)]), ("Ba", [(2, 3)]),
    ("bA", [(2, 3)]), ("ij,kl->ijkl", [(0, 3), (2, 0)]), ("i,i->", [(0,), (1,)]),
    ("ij,jk->ik", [(), (3, 4)]), ("ijk->z", [(2, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (3, 5)]), ("ij", [(2, 3), (3, 4), (2, 3)]),
    ("ij,jk,kl->iz", [(2, 3), (3, 4), (4, 5)]), ("ij,jk,kl->il", [(2, 3), (1, 4), (4, 5)]),
]


def _einsum_both(build):
    try:
        expected = build(torch)
    except Exception as exc:  # noqa: BLE001 - the oracle's error is what we compare against
        with pytest.raises(type(exc)) as actual:
            build(torchish)
        assert str(actual.value) == str(exc)
        return
    got = build(torchish)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("k", range(len(EINSUM_CASES)))
def test_einsum_validation(k):
    equation, shapes = EINSUM_CASES[k]
    rng = np.random.default_rng(k)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    _einsum_both(lambda t: t.einsum(equation, *[t.tensor(d) for d in data]))


EINSUM_CALLS = [
    lambda t: t.einsum(), lambda t: t.einsum("ij"),
    lambda t: t.einsum("ij", [t.ones(2, 3)]),
    lambda t: t.einsum("ij,jk", (t.ones(2, 3), t.ones(3, 4))),
    lambda t: t.einsum("ij,jk,kl->il", [t.ones(2, 3), t.ones(3, 4)]),
    lambda t: t.einsum("ij,jk->ik", t.ones(2, 3), 5), lambda t: t.einsum(5, "ij"),
    lambda t: t.einsum("ij", [t.ones(2, 3)], [t.ones(2, 3)]),
    lambda t: t.einsum(t.arange(6.).reshape(2, 3), [0, 1], t.ones(3, 4), [1, 2], [0, 2]),
    lambda t: t.einsum(t.arange(6.).reshape(2, 3), [0, 1], t.ones(3, 4), [1, 2]),
    lambda t: t.einsum(t.ones(2, 3), [0, 1, 2]), lambda t: t.einsum(t.ones(2, 3), [0, 52]),
    lambda t: t.einsum(t.ones(2, 3), [0, -1]), lambda t: t.einsum(t.ones(2, 3), [0, 1], [0, 0]),
    lambda t: t.einsum(t.ones(2, 3), [0, 1], [2]), lambda t: t.einsum(t.ones(2, 3), [26, 27], [27]),
    lambda t: t.einsum(t.ones(2, 3), [0, 1], t.ones(3, 4), [0, 2]),
    lambda t: t.einsum(t.arange(6.).reshape(2, 3), [Ellipsis, 1], [Ellipsis]),
    lambda t: t.einsum(t.ones(2, 3), [0, Ellipsis], t.ones(3, 4), [Ellipsis, 1], [Ellipsis]),
    lambda t: t.einsum(t.ones(2, 3), [0, "a"]), lambda t: t.einsum(t.ones(2, 3), [0, 1], []),
    lambda t: t.einsum(t.ones(2, 3), []),
]


@pytest.mark.parametrize("k", range(len(EINSUM_CALLS)))
def test_einsum_call_forms(k):
    _einsum_both(EINSUM_CALLS[k])


def test_einsum_broadcast_grad():
    a, b = np.arange(2.).reshape(2, 1), np.arange(12.).reshape(3, 4)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    oa, ob = torchish.tensor(a, requires_grad=True), torchish.tensor(b, requires_grad=True)
    torch.einsum("ij,jk->ik", ta, tb).sum().backward()
    torchish.einsum("ij,jk->ik", oa, ob).sum().backward()
    np.testing.assert_allclose(oa.grad.numpy(), ta.grad.numpy())
    np.testing.assert_allclose(ob.grad.numpy(), tb.grad.numpy())


def test_einsum_checks_under_jit():
    import jax
    x = jax.numpy.ones((2, 3))

    def f(v):
        return torchish.einsum("ij,jk->ik", torchish.from_jax(v), torchish.from_jax(v)).jax()
    with pytest.raises(RuntimeError, match="subscript j has size 2 for operand 1"):
        jax.jit(f)(x)
    g = jax.jit(lambda v: torchish.einsum("ij,kj->ik", torchish.from_jax(v),
                                          torchish.from_jax(v)).jax())
    np.testing.assert_allclose(np.asarray(g(x)), np.full((2, 2), 3.0))


@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_linalg_qr_modes_and_return_types(mats, mode):
    A = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], dtype=torch.float64, requires_grad=True)
    a = _ours(A, grad=True)
    expected, actual = torch.linalg.qr(A, mode=mode), torchish.linalg.qr(a, mode=mode)
    _same(actual, expected, tol=1e-10)
    assert repr(actual).splitlines()[0] == repr(expected).splitlines()[0]
    if mode == "r" or mode == "complete":   # PyTorch has no derivative for these (3x2 A)
        with pytest.raises(RuntimeError) as e_t:
            expected.R.sum().backward()
        with pytest.raises(RuntimeError) as e_o:
            actual.R.sum().backward()
        assert str(e_o.value) == str(e_t.value)
    else:
        _grads(expected, actual, A, a)
    for fn in ("svd", "eigh"):
        M = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
        assert repr(getattr(torchish.linalg, fn)(_ours(M))).splitlines()[0] == \
            repr(getattr(torch.linalg, fn)(M)).splitlines()[0]


def test_linalg_qr_bad_mode():
    with pytest.raises(RuntimeError) as e_t:
        torch.linalg.qr(torch.ones(2, 2), mode="x")
    with pytest.raises(RuntimeError) as e_o:
        torchish.linalg.qr(torchish.ones(2, 2), mode="x")
    assert str(e_o.value) == str(e_t.value)


@pytest.mark.parametrize("name", ["cholesky", "cholesky_ex", "eigh", "eigvalsh", "eig",
                                  "matrix_norm", "matrix_rank", "norm", "matrix_exp", "cond",
                                  "det", "inv"])
def test_linalg_keyword_names(name):
    """PyTorch names the matrix `input` for most torch.linalg functions, `A` for det/inv."""
    def accepted(L):
        out = []
        for kw in ("input", "A"):
            try:
                getattr(L.linalg, name)(**{kw: L.eye(2)})
                out.append(True)
            except TypeError:
                out.append(False)
        return out
    assert accepted(torchish) == accepted(torch)


def test_linalg_matmul_is_matmul():
    def program(T):
        a = T.arange(6.0).view(2, 3).requires_grad_()
        y = T.linalg.matmul(a, T.ones(3, 2))
        out = T.empty(2, 2)
        T.linalg.matmul(a.detach(), T.ones(3), out=T.empty(2))
        T.linalg.matmul(a.detach(), T.ones(3, 2), out=out)
        try:
            T.linalg.matmul(a, T.ones(2, 2))
        except RuntimeError as e:
            err = str(e)
        return y.tolist(), y.grad_fn.name(), out.tolist(), err

    assert program(torchish) == program(torch)


def test_matrix_norm_dim_type_error_as_pytorch():
    def message(T, **kwargs):
        try:
            T.linalg.matrix_norm(T.ones(2, 2), **kwargs)
        except TypeError as e:
            return str(e)

    for kwargs in ({"dim": 1}, {"dim": None}):
        assert message(torchish, **kwargs) == message(torch, **kwargs)
