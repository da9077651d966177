"""`torchish.linalg`: PyTorch's linalg namespace over the registry's linalg ops."""
from . import _autocast
from ._ops import linalg as _l
from ._ops.linalg_decomp import LINALG as _DECOMP
from ._ops.reduction import norm as _norm
from ._ops.return_types import _rt
from ._unsupported import module_getattr

inv = _l.inverse
det = _l.det
solve = _l.linalg_solve
cholesky = _l.linalg_cholesky
svdvals = _l.linalg_svdvals
eigvalsh = _l.linalg_eigvalsh
pinv = _l.linalg_pinv
matrix_exp = _l.linalg_matrix_exp
matrix_power = _l.matrix_power
matrix_rank = _l.linalg_matrix_rank
matrix_norm = _l.linalg_matrix_norm
solve_triangular = _l.linalg_solve_triangular
multi_dot = _l.multi_dot

_QR = _rt("linalg_qr", ("Q", "R"))
_SVD = _rt("linalg_svd", ("U", "S", "Vh"))
_EIGH = _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))


def cross(input, other, *, dim=-1, out=None):
    # linalg.cross defaults to the last dimension (torch.cross to the first of size 3)
    from . import cross as public_cross  # torchish.cross: the function that takes out=
    return public_cross(input, other, dim=dim, out=out)


def qr(A, mode="reduced"):
    return _QR(*_l.linalg_qr(A, mode))


def svd(A, full_matrices=True, *, driver=None):
    return _SVD(*_l.linalg_svd(A, full_matrices))


def eigh(A, UPLO="L"):
    return _EIGH(*_l.linalg_eigh(A, UPLO))


def slogdet(A):
    from ._ops.return_types import _LINALG_SLOGDET
    _l._float_input("linalg.slogdet", A)
    _l._square("linalg.slogdet", A)
    return _LINALG_SLOGDET(*_l.linalg_slogdet(A))


@_autocast.casts("linalg_vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _norm(x, ord, dim, keepdim, dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if ord is None or (isinstance(ord, (int, float)) and (dim is None or isinstance(dim, int))
                       and not (A.ndim == 2 and dim is None and ord is not None)):
        return _norm(A, 2 if ord is None else ord, dim, keepdim, dtype)
    return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim)


globals().update(_DECOMP)  # lu, lstsq, the *_ex variants ... (_ops/linalg_decomp.py)
__getattr__ = module_getattr(__name__)
