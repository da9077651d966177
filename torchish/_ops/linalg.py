"""Matrix products and linear algebra (`torch.linalg` re-exports the `linalg_*` ops)."""
import jax
import jax.numpy as jnp

from .registry import Promote, op

P = Promote


def _float_check(name, *xs):
    for x in xs:
        if not (jnp.issubdtype(x.dtype, jnp.inexact) or jnp.issubdtype(x.dtype, jnp.integer)):
            raise RuntimeError(f"{name}: unsupported dtype {x.dtype}")


def _mm_check(a, b, what="mat1 and mat2"):
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"{what} shapes cannot be multiplied ({a.shape[-2]}x{a.shape[-1]} "
                           f"and {b.shape[-2]}x{b.shape[-1]})")


def _same_dtype(name, a, b):
    if a.dtype != b.dtype:
        from .._dtype import from_np
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{from_np(a.dtype).name} != {from_np(b.dtype).name}")


@op(promote=P.NONE, grad_fn="MmBackward0")
def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    _mm_check(input, mat2)
    _same_dtype("mm", input, mat2)
    return input @ mat2


@op(promote=P.NONE, grad_fn="BmmBackward0")
def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    _same_dtype("bmm", input, mat2)
    return input @ mat2


def _matmul_name(kinds, statics):
    return "MatmulBackward0"


@op(promote=P.NONE, grad_fn="DotBackward0")
def dot(input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{tensor.shape[0]}] to have the same number of elements, but "
                           "got {input.shape[0]} and {tensor.shape[0]} elements respectively")
    _same_dtype("dot", input, tensor)
    return jnp.dot(input, tensor)


@op(promote=P.NONE, grad_fn="DotBackward0")
def vdot(input, other):
    return jnp.vdot(input, other)


@op(promote=P.NONE, grad_fn="MvBackward0")
def mv(input, vec):
    if input.shape[-1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}"
                           f"x{input.shape[1]}), vec ({vec.shape[0]})")
    return input @ vec


@op(promote=P.NONE, grad_fn="UnsafeViewBackward0", function=False, method=False)
def _matmul_nd(input, other):
    if input.shape[-1] != other.shape[-2 if other.ndim > 1 else 0]:
        a = input.reshape(-1, input.shape[-1]) if input.ndim > 1 else input.reshape(1, -1)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {other.shape[-2] if other.ndim > 1 else other.shape[0]}"
                           f"x{other.shape[-1] if other.ndim > 1 else 1})")
    _same_dtype("matmul", input, other)
    return jnp.matmul(input, other)


def matmul(input, other):
    """`@`: dispatches, as PyTorch does, to dot / mv / mm / bmm-like products by rank."""
    from .. import _tensor
    if not isinstance(other, _tensor.Tensor) or not isinstance(input, _tensor.Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor")
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a}D and {b}D")
    if a == 1 and b == 1:
        return dot(input, other)
    if a == 2 and b == 1:
        return mv(input, other)
    if a == 2 and b == 2:
        return mm(input, other)
    if a == 1 and b == 2:
        return mm(input.unsqueeze(0), other).squeeze(0)
    return _matmul_nd(input, other)


def _rmatmul(self, other):
    return matmul(other, self)


@op(promote=P.DEFAULT, grad_fn="AddmmBackward0", inplace=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _mm_check(mat1, mat2)
    prod = mat1 @ mat2
    prod = prod if alpha == 1 else prod * alpha
    return prod + (input if beta == 1 else input * beta) if beta != 0 else prod + 0 * input


@op(promote=P.DEFAULT, grad_fn="AddmvBackward0", inplace=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return beta * input + alpha * (mat @ vec)


@op(promote=P.DEFAULT, grad_fn="BaddbmmBackward0", inplace=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return beta * input + alpha * (batch1 @ batch2)


@op(promote=P.DEFAULT, grad_fn="AddbmmBackward0", inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return beta * input + alpha * jnp.sum(batch1 @ batch2, axis=0)


@op(promote=P.DEFAULT, grad_fn="AddrBackward0", inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return beta * input + alpha * jnp.outer(vec1, vec2)


@op(promote=P.DEFAULT, grad_fn="MulBackward0", aliases=("ger",))
def outer(input, vec2):
    return jnp.outer(input, vec2)


@op(promote=P.DEFAULT, grad_fn="ViewBackward0", method=False, tensors=("operands",))
def _einsum(equation, operands):
    return jnp.einsum(equation, *operands, precision=jax.lax.Precision.HIGHEST)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _einsum(equation, list(operands))


@op(promote=P.DEFAULT, grad_fn="TensordotBackward0", method=False)
def tensordot(a, b, dims=2):
    return jnp.tensordot(a, b, axes=dims)


@op(promote=P.DEFAULT, grad_fn="KronBackward0")
def kron(input, other):
    return jnp.kron(input, other)


@op(promote=P.DEFAULT, grad_fn="LinalgCrossBackward0")
def cross(input, other, dim=None):
    if dim is None:
        dim = next(i for i, n in enumerate(input.shape) if n == 3)
    return jnp.cross(input, other, axis=dim)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgDetBackward0", aliases=("linalg_det",))
def det(input):
    return jnp.linalg.det(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSlogdetBackward0", method=False)
def linalg_slogdet(A):
    return jnp.linalg.slogdet(A)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgInvExBackward0", aliases=("linalg_inv",))
def inverse(input):
    return jnp.linalg.inv(input)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSolveExBackward0", method=False)
def linalg_solve(A, B, *, left=True):
    if not left:
        return jnp.swapaxes(jnp.linalg.solve(jnp.swapaxes(A, -1, -2), jnp.swapaxes(B, -1, -2)),
                            -1, -2)
    if B.ndim == A.ndim - 1:
        return jnp.linalg.solve(A, B[..., None])[..., 0]
    return jnp.linalg.solve(A, B)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgCholeskyExBackward0", method=False)
def linalg_cholesky(A, *, upper=False):
    L = jnp.linalg.cholesky(A)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgCholeskyExBackward0")
def cholesky(input, upper=False):
    L = jnp.linalg.cholesky(input)
    return jnp.swapaxes(L, -1, -2).conj() if upper else L


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgQrBackward0", method=False)
def linalg_qr(A, mode="reduced"):
    return tuple(jnp.linalg.qr(A, mode=mode))


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSvdBackward0", method=False)
def linalg_svd(A, full_matrices=True):
    u, s, vh = jnp.linalg.svd(A, full_matrices=full_matrices)
    return u, s, vh


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgSvdBackward0", method=False)
def linalg_svdvals(A):
    return jnp.linalg.svd(A, compute_uv=False)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False)
def linalg_eigh(A, UPLO="L"):
    w, v = jnp.linalg.eigh(A, UPLO=UPLO)
    return w, v


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgEighBackward0", method=False)
def linalg_eigvalsh(A, UPLO="L"):
    return jnp.linalg.eigvalsh(A, UPLO=UPLO)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgPinvBackward0", aliases=("pinverse",))
def linalg_pinv(input, rcond=None, hermitian=False):
    return jnp.linalg.pinv(input, hermitian=hermitian)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixExpBackward0", method=False)
def linalg_matrix_exp(A):
    return jax.scipy.linalg.expm(A)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixNormBackward0", method=False)
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False):
    return jnp.linalg.norm(A, ord=ord, axis=tuple(dim), keepdims=keepdim)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgMatrixPowerBackward0", aliases=("linalg_matrix_power",))
def matrix_power(input, n):
    return jnp.linalg.matrix_power(input, n)


@op(promote=P.INT_TO_FLOAT, differentiable=False, method=False)
def linalg_matrix_rank(A, tol=None, hermitian=False):
    return jnp.linalg.matrix_rank(A).astype(jnp.int64)


@op(promote=P.INT_TO_FLOAT, grad_fn="LinalgLstsqBackward0", method=False)
def linalg_lstsq_solution(A, B):
    return jnp.linalg.lstsq(A, B)[0]


@op(promote=P.INT_TO_FLOAT, grad_fn="TriangularSolveBackward0", method=False)
def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    return jax.scipy.linalg.solve_triangular(A, B, lower=not upper, unit_diagonal=unitriangular)


@op(promote=P.INT_TO_FLOAT, grad_fn="CdistBackward0", method=False)
def cdist(x1, x2, p=2.0, compute_mode=None):
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if p == 2.0:
        sq = jnp.sum(diff * diff, -1)
        return jnp.where(sq == 0, 0, jnp.sqrt(jnp.where(sq == 0, 1, sq)))
    return jnp.sum(jnp.abs(diff) ** p, -1) ** (1 / p)


def _bind():
    from .._tensor import Tensor
    Tensor.matmul = matmul
    Tensor.__matmul__ = matmul
    Tensor.__rmatmul__ = _rmatmul


_bind()
PLAIN = ["matmul", "einsum"]
