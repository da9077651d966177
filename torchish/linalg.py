"""`torchish.linalg`: PyTorch's linalg namespace over the registry's linalg ops."""
from . import _autocast
from ._ops import linalg as _l, linalg_checks as _checks, linalg_matrix as _m
from ._ops.linalg_decomp import LINALG as _DECOMP, _with_out
from ._ops.linalg_ldl import LINALG as _LDL
from ._ops.reduction import norm as _norm
from ._ops.return_types import _rt
from ._unsupported import module_getattr



def inv(A):   # (torch.inverse / torch.det name it `input`)
    return _m.inverse(A)


def det(A):
    return _m.det(A)


solve = _m.linalg_solve
cholesky = _m.linalg_cholesky
svdvals = _m.linalg_svdvals
eigvalsh = _m.linalg_eigvalsh
pinv = _m.linalg_pinv
matrix_exp = _m.linalg_matrix_exp
matrix_power = _m.matrix_power
matrix_rank = _m.linalg_matrix_rank
solve_triangular = _m.linalg_solve_triangular
multi_dot = _l.multi_dot

_QR = _rt("linalg_qr", ("Q", "R"))
_SVD = _rt("linalg_svd", ("U", "S", "Vh"))
_EIGH = _rt("linalg_eigh", ("eigenvalues", "eigenvectors"))


def matmul(input, other, *, out=None):
    from . import matmul as public_matmul
    return public_matmul(input, other, out=out)


def cross(input, other, *, dim=-1, out=None):
    # linalg.cross defaults to the last dimension (torch.cross to the first of size 3)
    from . import cross as public_cross  # torchish.cross: the function that takes out=
    return public_cross(input, other, dim=dim, out=out)


def qr(A, mode="reduced"):
    return _QR(*_m.linalg_qr(A, mode))


def svd(A, full_matrices=True, *, driver=None):
    return _SVD(*_m.linalg_svd(A, full_matrices))


def eigh(input, UPLO="L"):
    return _EIGH(*_m.linalg_eigh(input, UPLO))


def slogdet(A):
    from ._ops.return_types import _LINALG_SLOGDET
    _checks.square("linalg.slogdet", A)   # (PyTorch's order: the shape, then the dtype)
    _checks.float_or_complex("linalg.slogdet", A)
    return _LINALG_SLOGDET(*_m.linalg_slogdet(A))


@_autocast.casts("linalg_vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if getattr(x, "is_sparse", False) is True:   # (a Tensor-like may lack the attribute)
        from ._sparse_ops import refuse
        raise refuse("vector_norm")
    return _norm(x, ord, dim, keepdim, dtype)


def _check_norm_dtype(input, dtype):
    # PyTorch's checks of `dtype=` in linalg.matrix_norm (as linalg.vector_norm's)
    from ._dtype import promote_types
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_norm: dtype should be floating point or complex, "
                           f"but got {dtype._legacy}")
    if dtype.is_complex != input.is_complex():
        kind = "complex for complex" if input.is_complex() else "real for real"
        raise RuntimeError(f"linalg.matrix_norm: dtype should be {kind} inputs, but got "
                           f"{dtype._legacy}")
    if promote_types(input.dtype, dtype) != dtype:
        raise RuntimeError(f"linalg.matrix_norm: the dtype of the input ({input.dtype._legacy}) "
                           f"should be convertible without narrowing to the specified dtype "
                           f"({dtype._legacy})")


def _ord_str(ord):
    return str(int(ord)) if isinstance(ord, float) and ord.is_integer() else str(ord)


def _check_matrix_norm_order(ord):
    if ord not in ("fro", "nuc") if isinstance(ord, str) else abs(ord) not in (1, 2, float("inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {_ord_str(ord)} not supported.")


class _DefaultOrder(str):
    """matrix_norm's default "fro", told apart from a "fro" the caller passed (PyTorch's
    invalid-combination message lists only the arguments given)."""


_FRO = _DefaultOrder("fro")


@_autocast.casts("linalg_matrix_norm")
def matrix_norm(input, ord=_FRO, dim=(-2, -1), keepdim=False, *, dtype=None):
    """linalg.matrix_norm, composed as PyTorch composes it (so the graph has its nodes):
    'fro' is a vector 2-norm; 'nuc' and +-2 reduce the singular values (sum, amax/amin) of input
    with `dim` moved last; +-1 and +-inf reduce a vector 1-norm along one dim with amax/amin."""
    from ._ops.shape import _wrap_dim
    _check_matrix_norm_order(ord)   # (first: PyTorch's dtype check depends on it)
    _checks.at_least_2d("linalg.matrix_norm", input)
    _checks.float_or_complex("linalg.matrix_norm", input)
    if not isinstance(dim, (tuple, list)):
        from ._ops.overloads import _invalid_combination, table
        given = (input,) if ord is _FRO else (input, ord)
        raise _invalid_combination("linalg_matrix_norm", table("linalg_matrix_norm", False),
                                   given, {"dim": dim})
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    d0, d1 = _wrap_dim(dim[0], input.dim()), _wrap_dim(dim[1], input.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        _check_norm_dtype(input, dtype)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(input, 2, (d0, d1), keepdim, dtype=dtype)
        reduce = lambda s: s.sum(-1, keepdim)  # noqa: E731
    else:
        if abs(ord) != 2:
            if abs(ord) == float("inf"):  # the inf-norm is the 1-norm of the transpose
                d0, d1 = d1, d0
            if not keepdim and d0 < d1:
                d1 -= 1
            v = vector_norm(input, 1, (d0,), keepdim, dtype=dtype)
            return v.amax(d1, keepdim) if ord > 0 else v.amin(d1, keepdim)
        reduce = (lambda s: s.amax(-1, keepdim)) if ord > 0 else (  # noqa: E731
            lambda s: s.amin(-1, keepdim))
    if dtype is not None:
        input = input.to(dtype)
    perm = [i for i in range(input.dim()) if i not in (d0, d1)] + [d0, d1]
    result = reduce(svdvals(input.permute(perm)))
    if keepdim:
        inverse = [perm.index(i) for i in range(input.dim())]
        result = result.unsqueeze(-1).permute(inverse)
    return result


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm as PyTorch routes it: a matrix norm for a string `ord`, or a numeric one
    over two dims (given, or those of a 2-D input); otherwise a vector norm."""
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got [{', '.join(str(d) for d in dims)}]")
    if dims is None and ord is not None and input.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {input.dim()}D.")
    if isinstance(ord, str) or ord is not None and len(dims or range(input.dim())) == 2:
        return matrix_norm(input, ord, (0, 1) if dims is None else dims, keepdim, dtype=dtype)
    return _norm(input, 2 if ord is None else ord, dim, keepdim, dtype)


globals().update(_DECOMP)  # lu, lstsq, the *_ex variants ... (_ops/linalg_decomp.py)
globals().update({name: _with_out(f"linalg_{name}", fn) for name, fn in _LDL.items()})
__getattr__ = module_getattr(__name__)
