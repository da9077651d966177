"""Matrix functions of `torch.linalg` built on one factorisation each: det / slogdet /
logdet, inv, solve, cholesky, qr, svd / svdvals, eigh / eigvalsh, pinv, matrix_exp /
matrix_power / matrix_norm / matrix_rank, lstsq's solution and solve_triangular.

The LU, `*_ex` and legacy spellings live in `linalg_lu.py`, `linalg_cholesky.py` and
`linalg_decomp.py`; products in `linalg.py`."""
import functools

import jax
import jax.numpy as jnp

from .composite import composite
from ..autograd.saved_tensors import ABSENT
from .errors import argument_error
from .linalg_checks import at_least_2d, float_or_complex, float_or_double, square
from .pointwise import not_implemented
from .registry import REGISTRY, Promote, op
from .return_types import _rt

P = Promote
# (the outputs' names are the fields of PyTorch's nodes that save them)
_LINALG_QR = _rt("linalg_qr", ("Q", "R"))
_LINALG_SVD = _rt("linalg_svd", ("U", "S", "Vh"))
_LINALG_EIGH = _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))

def _saved_lu(which):
    """A `saved_as` callable giving det's and slogdet's `_saved_LU` / `_saved_pivots`: the LU
    factorisation of `A` their forward computes (and saves), pivots 1-based."""
    def value(A=None, input=None, **_):
        from .._tensor import _wrap
        A = input if A is None else A
        if A is None:   # (freed by backward)
            from ..autograd.graph import _FREED_MSG
            raise RuntimeError(_FREED_MSG)
        # (PyTorch factors A^T, its row-major A as LAPACK's column-major matrix)
        lu, piv, _ = jax.lax.linalg.lu(jnp.swapaxes(A, -1, -2))
        return _wrap(lu if which == "LU" else (piv + 1).astype(jnp.int32))
    return value


@op(promote=P.NONE, grad_fn="LinalgDetBackward0", aliases=("linalg_det",),
    saves=("input", "result"), saved_as={"A": "input", "LU": _saved_lu("LU"),
                                         "pivots": _saved_lu("pivots")})
def det(input):
    square("linalg.det", input)
    float_or_complex("linalg.det", input)
    if input.ndim >= 2 and input.shape[-1] == 0:  # empty product (JAX's det jvp fails on 0x0)
        return jnp.ones(input.shape[:-2], input.dtype)
    d = jnp.linalg.det(input)
    # PyTorch's gradient at an exactly singular matrix is zero (JAX's: the cofactor matrix)
    fixed = jax.lax.stop_gradient(d)
    return jnp.where(fixed == 0, fixed, d)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSlogdetBackward0", method=False,
    saves=("A", "result0"), saved_as={"sign": "result0", "LU": _saved_lu("LU"),
                                      "pivots": _saved_lu("pivots")})
def linalg_slogdet(A):
    sign, logabsdet = jnp.linalg.slogdet(A)
    return sign, logabsdet


def _info_check(name, info_of, message):
    """A `check` raising PyTorch's LinAlgError for a singular / not positive-definite input:
    PyTorch's linalg.inv, linalg.cholesky and linalg.solve are their *_ex variants followed
    by a host-side look at `info`. Operands the forward rejects are left to it."""
    def check(compute, A, *rest, **kw):
        from .linalg_lapack import info_error
        a = A._data
        if a.ndim < 2 or a.shape[-1] != a.shape[-2] or not jnp.issubdtype(a.dtype, jnp.inexact):
            return None
        return info_error(name, info_of(a), message)
    return check


@jax.jit
def _lu_info_of(a):
    from .linalg_lu import _lu_info
    return _lu_info(jax.lax.linalg.lu(a)[0])


@jax.jit
def _cholesky_info_of(a):
    from .linalg_cholesky import _cholesky_info
    return _cholesky_info(a)


def _not_pd(k):
    return (f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


@op(promote=P.NONE, grad_fn="LinalgInvExBackward0", aliases=("linalg_inv",), saves="result",
    saved_as={"inverse": "result"},
    check=_info_check("linalg.inv", _lu_info_of, lambda k: (
        f"The diagonal element {k} is zero, the inversion could not be completed because the "
        f"input matrix is singular.")))
def inverse(input):
    square("linalg.inv", input)
    float_or_complex("linalg.inv", input)
    return jnp.linalg.inv(input)


def _solve_lu(which):
    """`linalg_lu.solve_lu(which)`, imported when first asked (that module imports this)."""
    def value(**kw):
        from .linalg_lu import solve_lu
        return solve_lu(which)(**kw)
    return value


@op(promote=P.NONE, grad_fn="LinalgSolveExBackward0", method=False, saves=("A", "result"),
    saved_as={"LU": _solve_lu("LU"), "pivots": _solve_lu("pivots")},
    check=_info_check("torch.linalg.solve", _lu_info_of,
                      lambda k: "The solver failed because the input matrix is singular."))
def linalg_solve(A, B, *, left=True):
    from .linalg_lu import solve_checks
    solve_checks(A, B, left)
    if not left:
        return jnp.swapaxes(jnp.linalg.solve(jnp.swapaxes(A, -1, -2), jnp.swapaxes(B, -1, -2)),
                            -1, -2)
    if B.ndim == A.ndim - 1:
        return jnp.linalg.solve(A, B[..., None])[..., 0]
    return jnp.linalg.solve(A, B)


@op(promote=P.NONE, grad_fn="LinalgCholeskyExBackward0", method=False, saves="result",
    saved_as={"L": "result"},
    check=_info_check("linalg.cholesky", _cholesky_info_of, _not_pd))
def linalg_cholesky(input, *, upper=False):
    square("linalg.cholesky", input)
    float_or_complex("linalg.cholesky", input)
    L = jnp.linalg.cholesky(input)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


def _deprecated_cholesky(check):
    """`check`, after PyTorch's deprecation warning for torch.cholesky / Tensor.cholesky (its
    TORCH_WARN_ONCE comes first, before the operand checks)."""
    def warn_then_check(compute, *args, **kw):
        from .._warnings import warn_once
        warn_once(
            "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
            "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
            "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
            "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
            "equivalent results for all valid (symmetric positive definite) inputs.")
        return check(compute, *args, **kw)
    return warn_then_check


@op(promote=P.INT_TO_FLOAT, grad_fn="CholeskyBackward0", saves="result",
    check=_deprecated_cholesky(_info_check("cholesky", _cholesky_info_of, _not_pd)))
def cholesky(input, upper=False):
    square("cholesky", input)
    L = jnp.linalg.cholesky(input)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


_QR_NO_GRAD = {
    # PyTorch's QR backward needs Q, which mode='r' does not keep, and has no rule for the
    # extra columns of a complete Q: backward through these raises
    "r": "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
         "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
    "complete": "The QR decomposition is not differentiable when mode='complete' and "
                "nrows > ncols.",
}


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _qr_no_grad(A, mode):
    return jnp.linalg.qr(A, mode=mode)


def _qr_no_grad_bwd(mode, _, g):
    raise RuntimeError(_QR_NO_GRAD[mode])


_qr_no_grad.defvjp(lambda A, mode: (_qr_no_grad(A, mode), None), _qr_no_grad_bwd)


@op(promote=P.NONE, grad_fn="LinalgQrBackward0", method=False, returns=_LINALG_QR,
    saves=("Q", "R"))
def linalg_qr(A, mode="reduced"):
    at_least_2d("linalg.qr", A)
    float_or_complex("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if mode == "r":   # PyTorch returns an empty Q
        return jnp.zeros((0,), A.dtype), _qr_no_grad(A, mode)
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        return tuple(_qr_no_grad(A, mode))
    return tuple(jnp.linalg.qr(A, mode=mode))


@op(promote=P.NONE, grad_fn="LinalgSvdBackward0", method=False,
    returns=_LINALG_SVD, saves=("U", "S", "Vh"),
    saved_as={"S_sym_argsize_minus_1": lambda A=None, **_: ABSENT if A is None else
              min(A.shape[-2:])})
def linalg_svd(A, full_matrices=True):
    at_least_2d("linalg.svd", A)
    float_or_complex("linalg.svd", A)
    return svd_with_grad(A, full_matrices)


def svd_with_grad(A, full_matrices):
    """`jnp.linalg.svd` that JAX can differentiate when `full_matrices` (a non-square A).

    JAX differentiates only the reduced SVD; PyTorch's gradient of the full one also reaches
    only the first min(m, n) singular vectors, the others completing the basis. The values
    are the full SVD's (LAPACK's signs differ between the two), the gradient the reduced
    one's with its singular vectors turned to those signs (phases, when complex)."""
    m, n = A.shape[-2], A.shape[-1]
    if not full_matrices or m == n:
        return jnp.linalg.svd(A, full_matrices=full_matrices)
    u, s, vh = jnp.linalg.svd(A, full_matrices=False)
    uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(A), full_matrices=True)
    k = min(m, n)
    inner = jax.lax.stop_gradient(jnp.sum(jnp.conj(u) * uf[..., :k], axis=-2))
    size = jnp.abs(inner)
    turn = jnp.where(size > 0, inner / jnp.where(size > 0, size, 1), 1)
    u, vh = u * turn[..., None, :], vh * jnp.conj(turn)[..., :, None]
    # (the value exactly the full SVD's, the gradient the reduced one's)
    u = uf.at[..., :k].add(u - jax.lax.stop_gradient(u))
    vh = vhf.at[..., :k, :].add(vh - jax.lax.stop_gradient(vh))
    return u, s, vh


@op(promote=P.NONE, grad_fn="LinalgSvdBackward0", method=False)
def linalg_svdvals(A):
    at_least_2d("linalg.svd", A)
    float_or_complex("linalg.svd", A)
    return jnp.linalg.svd(A, compute_uv=False)


def _svdvals_steps(A):
    # with a graph, PyTorch computes U and V too: the values are output 1 of LinalgSvdBackward0
    return linalg_svd(A, full_matrices=False)[1]


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False,
    returns=_LINALG_EIGH, saves=("eigenvalues", "eigenvectors"))
def linalg_eigh(A, UPLO="L"):
    square("linalg.eigh", A)
    w, v = jnp.linalg.eigh(_hermitian(A, UPLO), symmetrize_input=False)
    return w, v


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False)
def linalg_eigvalsh(input, UPLO="L"):
    square("linalg.eigh", input)
    return jnp.linalg.eigh(_hermitian(input, UPLO), symmetrize_input=False)[0]


def _eigvalsh_steps(input, UPLO="L"):
    # with a graph, PyTorch computes the eigenvectors too (saved by LinalgEighBackward0)
    return linalg_eigh(input, UPLO)[0]


def _hermitian(A, UPLO):
    """The Hermitian matrix LAPACK sees (only the UPLO triangle of A is read); the gradient
    flows as for (A + A^H) / 2, which is PyTorch's symmetric eigh gradient."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    tri = jnp.triu(A) if UPLO == "U" else jnp.tril(A)
    strict = jnp.triu(A, 1) if UPLO == "U" else jnp.tril(A, -1)
    S = tri + _mH(strict)
    if jnp.iscomplexobj(S):  # the diagonal of a Hermitian matrix is read as real
        S = S - 1j * jnp.imag(jnp.diagonal(S, axis1=-2, axis2=-1))[..., None] * jnp.eye(
            S.shape[-1], dtype=S.dtype)
    sym = (A + _mH(A)) / 2
    return sym + jax.lax.stop_gradient(S - sym)


def _rank_tol(s, atol, rtol, shape, ref):
    """PyTorch's threshold on singular values: max(atol, rtol * s_max), where rtol defaults
    to eps * max(m, n) unless a positive atol is given."""
    eps = max(shape[-2:]) * jnp.finfo(ref.dtype).eps
    if rtol is None:
        rtol = eps if atol is None else jnp.where(jnp.asarray(atol) > 0, 0.0, eps)
    atol = 0.0 if atol is None else atol
    smax = jnp.max(s, axis=-1, keepdims=True) if s.shape[-1] else jnp.zeros(s.shape[:-1] + (1,))
    return jnp.maximum(jnp.asarray(atol)[..., None] if jnp.ndim(atol) else atol,
                       (jnp.asarray(rtol)[..., None] if jnp.ndim(rtol) else rtol) * smax)


def _mH(x):
    return jnp.swapaxes(x, -1, -2).conj()


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _pinv(A, atol, rtol, hermitian):
    if hermitian:
        w, v = jnp.linalg.eigh(_hermitian(A, "L"), symmetrize_input=False)
        keep = jnp.abs(w) > _rank_tol(jnp.abs(w), atol, rtol, A.shape, A)
        return (v * jnp.where(keep, 1 / jnp.where(keep, w, 1), 0)[..., None, :]) @ _mH(v)
    u, s, vh = jnp.linalg.svd(A, full_matrices=False)
    keep = s > _rank_tol(s, atol, rtol, A.shape, A)
    return (_mH(vh) * jnp.where(keep, 1 / jnp.where(keep, s, 1), 0)[..., None, :]) @ _mH(u)


def _pinv_fwd(A, atol, rtol, hermitian):
    P = _pinv(A, atol, rtol, hermitian)
    return P, (A, P, atol, rtol)


def _pinv_bwd(hermitian, res, g):
    # PyTorch's `pinv_backward` (FunctionsManual.cpp): a closed form in pinv(A), finite where
    # the SVD's own derivative is not (rank-deficient inputs)
    A, P, atol, rtol = res
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = _mH(P), _mH(g)
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        dA = -_mH(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    else:
        K = P @ gh
        PhK = Ph @ K
        dA = -_mH(K @ P) + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A
    zero = (lambda v: None if v is None else jnp.zeros_like(v))
    return dA, zero(atol), zero(rtol)


_pinv.defvjp(_pinv_fwd, _pinv_bwd)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgPinvBackward0", aliases=("pinverse",),
    tensors=("input", "atol", "rtol"), promoted=("input",), scalar_operands=("atol", "rtol"),
    joint_scalars=True, non_differentiable=("atol", "rtol"), saves=("input", "result"))
def linalg_pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    if input.shape[-1] == 0 or input.shape[-2] == 0:
        return jnp.zeros(input.shape[:-2] + (input.shape[-1], input.shape[-2]), input.dtype)
    return _pinv(input, atol, rcond if rcond is not None else rtol, hermitian)


@op(promote=P.NONE, grad_fn="LinalgMatrixExpBackward0", method=False)
def linalg_matrix_exp(input):
    square("linalg.matrix_exp", input)
    float_or_complex("linalg.matrix_exp", input)
    return jax.scipy.linalg.expm(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixNormBackward0", method=False)
def linalg_matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False):
    return jnp.linalg.norm(input, ord=ord, axis=tuple(dim), keepdims=keepdim)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixPowerBackward0", aliases=("linalg_matrix_power",))
def matrix_power(input, n):
    square("linalg.matrix_power", input)
    return jnp.linalg.matrix_power(input, n)


def _rank_tolerances(kinds):
    # tol is its own overload: with atol or rtol it fits none
    if kinds[1] is not None and (kinds[2] is not None or kinds[3] is not None):
        raise argument_error(REGISTRY["linalg_matrix_rank"], None, None, (), "mixed")


@op(promote=P.NONE, differentiable=False, method=False, tensors=("input", "tol", "atol", "rtol"),
    scalar_operands=("tol", "atol", "rtol"), joint_scalars=True, kinds_check=_rank_tolerances)
def linalg_matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    at_least_2d("torch.linalg.matrix_rank", input, "input")
    if tol is None:   # (the atol/rtol overload's kernel takes LAPACK's four types only)
        float_or_double(input)
    else:   # (the tol overload goes through linalg.svd's checks)
        float_or_complex("linalg.svd", input)
        if input.dtype.itemsize < 4 or input.dtype == jnp.bfloat16:
            raise not_implemented("linalg_svd_cpu", input)
    if hermitian:
        s = jnp.abs(jnp.linalg.eigh(_hermitian(input, "L"), symmetrize_input=False)[0])
    else:
        s = jnp.linalg.svd(input, compute_uv=False)
    thresh = _rank_tol(s, tol if atol is None else atol, rtol, input.shape, input)
    return jnp.sum(s > thresh, axis=-1).astype(jnp.int64)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgLstsqBackward0", method=False)
def linalg_lstsq_solution(A, B):
    return jnp.linalg.lstsq(A, B)[0]


def _triangular_dtype(compute, A, B, **_):
    # the kernel runs in A's dtype, B cast to it (raised after the body's shape checks)
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype.itemsize == 2:
        return NotImplementedError(f'"triangular_solve_cpu" not implemented for '
                                   f"'{A.dtype._legacy}'")
    return None


@op(promote=P.INT_TO_FLOAT, promoted=("A",), grad_fn="LinalgSolveTriangularBackward0",
    method=False, check=_triangular_dtype, saves=("A", "result"))
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    name = "linalg.solve_triangular"
    square(name, A)
    at_least_2d(name, B, "B")
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    from .errors import broadcast_error
    message = broadcast_error([B.shape[:-2], A.shape[:-2]])
    if message:
        raise RuntimeError(message)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        Bt = jnp.swapaxes(B, -1, -2)
        return jnp.swapaxes(jax.scipy.linalg.solve_triangular(
            A, Bt, trans=1, lower=not upper, unit_diagonal=unitriangular), -1, -2)
    return jax.scipy.linalg.solve_triangular(A, B, lower=not upper, unit_diagonal=unitriangular)


def slogdet(input):
    from .return_types import _SLOGDET
    square("linalg.slogdet", input)
    float_or_complex("linalg.slogdet", input)
    return _SLOGDET(*linalg_slogdet(input))


def logdet(input):
    """log(det(A)): nan for a negative determinant (real input), as PyTorch."""
    square("logdet", input)
    float_or_complex("logdet", input)
    sign, logabsdet = linalg_slogdet(input)
    if input.is_complex():
        return sign.log() + logabsdet
    from .pointwise_select import where
    return where(sign == -1, float("nan"), logabsdet)


def matrix_exp(input):
    square("linalg.matrix_exp", input)
    return linalg_matrix_exp(input)


def _bind():
    from .._tensor import Tensor
    Tensor.slogdet, Tensor.logdet, Tensor.matrix_exp = slogdet, logdet, matrix_exp


_bind()
PLAIN = ["slogdet", "logdet", "matrix_exp"]
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("linalg_svdvals", _svdvals_steps), ("linalg_eigvalsh", _eigvalsh_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)
