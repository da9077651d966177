"""LU: linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve, solve_ex/inv_ex (which
factor by LU), and the legacy `torch.lu` / `torch.lu_solve`. Pivots are 1-based int32, as
LAPACK's `ipiv` (JAX's are 0-based); `info` outputs are int32."""
import warnings

import jax
import jax.numpy as jnp

from .._warnings import warn_once
from .linalg_checks import at_least_2d, float_or_complex, same_dtype, square
from .linalg_matrix import _mH, _saved_lu
from .registry import Promote, op
from .return_types import _rt
from .linalg_lapack import _broadcast_batch, _lapack_dtype, _raise_info, _tri_solve

P = Promote

_SOLVE_EX = _rt("linalg_solve_ex", ("result", "info"))
_INV_EX = _rt("linalg_inv_ex", ("inverse", "info"))
_LU_FACTOR = _rt("linalg_lu_factor", ("LU", "pivots"))
_LU_FACTOR_EX = _rt("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU = _rt("linalg_lu", ("P", "L", "U"))
_LU_UNPACK = _rt("lu_unpack", ("P", "L", "U"))
_LU_WITH_INFO = _rt("_lu_with_info", ("LU", "pivots", "info"))


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
    # (PyTorch checks the dtype before the dimensions here)
    float_or_complex("linalg.solve", A)
    at_least_2d("linalg.solve", A)
    same_dtype("linalg.solve", A, B, "A", "B")
    square("linalg.solve", A)
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
    at_least_2d("linalg.inv", A)
    float_or_complex("linalg.inv", A)
    square("linalg.inv", A)
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
    # (PyTorch's order: the dtypes, LU square (named A), then B's dimensions)
    same_dtype(name, LU, B, "LU", "B")
    square("torch." + name, LU)
    at_least_2d(name, B, "B")
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


# `torch.linalg.*` names (`linalg_decomp.LINALG` gives them `out=`)
LINALG = {"solve_ex": solve_ex, "inv_ex": inv_ex, "lu_factor": lu_factor,
          "lu_factor_ex": lu_factor_ex, "lu": lu, "lu_solve": _linalg_lu_solve}
# the `torch.*` names written here in Python (see `_ops.plain_functions`); `lu` is now torch.lu
PLAIN = ["lu_unpack", "lu", "lu_solve"]


def _bind():
    from .._tensor import Tensor
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
