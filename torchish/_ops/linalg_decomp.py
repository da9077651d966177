"""Factorizations and solvers: LU, Cholesky and triangular solves, lstsq, the `*_ex` variants
and the legacy `torch.svd` / `torch.qr` / `torch.triangular_solve` spellings.

PyTorch's conventions are kept where LAPACK's and JAX's differ: pivots are 1-based int32
(LAPACK's `ipiv`, JAX's are 0-based), `info` outputs are int32, `torch.svd` returns V (not Vh).
"""
import functools
import warnings

import jax
import jax.numpy as jnp

from .._warnings import warn_once
from .linalg_matrix import (_float_input, _mH, _pinv, _saved_lu, _square, linalg_qr,
                            linalg_svdvals)
from .pointwise import legacy_name, not_implemented
from .registry import Promote, op
from .return_types import _rt

P = Promote

_SVD = _rt("svd", ("U", "S", "V"))
_QR = _rt("qr", ("Q", "R"))
_TRIANGULAR_SOLVE = _rt("triangular_solve", ("solution", "cloned_coefficient"))
_SOLVE_EX = _rt("linalg_solve_ex", ("result", "info"))
_INV_EX = _rt("linalg_inv_ex", ("inverse", "info"))
_CHOLESKY_EX = _rt("linalg_cholesky_ex", ("L", "info"))
_LSTSQ = _rt("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_LU_FACTOR = _rt("linalg_lu_factor", ("LU", "pivots"))
_LU_FACTOR_EX = _rt("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU = _rt("linalg_lu", ("P", "L", "U"))
_LU_UNPACK = _rt("lu_unpack", ("P", "L", "U"))
_LU_WITH_INFO = _rt("_lu_with_info", ("LU", "pivots", "info"))


class LinAlgError(RuntimeError):
    """`torch.linalg.LinAlgError`: a factorization or inversion failed (a RuntimeError)."""


# PyTorch's class is `torch._C._LinAlgError` (what `type(e).__name__` prints)
LinAlgError.__module__, LinAlgError.__name__, LinAlgError.__qualname__ = \
    "torch._C", "_LinAlgError", "_LinAlgError"


# ---- helpers ------------------------------------------------------------------------------

def _at_least_2d(name, A, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _float_operand(name, A):
    if not jnp.issubdtype(A.dtype, jnp.inexact):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {legacy_name(A)}")


def _broadcast_batch(a, b):
    """a and b with their batch dimensions (all but the last two) broadcast together."""
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]))


def _tri_solve(a, b, *, lower, adjoint=False, unit=False, conjugate=None):
    """op(a) x = b for triangular a (only its `lower`/upper triangle is read); op is the
    conjugate transpose for `adjoint` (the plain transpose with conjugate=False)."""
    a, b = _broadcast_batch(a, b)
    return jax.lax.linalg.triangular_solve(
        a, b, left_side=True, lower=lower, transpose_a=adjoint,
        conjugate_a=adjoint if conjugate is None else conjugate, unit_diagonal=unit)


def _lu_info(lu):
    """LAPACK getrf's info: the 1-based index of the first zero on U's diagonal, else 0."""
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    if d.shape[-1] == 0:
        return jnp.zeros(d.shape[:-1], jnp.int32)
    zero = d == 0
    first = jnp.argmax(zero, axis=-1) + 1
    return jnp.where(jnp.any(zero, axis=-1), first, 0).astype(jnp.int32)


def _permutation(pivots, m):
    """The row order `perm` (A[perm] = L U) that LAPACK's 1-based `ipiv` swaps produce."""
    return jax.lax.linalg.lu_pivots_to_permutation(pivots.astype(jnp.int32) - 1, m)


def _perm_matrix(perm, m, dtype):
    """P with A = P L U for A[perm] = L U: P[perm[i], i] = 1."""
    return jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=dtype), -1, -2)


def info_error(name, info, message):
    """PyTorch's error for a nonzero `info` array (a host sync, as in PyTorch), or None."""
    import numpy as np
    if isinstance(info, jax.core.Tracer):  # under compile: no value to check
        return None
    arr = np.asarray(info)
    if arr.size and (arr != 0).any():
        flat = arr.reshape(-1)
        k = int(np.flatnonzero(flat)[0])
        batch = f"(Batch element {k}): " if arr.ndim else ""
        return LinAlgError(f"{name}: {batch}{message(int(flat[k]))}")
    return None


def _raise_info(name, info, message):
    error = info_error(name, info._data, message)
    if error is not None:
        raise error


# ---- legacy spellings ---------------------------------------------------------------------

@op(promote=P.NONE, grad_fn="LinalgSvdBackward0", function=False, method=False)
def _svd(input, some=True):
    u, s, vh = jnp.linalg.svd(input, full_matrices=False)
    m, n = input.shape[-2], input.shape[-1]
    if not some and m != n:
        # JAX differentiates only the reduced SVD; PyTorch's gradient of the full one also
        # reaches only the first min(m, n) singular vectors, the rest complete the basis
        uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(input), full_matrices=True)
        k = min(m, n)
        u = jnp.concatenate([u, uf[..., k:]], axis=-1)
        vh = jnp.concatenate([vh, vhf[..., k:, :]], axis=-2)
    return u, s, vh


def svd(input, some=True, compute_uv=True):
    """torch.svd: U, S, V (V, not V^H); without compute_uv, U and V are zeros."""
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    _float_input("linalg.svd", input)
    if not compute_uv:
        from .. import zeros
        m, n = input.shape[-2], input.shape[-1]
        S = linalg_svdvals(input)
        batch = tuple(input.shape[:-2])
        return _SVD(zeros(batch + (m, m), dtype=S.dtype), S, zeros(batch + (n, n), dtype=S.dtype))
    U, S, Vh = _svd(input, some)
    V = Vh.transpose(-2, -1)  # TransposeBackward0, as PyTorch's V
    return _SVD(U, S, V.conj() if V.is_complex() else V)


def qr(input, some=True):
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning, stacklevel=3)
    _at_least_2d("linalg.qr", input)
    return _QR(*linalg_qr(input, "reduced" if some else "complete"))


def _solve_checks(name, B, A, bname="b", aname="A"):
    for x, n in ((B, bname), (A, aname)):
        if x.ndim < 2:
            raise RuntimeError(f"{n} should have at least 2 dimensions, but has {x.ndim} "
                               f"dimensions instead")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"Expected {bname} and {aname} to have the same dtype, but found "
                           f"{bname} of type {legacy_name(B)} and {aname} of type "
                           f"{legacy_name(A)} instead.")


def _lapack_dtype(kernel, x):
    """PyTorch's error for an integer operand of a LAPACK kernel without integer support."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise not_implemented(kernel, x)


@op(promote=P.NONE, grad_fn="TriangularSolveBackward0", method=False, function=False,
    returns=_TRIANGULAR_SOLVE)
def _triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    _solve_checks("triangular_solve", input, A, "self", "A")
    _lapack_dtype("triangular_solve_cpu", input)
    # `transpose` is the plain transpose, also for complex A
    x = _tri_solve(A, input, lower=not upper, adjoint=transpose, unit=unitriangular,
                   conjugate=False)
    batch = x.shape[:-2]
    return x, jnp.broadcast_to(A, batch + A.shape[-2:])


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=3)
    return _triangular_solve(input, A, upper, transpose, unitriangular)


# ---- Cholesky -----------------------------------------------------------------------------

def _potrs(b, L, upper):
    """A^-1 b for A = L L^H (or U^H U), reading only that triangle of L (LAPACK potrs)."""
    if upper:
        return _tri_solve(L, _tri_solve(L, b, lower=False, adjoint=True), lower=False)
    return _tri_solve(L, _tri_solve(L, b, lower=True), lower=True, adjoint=True)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _cholesky_solve(b, L, upper):
    return _potrs(b, L, upper)


def _cholesky_solve_fwd(b, L, upper):
    x = _potrs(b, L, upper)
    return x, (L, x)


def _cholesky_solve_bwd(upper, res, g):
    # PyTorch's cholesky_solve_backward: L's gradient is that of (L L^H)^-1 b for a full L
    # (both triangles), where JAX's triangular-solve rule would keep only L's triangle
    # (JAX's cotangents are the conjugates of PyTorch's for complex values)
    L, x = res
    gb = _potrs(jnp.conj(g), L, upper)
    common = gb @ _mH(x)
    common = common + _mH(common)
    gL = -(L @ common) if upper else -(common @ L)
    return jnp.conj(gb), jnp.conj(gL)


_cholesky_solve.defvjp(_cholesky_solve_fwd, _cholesky_solve_bwd)


@op(promote=P.NONE, grad_fn="CholeskySolveBackward0")
def cholesky_solve(input, input2, upper=False):
    _solve_checks("cholesky_solve", input, input2, "b", "A")
    _lapack_dtype("cholesky_solve_cpu", input)
    return _cholesky_solve(*_broadcast_batch(input, input2), upper)


@op(promote=P.NONE, grad_fn="CholeskyInverseBackward0")
def cholesky_inverse(input, upper=False):
    _at_least_2d("cholesky_inverse", input)
    _square("cholesky_inverse", input)
    _lapack_dtype("cholesky_inverse_out_cpu", input)
    eye = jnp.broadcast_to(jnp.eye(input.shape[-1], dtype=input.dtype), input.shape)
    return _cholesky_solve(eye, input, upper)


def _cholesky_info(A):
    """potrf's info: the order of the first leading minor that is not positive-definite
    (from the signs of the leading principal minors of the lower-triangle Hermitian)."""
    n = A.shape[-1]
    if n == 0:
        return jnp.zeros(A.shape[:-2], jnp.int32)
    H = jnp.tril(A) + _mH(jnp.tril(A, -1))
    idx = jnp.arange(n)
    keep = (idx[:, None, None] >= idx[None, :, None]) & (idx[:, None, None] >= idx[None, None, :])
    eye = jnp.eye(n, dtype=A.dtype)
    minors = jnp.where(keep, H[..., None, :, :], eye)  # (..., k, n, n): the k+1 leading minor
    sign, _ = jnp.linalg.slogdet(minors)
    bad = ~(jnp.real(sign) > 0)
    first = jnp.argmax(bad, axis=-1) + 1
    return jnp.where(jnp.any(bad, axis=-1), first, 0).astype(jnp.int32)


@jax.custom_vjp
def _cholesky(A):
    """The lower Cholesky factor of the Hermitian matrix whose lower triangle A holds."""
    return jnp.linalg.cholesky(A, symmetrize_input=False)


def _cholesky_fwd(A):
    L = _cholesky(A)
    return L, L


def _cholesky_bwd(L, g):
    # PyTorch's cholesky_backward: gA = L^-H phi(L^H gL) L^-1 with phi the lower triangle,
    # its strict part mirrored, halved. For complex input it is not Hermitian (its diagonal
    # keeps an imaginary part), so no symmetrization of JAX's rule reproduces it. JAX's
    # cotangents are the conjugates of PyTorch's.
    g = jnp.conj(g)
    phi = jnp.tril(_mH(L) @ g)
    phi = 0.5 * (phi + _mH(jnp.tril(phi, -1)))
    gA = jax.lax.linalg.triangular_solve(L, phi, left_side=True, lower=True, transpose_a=True,
                                         conjugate_a=True)
    gA = jax.lax.linalg.triangular_solve(L, gA, left_side=False, lower=True)
    return (jnp.conj(gA),)


_cholesky.defvjp(_cholesky_fwd, _cholesky_bwd)


@op(promote=P.NONE, grad_fn="LinalgCholeskyExBackward0", method=False,
    returns=_CHOLESKY_EX, function=False, saves=("L",))
def linalg_cholesky_ex(input, *, upper=False, check_errors=False):
    _at_least_2d("linalg.cholesky", input)
    _square("linalg.cholesky", input)
    _float_operand("linalg.cholesky", input)
    L = _cholesky(input) if input.shape[-1] else input
    return (_mH(L) if upper else L), jax.lax.stop_gradient(_cholesky_info(input))


def cholesky_ex(input, *, upper=False, check_errors=False):
    result = linalg_cholesky_ex(input, upper=upper)
    if check_errors:
        _raise_info("linalg.cholesky_ex", result.info, lambda k: (
            f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite)."))
    return result


# ---- solve / inv with info ----------------------------------------------------------------

def solve_lu(which):
    """A `saved_as` callable giving solve's `_saved_LU` / `_saved_pivots`: the factors
    linalg.lu_factor gives of A (det's, from `_saved_lu`, are of A's transpose)."""
    of_transpose = _saved_lu(which)

    def value(A=None, **_):
        return of_transpose(A=None if A is None else jnp.swapaxes(A, -1, -2))
    return value


@op(promote=P.NONE, grad_fn="LinalgSolveExBackward0", method=False,
    returns=_SOLVE_EX, function=False, saves=("A", "result"),
    saved_as={"LU": solve_lu("LU"), "pivots": solve_lu("pivots")})
def linalg_solve_ex(A, B, *, left=True):
    solve_checks(A, B, left)
    info = _lu_info(jax.lax.stop_gradient(jax.lax.linalg.lu(A)[0]))
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
    if not left:
        X = jnp.swapaxes(jnp.linalg.solve(*_broadcast_batch(jnp.swapaxes(A, -1, -2),
                                                            jnp.swapaxes(B, -1, -2))), -1, -2)
    elif vector:
        X = jnp.linalg.solve(*_broadcast_batch(A, B[..., None]))[..., 0]
    else:
        X = jnp.linalg.solve(*_broadcast_batch(A, B))
    return X, info   # per matrix of A (PyTorch does not broadcast info over B's batch)


def solve_checks(A, B, left):
    """linalg.solve's (and solve_ex's) dtype and shape errors, on the operand arrays."""
    _at_least_2d("linalg.solve", A)
    _float_operand("linalg.solve", A)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {legacy_name(A)} and B of type {legacy_name(B)} instead")
    _square("linalg.solve", A)
    vec = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]))
    if (B.shape[-1] if vec or not left else B.shape[-2]) != A.shape[-1]:
        rows, cols = (B.shape[-1], 1) if vec else B.shape[-2:]
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{rows}x{cols})")


def solve_ex(A, B, *, left=True, check_errors=False):
    result = linalg_solve_ex(A, B, left=left)
    if check_errors:
        _raise_info("torch.linalg.solve_ex", result.info,
                    lambda k: "The solver failed because the input matrix is singular.")
    return result


@op(promote=P.NONE, grad_fn="LinalgInvExBackward0", method=False, returns=_INV_EX,
    function=False, saves=("inverse",))
def linalg_inv_ex(A):
    _at_least_2d("linalg.inv", A)
    _float_operand("linalg.inv", A)
    _square("linalg.inv", A)
    info = _lu_info(jax.lax.stop_gradient(jax.lax.linalg.lu(A)[0]))
    return jnp.linalg.inv(A), info


def inv_ex(A, *, check_errors=False):
    result = linalg_inv_ex(A)
    if check_errors:
        _raise_info("linalg.inv_ex", result.info, lambda k: (
            f"The diagonal element {k} is zero, the inversion could not be completed because "
            f"the input matrix is singular."))
    return result


# ---- LU -----------------------------------------------------------------------------------

def _lu_checks(name, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    _lapack_dtype("lu_cpu", A)


@op(promote=P.NONE, grad_fn="LinalgLuFactorExBackward0", method=False,
    returns=_LU_FACTOR_EX, function=False, saves=("LU", "pivots"))
def linalg_lu_factor_ex(A, *, pivot=True):
    _lu_checks("torch.lu_factor", A, pivot)
    lu, piv, _ = jax.lax.linalg.lu(A)
    return lu, (piv + 1).astype(jnp.int32), _lu_info(jax.lax.stop_gradient(lu))


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    result = linalg_lu_factor_ex(A, pivot=pivot)
    if check_errors:
        _raise_info("torch.linalg.lu_factor_ex", result.info, lambda k: (
            f"U[{k},{k}] is zero and using it on lu_solve would result in a division by "
            f"zero. If you still want to perform the factorization, consider calling "
            f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"))
    return result


def lu_factor(A, *, pivot=True):
    LU, pivots, info = linalg_lu_factor_ex(A, pivot=pivot)
    _raise_info("torch.linalg.lu_factor", info, lambda k: (
        f"U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If "
        f"you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
        f"or linalg.lu_factor_ex(A, pivot)"))
    return _LU_FACTOR(LU, pivots)


def _unpack(lu):
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    U = jnp.triu(lu[..., :k, :])
    return L, U


@op(promote=P.NONE, grad_fn="LinalgLuBackward0", method=False, function=False)
def linalg_lu(A, *, pivot=True):
    _lu_checks("linalg.lu", A, pivot)
    lu, _, perm = jax.lax.linalg.lu(A)
    return (perm,) + _unpack(lu)


@op(promote=P.NONE, differentiable=False, function=False, method=False)
def _lu_permutation(LU_data, LU_pivots):
    """The permutation matrix P of an LU factorization (no gradient, as PyTorch's P)."""
    m = LU_data.shape[-2]
    return _perm_matrix(_permutation(LU_pivots, m), m, LU_data.dtype)


@op(promote=P.NONE, differentiable=False, function=False, method=False)
def _perm_to_matrix(A, perm):
    return _perm_matrix(perm, A.shape[-2], A.dtype)


def lu(A, *, pivot=True):
    perm, L, U = linalg_lu(A, pivot=pivot)
    return _LU(_perm_to_matrix(A, perm), L, U)


@op(promote=P.NONE, grad_fn="LuUnpackBackward0", method=False, function=False)
def _lu_unpack_data(LU_data, unpack_data=True):
    if not unpack_data:
        empty = jnp.zeros((0,), LU_data.dtype)
        return empty, empty
    return _unpack(LU_data)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if LU_data.ndim < 2:
        raise RuntimeError("torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    if LU_pivots.dtype.is_floating_point or LU_pivots.dtype.is_complex or \
            str(LU_pivots.dtype) != "torch.int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    L, U = _lu_unpack_data(LU_data, unpack_data)
    if unpack_pivots:
        P_ = _lu_permutation(LU_data, LU_pivots)
    else:
        from .. import empty
        P_ = empty((0,), dtype=LU_data.dtype)
    return _LU_UNPACK(P_, L, U)


@op(promote=P.NONE, grad_fn="LinalgLuSolveBackward0", method=False, function=False,
    non_differentiable=("pivots",), saves=("LU", "pivots", "result"))
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    name = "linalg.lu_solve"
    _at_least_2d(name, LU, "LU")
    _at_least_2d(name, B, "B")
    _square("torch." + name, LU)
    if LU.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {legacy_name(LU)} and B of type {legacy_name(B)} instead")
    if str(pivots.dtype) != "int32":
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    perm = _permutation(pivots, n)
    Pm = _perm_matrix(perm, n, LU.dtype)
    # A = P L U; XA = B is A^H X^H = B^H
    adj = adjoint if left else not adjoint
    rhs = B if left else _mH(B)
    if not adj:
        y = _tri_solve(LU, _mH(Pm) @ rhs, lower=True, unit=True)
        x = _tri_solve(LU, y, lower=False)
    else:
        y = _tri_solve(LU, rhs, lower=False, adjoint=True)
        x = Pm @ _tri_solve(LU, y, lower=True, adjoint=True, unit=True)
    return x if left else _mH(x)


def _linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    return linalg_lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def lu_solve(input, LU_data, LU_pivots):
    """torch.lu_solve(b, LU_data, LU_pivots) (deprecated; the arguments reversed)."""
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=3)
    return linalg_lu_solve(LU_data, LU_pivots, input)


# ---- lstsq --------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@op(promote=P.NONE, grad_fn="LinalgLstsqBackward0", method=False, function=False,
    tensors=("A", "B"), saves=("A", "B", "result0"), saved_as={"b": "B", "solution": "result0"})
def linalg_lstsq(A, B, rcond=None, driver="gelsy", vector=False):
    s = jnp.linalg.svd(jax.lax.stop_gradient(A), compute_uv=False)
    m, n = A.shape[-2], A.shape[-1]
    # LAPACK's default rcond: eps of the dtype times max(m, n)
    tol = jnp.finfo(A.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    smax = jnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else jnp.zeros(s.shape[:-1] + (1,))
    rank = jnp.sum(s > tol * smax, axis=-1).astype(jnp.int64)
    b = B[..., None] if vector else B
    A2, b = _broadcast_batch(A, b)
    X = _pinv(A2, None, jnp.asarray(tol, s.dtype), False) @ b
    if driver != "gelsy" and m > n:
        residuals = jnp.sum(jnp.abs(A2 @ X - b) ** 2, axis=-2)
    else:
        residuals = jnp.zeros((0,), s.dtype)
    if driver == "gels":
        rank = jnp.zeros((0,), jnp.int64)
    sv = s if driver in ("gelsd", "gelss") else jnp.zeros((0,), s.dtype)
    return (X[..., 0] if vector else X), residuals, jax.lax.stop_gradient(rank), \
        jax.lax.stop_gradient(sv)


def lstsq(A, B, rcond=None, *, driver=None):
    name = "torch.linalg.lstsq"
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype._legacy} and other's dtype "
                           f"{B.dtype._legacy}")
    vector = B.ndim == A.ndim - 1
    if B.ndim < 1 or (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"{name}: input.size(-2) should match other.size(-{1 if vector else 2})")
    X, res, rank, sv = linalg_lstsq(A, B, rcond, driver, vector)
    if res.numel() and (rank < A.shape[-1]).any():
        res = res[..., :0].reshape(0)   # empty unless every matrix has full rank, as LAPACK
    return _LSTSQ(X, res, rank, sv.detach())   # PyTorch's singular values have no grad_fn


# ---- small composites ---------------------------------------------------------------------

def _vecdot(x, y, *, dim=-1):
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {legacy_name(x)} and y of type {legacy_name(y)} instead")
    return jnp.sum(jnp.conj(x) * y, axis=dim)


linalg_vecdot = op("linalg_vecdot", promote=P.NONE, grad_fn="SumBackward1", method=False,
                   function=False)(_vecdot)


@op(promote=P.NONE, grad_fn="VdotBackward0", method=False, function=False)
def _vecdot_vectors(x, y, *, dim=-1):
    return _vecdot(x, y, dim=dim)


def vecdot(x, y, *, dim=-1):
    # PyTorch computes the vecdot of two vectors with vdot (its node is VdotBackward0)
    fn = _vecdot_vectors if x.ndim == 1 and y.ndim == 1 else linalg_vecdot
    if fn is _vecdot_vectors and x.shape[0] != y.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                           f"[{y.shape[0]}] to have the same number of elements, but got "
                           f"{x.shape[0]} and {y.shape[0]} elements respectively")
    return fn(x, y, dim=dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .shape import diagonal as _diagonal
    return _diagonal(A, offset, dim1, dim2)


@op(promote=P.NONE, grad_fn="CatBackward0", method=False, function=False, tensors=("x",))
def linalg_vander(x, N=None):
    if x.dtype == jnp.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    n = N if N is not None else (x.shape[-1] if x.ndim else 0)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    x = x.reshape(1) if x.ndim == 0 else x   # a 0-d x is one point
    powers = jnp.cumprod(jnp.broadcast_to(x[..., None], x.shape + (n - 1,)), axis=-1)
    return jnp.concatenate([jnp.ones(x.shape + (1,), x.dtype), powers], axis=-1)


def vander(x, *, N=None):
    from .. import _tensor
    from ..autograd import grad_mode
    if isinstance(x, _tensor.Tensor) and x.requires_grad and grad_mode.is_grad_enabled():
        return _vander_steps(x, N)
    return linalg_vander(x, N)


def _vander_steps(x, N):
    """PyTorch's linalg.vander op by op: a column of ones beside the cumulative products of
    the expanded points."""
    from .shape_copies import cat
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)).cumprod(-1)
    return cat([powers.new_ones(tuple(x.shape) + (1,)), powers], -1)


def cond(input, p=None):
    """The condition number: a ratio of singular values for p in (None, 2, -2), else
    norm(A, p) * norm(A^-1, p) (inf for a singular matrix)."""
    from .linalg_matrix import linalg_matrix_norm
    name = "linalg.cond"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor must have at least 2 dimensions.")
    _float_input("linalg.svd" if p in (None, 2, -2) else "linalg.inv", input)
    if p in (None, 2, -2):
        s = linalg_svdvals(input)
        ratio = s[..., -1:] / s[..., :1] if p == -2 else s[..., :1] / s[..., -1:]
        ratio = ratio.squeeze(-1)   # SqueezeBackward1, as PyTorch's
        return ratio.real if ratio.is_complex() else ratio
    if p not in ("fro", "nuc", 1, -1, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"{name}(ord={p}): A must be batches of square matrices, but they "
                           f"are {input.shape[-2]} by {input.shape[-1]} matrices")
    inverse = linalg_inv_ex(input).inverse
    res = linalg_matrix_norm(input, p) * linalg_matrix_norm(inverse, p)
    res = res.real if res.is_complex() else res
    if p == "nuc":   # PyTorch maps a singular input to inf for the other norms only
        return res
    from .pointwise import nan_to_num
    return nan_to_num(res, nan=float("inf"), posinf=float("inf"))


# the `torch.*` names written here in Python (see `_ops.plain_functions`)
PLAIN = ["svd", "qr", "triangular_solve", "lu_unpack", "lu", "lu_solve"]
# `torch.linalg.*` names
def _with_out(name, fn):
    """`fn` taking PyTorch's `out=` (a Tensor, or a tuple for multi-output functions)."""
    from .out_arg import check_out, write_out

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        outs = check_out(name, out, args + tuple(kwargs.values()))
        return write_out(name, outs, fn(*args, **kwargs), 3)
    return with_out


LINALG = {"vecdot": vecdot, "solve_ex": solve_ex, "inv_ex": inv_ex, "cholesky_ex": cholesky_ex,
          "lstsq": lstsq, "lu_factor": lu_factor, "lu_factor_ex": lu_factor_ex, "lu": lu,
          "lu_solve": _linalg_lu_solve, "diagonal": diagonal, "vander": vander, "cond": cond,
          "LinAlgError": LinAlgError}


# ---- eig, tensorinv/tensorsolve, householder_product ------------------------------------

_EIG = _rt("linalg_eig", ("eigenvalues", "eigenvectors"))


def _eig_checks(A):
    if not jnp.issubdtype(A.dtype, jnp.inexact):
        raise RuntimeError(f"Unknown Complex ScalarType for {legacy_name(A)}")
    _at_least_2d("linalg.eig", A)
    _square("linalg.eig", A)


@op(promote=P.NONE, grad_fn="LinalgEigBackward0", method=False, function=False, returns=_EIG,
    saves=("eigenvalues", "eigenvectors"))
def linalg_eig(input):
    _eig_checks(input)
    return _geev(input)


def _geev(A):
    # LAPACK geev on the CPU, as PyTorch's: eigenvectors of unit norm. PyTorch differentiates
    # the eigenvectors (distinct eigenvalues assumed; its gradient keeps their norm), which
    # JAX does only on request
    if A.shape[-1] == 0:
        c = jnp.result_type(A.dtype, jnp.complex64)
        return jnp.zeros(A.shape[:-1], c), jnp.zeros(A.shape, c)
    w, v = jax.lax.linalg.eig(A, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


@op(promote=P.NONE, grad_fn="LinalgEigBackward0", method=False, function=False,
    saves=("result",), saved_as={"eigenvalues": "result"})
def linalg_eigvals(A):
    _eig_checks(A)
    return jnp.linalg.eigvals(A)


def eig(input):
    return linalg_eig(input)


def eigvals(A):
    # as PyTorch's: eig's first output where A may need a gradient (reverse or forward), so
    # the node is eig's, whose saved eigenvectors are its second output
    from .._tensor import Tensor
    from ..autograd import grad_mode
    from ..autograd.forward_ad import tangent_of
    if isinstance(A, Tensor) and (grad_mode.GRAD_ENABLED[0] and A.requires_grad
                                  or tangent_of(A) is not None):
        return linalg_eig(A)[0]
    return linalg_eigvals(A)


def tensorinv(A, ind=2):
    import math
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = list(A.shape[:ind]), list(A.shape[ind:])
    p, q = math.prod(rows), math.prod(cols)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {q} != {p}")
    from .linalg_matrix import inverse
    return inverse(A.reshape(p, q)).reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    import math
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    rest = list(A.shape[B.ndim:])
    n = math.prod(rest)
    if math.prod(A.shape[:B.ndim]) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim"
                           f":]) == prod(self.shape[:other.ndim]), but got {n} != "
                           f"{math.prod(A.shape[:B.ndim])}")
    from .linalg_matrix import linalg_solve
    return linalg_solve(A.reshape(-1, n), B.reshape(-1)).view(rest)


@op(promote=P.NONE, grad_fn="LinalgHouseholderProductBackward0", method=False,
    function=False)
def linalg_householder_product(A, tau):
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{A.ndim}")
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"{name}: tau dtype {legacy_name(tau)} does not match input dtype "
                           f"{legacy_name(A)}")
    # Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i = (0, .., 0, 1, A[i+1:, i])
    eye = jnp.eye(m, dtype=A.dtype)
    Q = jnp.broadcast_to(eye[:, :n], A.shape)
    rows = jnp.arange(m)[:, None]
    for i in reversed(range(k)):
        v = jnp.where(rows > i, A[..., :, i:i + 1], jnp.where(rows == i, 1, 0).astype(A.dtype))
        Q = Q - tau[..., i, None, None] * (v @ (_mH(v) @ Q))
    return Q


def householder_product(A, tau):
    return linalg_householder_product(A, tau)


LINALG.update(eig=eig, eigvals=eigvals, tensorinv=tensorinv, tensorsolve=tensorsolve,
              householder_product=householder_product)
LINALG.update({name: _with_out(f"linalg_{name}", fn) for name, fn in LINALG.items()
               if name not in ("diagonal", "vander", "LinAlgError")})


def _bind():
    from .._tensor import Tensor
    Tensor.svd = lambda self, some=True, compute_uv=True: svd(self, some, compute_uv)
    Tensor.qr = lambda self, some=True: qr(self, some)
    Tensor.triangular_solve = lambda self, A, upper=True, transpose=False, \
        unitriangular=False: triangular_solve(self, A, upper, transpose, unitriangular)
    Tensor.lu = lambda self, pivot=True, get_infos=False: _tensor_lu(self, pivot, get_infos)
    Tensor.lu_solve = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)


def _tensor_lu(self, pivot=True, get_infos=False):
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
              "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
              "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
              "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
              "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
              "should be replaced with\n"
              "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)", at_user=False)
    LU, pivots, info = linalg_lu_factor_ex(self, pivot=pivot)
    return _LU_WITH_INFO(LU, pivots, info) if get_infos else (LU, pivots)


def lu(*args, out=None, **kwargs):
    """torch.lu (legacy): (LU, pivots[, infos]) from linalg.lu_factor_ex; with `out=` a plain
    tuple of the outs, as PyTorch's Python wrapper returns."""
    result = _tensor_lu(*args, **kwargs)
    if out is None:
        return result
    from .out_arg import check_out, write_out
    return tuple(write_out("lu", check_out("lu", out, args), tuple(result), 3))


lu.handles_out = True


_bind()
