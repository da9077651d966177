"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve against real PyTorch (LAPACK's sytrf
and sytrs): the packed LD, Bunch-Kaufman pivots (1x1 and 2x2 blocks), info, the hermitian
flag, solutions, batching, errors and PyTorch's NotImplemented nodes."""

import numpy as np
import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _fn(name):
    return getattr(torchish.linalg, name)


def _np(t):
    return np.asarray(t.detach().cpu().tolist()).reshape(tuple(t.shape))


def _matrix(shape, complex_, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    a[..., 0, 0] = 0        # a zero first pivot: Bunch-Kaufman takes a 2x2 block or swaps
    a[..., 2, 2] *= 1e-3
    return a


@pytest.mark.parametrize("dtype,hermitian", [("float64", False), ("float32", False),
                                             ("complex128", False), ("complex128", True),
                                             ("complex64", True), ("float64", True)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factor_and_solve_match_lapack(dtype, hermitian, seed):
    a = _matrix((2, 6, 6), dtype.startswith("complex"), seed).astype(dtype)
    b = _matrix((2, 6, 3), dtype.startswith("complex"), seed + 10).astype(dtype)
    LDt, pt, it = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    ours = _fn("ldl_factor_ex")(torchish.tensor(a), hermitian=hermitian)
    assert type(ours).__name__ == "linalg_ldl_factor_ex"
    assert [str(t.dtype) for t in ours] == [str(t.dtype) for t in (LDt, pt, it)]
    np.testing.assert_array_equal(_np(ours.pivots), pt.numpy())
    np.testing.assert_array_equal(_np(ours.info), it.numpy())
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    np.testing.assert_allclose(_np(ours.LD), LDt.numpy(), atol=tol, rtol=tol)
    xt = torch.linalg.ldl_solve(LDt, pt, torch.tensor(b), hermitian=hermitian)
    x = _fn("ldl_solve")(ours.LD, ours.pivots, torchish.tensor(b), hermitian=hermitian)
    assert str(x.dtype) == str(xt.dtype)
    np.testing.assert_allclose(_np(x), xt.numpy(), atol=tol * 10, rtol=tol * 10)


def test_two_by_two_pivots_are_exercised():
    # (guards the test above: its matrices need both kinds of block)
    a = _matrix((6, 6), False, 0)
    pivots = torch.linalg.ldl_factor(torch.tensor(a)).pivots
    assert (pivots < 0).any() and (pivots > 0).any()


def test_ldl_factor_namedtuple_and_only_lower_triangle_read():
    a = _matrix((5, 5), False, 3)
    a_upper_garbage = np.tril(a) + np.triu(np.full((5, 5), 7.0), 1)
    ours = _fn("ldl_factor")(torchish.tensor(a_upper_garbage))
    theirs = torch.linalg.ldl_factor(torch.tensor(a_upper_garbage))
    assert type(ours).__name__ == "linalg_ldl_factor" and ours.__match_args__ == ("LD", "pivots")
    np.testing.assert_allclose(_np(ours.LD), theirs.LD.numpy(), atol=1e-10)
    np.testing.assert_array_equal(_np(ours.pivots), theirs.pivots.numpy())


def test_singular_info_and_errors():
    a = np.zeros((2, 3, 3))
    a[0] = np.eye(3)
    a[1, 0, 0] = 1.0           # info 2 in the second matrix
    ours = _fn("ldl_factor_ex")(torchish.tensor(a))
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_array_equal(_np(ours.info), theirs.info.numpy())
    np.testing.assert_array_equal(_np(ours.pivots), theirs.pivots.numpy())
    raises_same(lambda: _fn("ldl_factor")(torchish.tensor(a)),
                lambda: torch.linalg.ldl_factor(torch.tensor(a)))
    raises_same(lambda: _fn("ldl_factor_ex")(torchish.tensor(a), check_errors=True),
                lambda: torch.linalg.ldl_factor_ex(torch.tensor(a), check_errors=True))


@pytest.mark.parametrize("make", [
    lambda T: T.zeros(3, 4), lambda T: T.zeros(3), lambda T: T.zeros(3, 3, dtype=T.int32),
    lambda T: T.zeros(3, 3, dtype=T.float16)])
def test_factor_errors(make):
    raises_same(lambda: _fn("ldl_factor")(make(torchish)),
                lambda: torch.linalg.ldl_factor(make(torch)))


def test_empty():
    ours = _fn("ldl_factor_ex")(torchish.zeros(2, 0, 0))
    theirs = torch.linalg.ldl_factor_ex(torch.zeros(2, 0, 0))
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs]
    assert [str(t.dtype) for t in ours] == [str(t.dtype) for t in theirs]


@pytest.mark.parametrize("case", ["pivots_long", "pivots_float", "b_dtype", "LD_rect",
                                  "pivots_short", "b_rows", "b_1d", "LD_1d", "pivots_batch"])
def test_solve_errors(case):
    def call(T):
        factor = torch.linalg.ldl_factor if T is torch else _fn("ldl_factor")
        LD, p = factor(T.eye(4) * 2)
        B = T.ones(4, 2)
        args = {"pivots_long": (LD, p.long(), B), "pivots_float": (LD, p.float(), B),
                "b_dtype": (LD, p, B.double()), "LD_rect": (LD[:3], p, B),
                "pivots_short": (LD, p[:3], B), "b_rows": (LD, p, B[:3]), "b_1d": (LD, p, B[0]),
                "LD_1d": (LD[0], p, B), "pivots_batch": (LD, p[None].expand(2, 4), B)}[case]
        fn = torch.linalg.ldl_solve if T is torch else _fn("ldl_solve")
        return fn(*args)
    if case == "pivots_long":   # (valid: compare the solutions)
        np.testing.assert_allclose(_np(call(torchish)), call(torch).numpy(), atol=1e-6)
        return
    raises_same(lambda: call(torchish), lambda: call(torch))


def test_not_differentiable_as_pytorch():
    a = _matrix((4, 4), False, 5)
    for T in (torchish, torch):
        A = T.tensor(a, requires_grad=True)
        LD, p, _ = (torch.linalg.ldl_factor_ex if T is torch else _fn("ldl_factor_ex"))(A)
        B = T.ones(4, 2, dtype=T.float64, requires_grad=True)
        x = (torch.linalg.ldl_solve if T is torch else _fn("ldl_solve"))(LD.detach(), p, B)
        assert type(LD.grad_fn).__name__ == type(x.grad_fn).__name__ == "NotImplemented"
    raises_same(lambda: _fn("ldl_factor_ex")(torchish.tensor(a, requires_grad=True))[0]
                .sum().backward(),
                lambda: torch.linalg.ldl_factor_ex(torch.tensor(a, requires_grad=True))[0]
                .sum().backward())
    raises_same(lambda: _fn("ldl_solve")(torchish.eye(2, dtype=torchish.float64),
                                         torchish.tensor([1, 2], dtype=torchish.int32),
                                         torchish.ones(2, 1, dtype=torchish.float64,
                                                       requires_grad=True)).sum().backward(),
                lambda: torch.linalg.ldl_solve(torch.eye(2, dtype=torch.float64),
                                               torch.tensor([1, 2], dtype=torch.int32),
                                               torch.ones(2, 1, dtype=torch.float64,
                                                          requires_grad=True)).sum().backward())


def test_under_compile():
    a = _matrix((5, 5), False, 7)
    b = np.arange(10.0).reshape(5, 2)

    def f(A, B):
        LD, p, info = _fn("ldl_factor_ex")(A)
        return _fn("ldl_solve")(LD, p, B)

    args = (torchish.tensor(a), torchish.tensor(b))
    expected = torch.linalg.solve(torch.tensor(a).tril() + torch.tensor(a).tril(-1).mT,
                                  torch.tensor(b))
    np.testing.assert_allclose(_np(torchish.compile(f)(*args)), expected.numpy(), atol=1e-9)
