"""Linear-algebra functions PyTorch removed in 1.9 but still exposes, only to raise an error
pointing to the `torch.linalg` replacement: `torch.lstsq`, `torch.solve`, `torch.eig`,
`torch.symeig`, `torch.matrix_rank` and the Tensor methods `lstsq`, `solve`, `eig`, `symeig`.

They keep PyTorch's signatures, so a call with arguments PyTorch's signature refuses is the
same TypeError, and any other call is PyTorch's RuntimeError (whatever the arguments' values).
"""

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_LSTSQ = (
    f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
    "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in "
    "the returned tuple (although it returns other information about the problem).\n\n"
    "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
    "The returned solution in `torch.lstsq` stored the residuals of the solution in the last "
    "m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
    "are in the field 'residuals' of the returned named tuple.\n\n"
    "The unpacking of the solution, as in\n"
    "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
    "should be replaced with:\n"
    "X = torch.linalg.lstsq(A, B).solution")

_SOLVE = (
    f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
    "`torch.linalg.solve` has its arguments reversed and does not return the LU factorization."
    "\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` "
    "or `torch.lu_unpack`.\n"
    "X = torch.solve(B, A).solution should be replaced with:\n"
    "X = torch.linalg.solve(A, B)")

_EIG = (
    f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
    "rather than real tensors mimicking complex tensors.\n\n"
    "L, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\n"
    "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
    "L_complex, V_complex = torch.linalg.eig(A)")

_SYMEIG = (
    f"{_REMOVED} The default behavior has changed from using the upper triangular portion of "
    "the matrix by default to using the lower triangular portion.\n\n"
    "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
    "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
    "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")

_MATRIX_RANK = (
    f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
    "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def lstsq(input, A, *, out=None):
    raise RuntimeError(_LSTSQ)


def solve(input, A, *, out=None):
    raise RuntimeError(_SOLVE)


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(_EIG)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_SYMEIG)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MATRIX_RANK)


PLAIN = ["lstsq", "solve", "eig", "symeig", "matrix_rank"]
for _name in PLAIN:   # (their `out=` is part of the signature; accept_out must leave it be)
    globals()[_name].handles_out = True


def _tensor_lstsq(self, other):
    raise RuntimeError(_LSTSQ)


def _tensor_solve(self, other):
    raise RuntimeError(_SOLVE)


def _tensor_eig(self, eigenvectors=False):
    raise RuntimeError(_EIG)


def _tensor_symeig(self, eigenvectors=False):
    raise RuntimeError(_SYMEIG)


def _bind():
    # the methods have narrower signatures (no `out=`, symeig without `upper`); named as
    # PyTorch's, which a TypeError about their arguments prints
    from .._tensor import Tensor
    for name in ("lstsq", "solve", "eig", "symeig"):
        method = globals()[f"_tensor_{name}"]
        method.__name__, method.__qualname__ = name, f"Tensor.{name}"
        setattr(Tensor, name, method)


_bind()
