"""Operand checks of the linear-algebra ops (torchish/_ops/linalg_checks.py and its callers)
against real PyTorch: each bad input raises PyTorch's exception type and message, word for
word, and valid inputs at the same call sites still work."""

import numpy as np
import pytest

import torchish
from differential import raises_same

torch = pytest.importorskip("torch")


def _z(T, *shape, dtype="float64"):
    return T.zeros(*shape, dtype=getattr(T, dtype))


def _eye(T, n=3, dtype="float64", batch=()):
    return T.eye(n, dtype=getattr(T, dtype)).expand(*batch, n, n).clone()


def _lu(T):
    return T.linalg.lu_factor(_eye(T))


# name -> f(T): a call PyTorch refuses. Grouped by the check (and its message) it hits.
BAD = {
    # "<name>: The input tensor A must have at least 2 dimensions."
    "det_1d": lambda T: T.linalg.det(_z(T, 3)),
    "inv_1d": lambda T: T.linalg.inv(_z(T, 3)),
    "inv_ex_1d": lambda T: T.linalg.inv_ex(_z(T, 3)),
    "cholesky_1d": lambda T: T.linalg.cholesky(_z(T, 3)),
    "cholesky_ex_1d": lambda T: T.linalg.cholesky_ex(_z(T, 3)),
    "torch_cholesky_1d": lambda T: T.cholesky(_z(T, 3)),
    "cholesky_inverse_1d": lambda T: T.cholesky_inverse(_z(T, 3)),
    "eigh_1d": lambda T: T.linalg.eigh(_z(T, 3)),
    "eigvalsh_1d": lambda T: T.linalg.eigvalsh(_z(T, 3)),
    "eig_1d": lambda T: T.linalg.eig(_z(T, 3)),
    "eigvals_1d": lambda T: T.linalg.eigvals(_z(T, 3)),
    "matrix_exp_1d": lambda T: T.linalg.matrix_exp(_z(T, 3)),
    "slogdet_1d": lambda T: T.linalg.slogdet(_z(T, 3)),
    "torch_slogdet_1d": lambda T: T.slogdet(_z(T, 3)),
    "logdet_1d": lambda T: T.logdet(_z(T, 3)),
    "solve_1d": lambda T: T.linalg.solve(_z(T, 3), _z(T, 3)),
    "solve_triangular_A_1d": lambda T: T.linalg.solve_triangular(_z(T, 3), _z(T, 3, 1),
                                                                 upper=True),
    "solve_triangular_B_1d": lambda T: T.linalg.solve_triangular(_eye(T), _z(T, 3),
                                                                 upper=True),
    "lu_solve_LU_1d": lambda T: T.linalg.lu_solve(_z(T, 3), T.ones(3, dtype=T.int32),
                                                  _z(T, 3, 1)),
    "lu_solve_B_1d": lambda T: T.linalg.lu_solve(_lu(T)[0], _lu(T)[1], _z(T, 3)),
    "ldl_factor_1d": lambda T: T.linalg.ldl_factor(_z(T, 3)),
    "ldl_solve_1d": lambda T: T.linalg.ldl_solve(_z(T, 3), T.ones(3, dtype=T.int32),
                                                 _z(T, 3, 1)),
    "qr_1d": lambda T: T.linalg.qr(_z(T, 3)),
    # "<name>: The input tensor must have at least 2 dimensions." (no operand name)
    "cond_1d": lambda T: T.linalg.cond(_z(T, 3)),
    "cond_fro_1d": lambda T: T.linalg.cond(_z(T, 3), "fro"),
    # "<what> should have at least 2 dimensions, but has N dimensions instead"
    "svd_1d": lambda T: T.svd(_z(T, 3)),
    "cholesky_solve_b_1d": lambda T: T.cholesky_solve(_z(T, 3), _eye(T)),
    "cholesky_solve_A_1d": lambda T: T.cholesky_solve(_z(T, 3, 1), _z(T, 3)),
    "triangular_solve_1d": lambda T: T.triangular_solve(_z(T, 3), _eye(T)),
    "triangular_solve_A_1d": lambda T: T.triangular_solve(_z(T, 3, 1), _z(T, 3)),
    # "<name>: <what> must have at least 2 dimensions."
    "lstsq_1d": lambda T: T.linalg.lstsq(_z(T, 3), _z(T, 3)),
    "ormqr_input_1d": lambda T: T.ormqr(_z(T, 3), _z(T, 1), _z(T, 3, 3)),
    "ormqr_other_1d": lambda T: T.ormqr(_z(T, 3, 3), _z(T, 3), _z(T, 3)),
    "geqrf_1d": lambda T: T.geqrf(_z(T, 3)),
    # "<name>: A must be batches of square matrices, but they are R by C matrices"
    "det_rect": lambda T: T.linalg.det(_z(T, 2, 3)),
    "inv_rect": lambda T: T.linalg.inv(_z(T, 2, 3)),
    "inverse_rect": lambda T: T.inverse(_z(T, 4, 2, 3)),
    "cholesky_rect": lambda T: T.linalg.cholesky(_z(T, 2, 3)),
    "torch_cholesky_rect": lambda T: T.cholesky(_z(T, 2, 3)),
    "cholesky_inverse_rect": lambda T: T.cholesky_inverse(_z(T, 2, 3)),
    "eigh_rect": lambda T: T.linalg.eigh(_z(T, 2, 3)),
    "eig_rect": lambda T: T.linalg.eig(_z(T, 2, 3)),
    "matrix_exp_rect": lambda T: T.linalg.matrix_exp(_z(T, 2, 3)),
    "matrix_exp_method_rect": lambda T: _z(T, 2, 3).matrix_exp(),
    "slogdet_rect": lambda T: T.linalg.slogdet(_z(T, 2, 3)),
    "logdet_rect": lambda T: T.logdet(_z(T, 2, 3)),
    "solve_rect": lambda T: T.linalg.solve(_z(T, 2, 3), _z(T, 2, 1)),
    "solve_ex_rect": lambda T: T.linalg.solve_ex(_z(T, 2, 3), _z(T, 2, 1)),
    "solve_triangular_rect": lambda T: T.linalg.solve_triangular(_z(T, 2, 3), _z(T, 2, 1),
                                                                 upper=False),
    "lu_solve_rect": lambda T: T.linalg.lu_solve(_z(T, 2, 3), T.ones(2, dtype=T.int32),
                                                 _z(T, 2, 1)),
    "ldl_factor_rect": lambda T: T.linalg.ldl_factor(_z(T, 2, 3)),
    "ldl_solve_rect": lambda T: T.linalg.ldl_solve(_z(T, 2, 3), T.ones(2, dtype=T.int32),
                                                   _z(T, 2, 1)),
    "cond_fro_rect": lambda T: T.linalg.cond(_z(T, 2, 3), "fro"),
    "cond_inf_rect": lambda T: T.linalg.cond(_z(T, 2, 3), float("inf")),
    "cholesky_solve_rect": lambda T: T.cholesky_solve(_z(T, 2, 1), _z(T, 2, 3)),
    "triangular_solve_rect": lambda T: T.triangular_solve(_z(T, 2, 1), _z(T, 2, 3)),
    # "<name>: Expected a floating point or complex tensor as input. Got <Type>"
    "det_long": lambda T: T.linalg.det(_z(T, 3, 3, dtype="int64")),
    "inv_long": lambda T: T.linalg.inv(_z(T, 3, 3, dtype="int64")),
    "inv_ex_int": lambda T: T.linalg.inv_ex(_z(T, 3, 3, dtype="int32")),
    "cholesky_long": lambda T: T.linalg.cholesky(_z(T, 3, 3, dtype="int64")),
    "matrix_exp_long": lambda T: T.linalg.matrix_exp(_z(T, 3, 3, dtype="int64")),
    "qr_long": lambda T: T.linalg.qr(_z(T, 3, 3, dtype="int64")),
    "svd_long": lambda T: T.linalg.svd(_z(T, 3, 3, dtype="int64")),
    "torch_svd_long": lambda T: T.svd(_z(T, 3, 3, dtype="int64")),
    "svdvals_bool": lambda T: T.linalg.svdvals(_z(T, 3, 3, dtype="bool")),
    "slogdet_long": lambda T: T.linalg.slogdet(_z(T, 3, 3, dtype="int64")),
    "logdet_long": lambda T: T.logdet(_z(T, 3, 3, dtype="int64")),
    "solve_long": lambda T: T.linalg.solve(_z(T, 3, 3, dtype="int64"),
                                           _z(T, 3, 1, dtype="int64")),
    "matrix_rank_long": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="int64")),
    "ldl_factor_int": lambda T: T.linalg.ldl_factor(_z(T, 3, 3, dtype="int32")),
    "cond_long": lambda T: T.linalg.cond(_z(T, 3, 3, dtype="int64")),
    "cond_1_long": lambda T: T.linalg.cond(_z(T, 3, 3, dtype="int64"), 1),
    # "Expected <b> and <A> to have the same dtype, but found ... instead[.]"
    "solve_dtypes": lambda T: T.linalg.solve(_eye(T), _z(T, 3, 1, dtype="float32")),
    "lu_solve_dtypes": lambda T: T.linalg.lu_solve(*_lu(T), _z(T, 3, 1, dtype="float32")),
    "ldl_solve_dtypes": lambda T: T.linalg.ldl_solve(*T.linalg.ldl_factor(_eye(T)),
                                                     _z(T, 3, 1, dtype="float32")),
    "cholesky_solve_dtypes": lambda T: T.cholesky_solve(_z(T, 3, 1, dtype="float32"),
                                                        _eye(T)),
    "triangular_solve_dtypes": lambda T: T.triangular_solve(_z(T, 3, 1, dtype="float32"),
                                                            _eye(T)),
    "vecdot_dtypes": lambda T: T.linalg.vecdot(_z(T, 3), _z(T, 3, dtype="float32")),
    "lstsq_dtypes": lambda T: T.linalg.lstsq(_eye(T), _z(T, 3, 1, dtype="float32")),
    "ormqr_tau_dtype": lambda T: T.ormqr(_z(T, 3, 3), _z(T, 3, dtype="float32"),
                                         _z(T, 3, 3)),
    # which check comes first where an operand fails several
    "logdet_long_1d": lambda T: T.logdet(_z(T, 3, dtype="int64")),
    "slogdet_long_1d": lambda T: T.linalg.slogdet(_z(T, 3, dtype="int64")),
    "det_long_rect": lambda T: T.linalg.det(_z(T, 2, 3, dtype="int64")),
    "inv_long_1d": lambda T: T.linalg.inv(_z(T, 3, dtype="int64")),
    "inv_ex_long_1d": lambda T: T.linalg.inv_ex(_z(T, 3, dtype="int64")),
    "cholesky_ex_long_1d": lambda T: T.linalg.cholesky_ex(_z(T, 3, dtype="int64")),
    "cholesky_long_rect": lambda T: T.linalg.cholesky(_z(T, 2, 3, dtype="int64")),
    "matrix_exp_long_rect": lambda T: T.linalg.matrix_exp(_z(T, 2, 3, dtype="int64")),
    "solve_long_1d": lambda T: T.linalg.solve(_z(T, 3, dtype="int64"), _z(T, 3, dtype="int64")),
    "solve_long_rect": lambda T: T.linalg.solve(_z(T, 2, 3, dtype="int64"),
                                                _z(T, 2, 1, dtype="int64")),
    "solve_dtype_rect": lambda T: T.linalg.solve(_z(T, 2, 3), _z(T, 2, 1, dtype="float32")),
    "ldl_long_rect": lambda T: T.linalg.ldl_factor(_z(T, 2, 3, dtype="int64")),
    "eig_long_1d": lambda T: T.linalg.eig(_z(T, 3, dtype="int64")),
    "eigvals_long_1d": lambda T: T.linalg.eigvals(_z(T, 3, dtype="int64")),
    "eigvals_rect": lambda T: T.linalg.eigvals(_z(T, 2, 3)),
    "eigvals_grad_1d": lambda T: T.linalg.eigvals(_z(T, 3).requires_grad_()),
    "eigvals_grad_rect": lambda T: T.linalg.eigvals(_z(T, 2, 3).requires_grad_()),
    "eigvalsh_rect": lambda T: T.linalg.eigvalsh(_z(T, 2, 3)),
    "svd_long_1d": lambda T: T.svd(_z(T, 3, dtype="int64")),
    "linalg_svd_long_1d": lambda T: T.linalg.svd(_z(T, 3, dtype="int64")),
    "linalg_svd_1d": lambda T: T.linalg.svd(_z(T, 3)),
    "svdvals_1d": lambda T: T.linalg.svdvals(_z(T, 3)),
    "qr_long_1d": lambda T: T.linalg.qr(_z(T, 3, dtype="int64")),
    "torch_qr_1d": lambda T: T.qr(_z(T, 3)),
    "matrix_exp_method_1d": lambda T: _z(T, 3).matrix_exp(),
    "matrix_power_rect": lambda T: T.linalg.matrix_power(_z(T, 2, 3), 2),
    "matrix_power_1d": lambda T: T.linalg.matrix_power(_z(T, 3), 2),
    "torch_matrix_power_rect_0": lambda T: T.matrix_power(_z(T, 2, 3), 0),
    "solve_triangular_long_rect": lambda T: T.linalg.solve_triangular(
        _z(T, 2, 3, dtype="int64"), _z(T, 2, 1, dtype="int64"), upper=True),
    "matrix_rank_1d": lambda T: T.linalg.matrix_rank(_z(T, 3)),
    "matrix_rank_long_1d": lambda T: T.linalg.matrix_rank(_z(T, 3, dtype="int64")),
    "matrix_rank_hermitian_long": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="int64"),
                                                                 hermitian=True),
    "matrix_rank_atol_long": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="int64"),
                                                            atol=1.0),
    "matrix_rank_tol_long": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="int64"),
                                                           tol=1.0),
    "matrix_rank_tol_half": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="float16"),
                                                           tol=1.0),
    "matrix_rank_bf16": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="bfloat16")),
    "matrix_rank_half": lambda T: T.linalg.matrix_rank(_z(T, 3, 3, dtype="float16")),
    "lstsq_half": lambda T: T.linalg.lstsq(_z(T, 3, 3, dtype="float16"),
                                           _z(T, 3, 1, dtype="float16")),
    "cond_2_1d": lambda T: T.linalg.cond(_z(T, 3), 2),
    "cond_nuc_1d": lambda T: T.linalg.cond(_z(T, 3), "nuc"),
    "cond_1_1d": lambda T: T.linalg.cond(_z(T, 3), 1),
    "cond_fro_long": lambda T: T.linalg.cond(_z(T, 3, 3, dtype="int64"), "fro"),
    "cond_fro_long_rect": lambda T: T.linalg.cond(_z(T, 2, 3, dtype="int64"), "fro"),
    "cond_inf_long_rect": lambda T: T.linalg.cond(_z(T, 2, 3, dtype="int64"), float("inf")),
    "cond_3_long": lambda T: T.linalg.cond(_z(T, 3, 3, dtype="int64"), 3),
    "cond_3_rect": lambda T: T.linalg.cond(_z(T, 2, 3), 3),
    "householder_product_1d": lambda T: T.linalg.householder_product(_z(T, 3), _z(T, 1)),
    "lu_solve_LU_rect_B_1d": lambda T: T.linalg.lu_solve(_z(T, 2, 3), T.ones(2, dtype=T.int32),
                                                         _z(T, 2)),
    "lu_solve_LU_1d_B_1d": lambda T: T.linalg.lu_solve(_z(T, 3), T.ones(2, dtype=T.int32),
                                                       _z(T, 2)),
    "lu_solve_dtype_rect": lambda T: T.linalg.lu_solve(_z(T, 2, 3), T.ones(2, dtype=T.int32),
                                                       _z(T, 2, 1, dtype="float32")),
    "lu_solve_dtype_1d": lambda T: T.linalg.lu_solve(_z(T, 3), T.ones(2, dtype=T.int32),
                                                     _z(T, 2, 1, dtype="float32")),
    "triangular_solve_both_1d": lambda T: T.triangular_solve(_z(T, 3), _z(T, 3)),
    "cholesky_solve_both_1d": lambda T: T.cholesky_solve(_z(T, 3), _z(T, 3)),
    "ldl_solve_dtype_rect": lambda T: T.linalg.ldl_solve(_z(T, 2, 3), T.ones(2, dtype=T.int32),
                                                         _z(T, 2, 1, dtype="float32")),
    # sizes after the shared checks (their order against them matters)
    "cholesky_solve_sizes": lambda T: T.cholesky_solve(_z(T, 2, 1), _eye(T)),
    "triangular_solve_sizes": lambda T: T.triangular_solve(_z(T, 2, 1), _eye(T)),
    "solve_sizes": lambda T: T.linalg.solve(_eye(T), _z(T, 2, 1)),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_operands_match_torch(case):
    raises_same(lambda: BAD[case](torchish), lambda: BAD[case](torch))


def _values(result):
    if isinstance(result, tuple):
        return [_values(r) for r in result]
    return np.asarray(result.detach().tolist())


# the same call sites, operands they accept: unchanged results
GOOD = {
    "det": lambda T: T.linalg.det(_eye(T, batch=(2,)) * 2),
    "inv": lambda T: T.linalg.inv(_eye(T) * 4),
    "cholesky": lambda T: T.linalg.cholesky(_eye(T) * 4),
    "slogdet": lambda T: T.linalg.slogdet(_eye(T) * 3),
    "logdet": lambda T: T.logdet(_eye(T, dtype="float32") * 3),
    "solve": lambda T: T.linalg.solve(_eye(T) * 2, T.ones(3, 1, dtype=T.float64)),
    "lu_solve": lambda T: T.linalg.lu_solve(*_lu(T), T.ones(3, 2, dtype=T.float64)),
    "cholesky_solve": lambda T: T.cholesky_solve(T.ones(3, 1, dtype=T.float64), _eye(T)),
    "matrix_exp": lambda T: T.linalg.matrix_exp(_z(T, 2, 2, dtype="complex64")),
    "cond_fro": lambda T: T.linalg.cond(_eye(T) * 2, "fro"),
    "vecdot": lambda T: T.linalg.vecdot(T.ones(3), T.ones(3)),
    "ldl_solve": lambda T: T.linalg.ldl_solve(*T.linalg.ldl_factor(_eye(T)),
                                              T.ones(3, 1, dtype=T.float64)),
}


@pytest.mark.parametrize("case", sorted(GOOD))
def test_valid_operands_unchanged(case):
    ours, theirs = GOOD[case](torchish), GOOD[case](torch)
    np.testing.assert_allclose(np.asarray(_values(ours), dtype=complex),
                               np.asarray(_values(theirs), dtype=complex), rtol=1e-6)


def test_checks_under_compile():
    # the shared checks read static shapes and dtypes only: they run on traced operands
    f = torchish.compile(lambda a, b: torchish.linalg.solve(a, b))
    a = torchish.eye(3, dtype=torchish.float64) * 2
    b = torchish.ones(3, 1, dtype=torchish.float64)
    np.testing.assert_allclose(_values(f(a, b)), np.full((3, 1), 0.5))
    with pytest.raises(RuntimeError, match="linalg.solve: Expected A and B to have the same "
                                           "dtype, but found A of type Double and B of type "
                                           "Float instead"):
        f(a, b.float())
    g = torchish.compile(lambda a: torchish.linalg.det(a))
    with pytest.raises(RuntimeError, match="linalg.det: A must be batches of square"):
        g(torchish.zeros(2, 3))
