"""Factorizations and solvers besides LU and Cholesky (`linalg_lu.py`, `linalg_cholesky.py`):
lstsq, eig/eigvals, householder_product, tensorinv/tensorsolve, vecdot/vander/cond, and the
legacy `torch.svd` / `torch.qr` / `torch.triangular_solve` spellings; `LINALG` gathers the
`torch.linalg.*` functions of these three modules.

PyTorch's conventions are kept where LAPACK's and JAX's differ: `torch.svd` returns V (not Vh).
"""
import functools
import warnings

import jax
import jax.numpy as jnp

from .linalg_checks import (at_least_2d, counted_2d, expected_2d, float_or_complex,
                            float_or_double, operand_2d, same_dtype, square, square_shape)
from .linalg_matrix import _mH, _pinv, linalg_qr, linalg_svdvals
from .pointwise import legacy_name
from .registry import Promote, op
from .return_types import _rt
from .linalg_lapack import LinAlgError, _broadcast_batch, _lapack_dtype, _solve_checks, _tri_solve
from .linalg_cholesky import cholesky_ex
from .linalg_lu import LINALG as LU_LINALG, linalg_inv_ex

P = Promote

_SVD = _rt("svd", ("U", "S", "V"))
_QR = _rt("qr", ("Q", "R"))
_TRIANGULAR_SOLVE = _rt("triangular_solve", ("solution", "cloned_coefficient"))
_LSTSQ = _rt("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


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
    counted_2d("linalg.svd", input, "input")
    float_or_complex("linalg.svd", input)
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
    at_least_2d("linalg.qr", input)
    return _QR(*linalg_qr(input, "reduced" if some else "complete"))



@op(promote=P.NONE, grad_fn="TriangularSolveBackward0", method=False, function=False,
    returns=_TRIANGULAR_SOLVE)
def _triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    expected_2d("torch.triangular_solve", input, "b")
    expected_2d("torch.triangular_solve", A, "A")
    _solve_checks("triangular_solve", input, A)
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
    operand_2d(name, A, "input")
    float_or_double(A)
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
    same_dtype("linalg.vecdot", x, y, "x", "y")
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
    if p in ("fro", "nuc"):   # (PyTorch checks these first, under this name)
        square(f"{name}(ord={p})", input)
    else:
        at_least_2d(name, input, None)
    if p in (None, 2, -2):
        float_or_complex("linalg.svd", input)
        s = linalg_svdvals(input)
        ratio = s[..., -1:] / s[..., :1] if p == -2 else s[..., :1] / s[..., -1:]
        ratio = ratio.squeeze(-1)   # SqueezeBackward1, as PyTorch's
        return ratio.real if ratio.is_complex() else ratio
    if p not in ("fro", "nuc", 1, -1, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    square_shape(f"{name}(ord={p})", input)
    float_or_complex("linalg.inv", input)
    inverse = linalg_inv_ex(input).inverse
    res = linalg_matrix_norm(input, p) * linalg_matrix_norm(inverse, p)
    res = res.real if res.is_complex() else res
    if p == "nuc":   # PyTorch maps a singular input to inf for the other norms only
        return res
    from .pointwise_select import nan_to_num
    return nan_to_num(res, nan=float("inf"), posinf=float("inf"))


# the `torch.*` names written here in Python (see `_ops.plain_functions`)
PLAIN = ["svd", "qr", "triangular_solve"]


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


LINALG = {"vecdot": vecdot, "cholesky_ex": cholesky_ex, "lstsq": lstsq, "diagonal": diagonal,
          "vander": vander, "cond": cond, "LinAlgError": LinAlgError, **LU_LINALG}


# ---- eig, tensorinv/tensorsolve, householder_product ------------------------------------

_EIG = _rt("linalg_eig", ("eigenvalues", "eigenvectors"))


def _eig_checks(name, A):
    if not jnp.issubdtype(A.dtype, jnp.inexact):
        raise RuntimeError(f"Unknown Complex ScalarType for {legacy_name(A)}")
    square(name, A)


@op(promote=P.NONE, grad_fn="LinalgEigBackward0", method=False, function=False, returns=_EIG,
    saves=("eigenvalues", "eigenvectors"))
def linalg_eig(input):
    _eig_checks("linalg.eig", input)
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
    _eig_checks("linalg.eigvals", A)
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
    operand_2d(name, A, "input")
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


_bind()
