"""Operand checks shared by the linear-algebra ops (`linalg*.py`), each raising PyTorch's
message for it word for word: PyTorch words one check differently in different functions
(its helpers take the function's and the operand's names), so the names are arguments here.

Each check reads only static facts (ndim, shape, dtype), so it runs the same on operand
arrays inside an op body (also JAX tracers) and on Tensors in a composite."""

import jax.numpy as jnp

from .pointwise import legacy_name


def dtype_name(x):
    """PyTorch's scalar type name ("Float", "Long") of a Tensor or an array."""
    legacy = getattr(x.dtype, "_legacy", None)
    return legacy_name(x) if legacy is None else legacy


def _inexact(x):
    dtype = x.dtype
    if hasattr(dtype, "is_floating_point"):   # a torchish dtype
        return dtype.is_floating_point or dtype.is_complex
    return jnp.issubdtype(dtype, jnp.inexact)


def _prefixed(name, text):
    return text if name is None else f"{name}: {text}"


# ---- number of dimensions: PyTorch has four wordings --------------------------------------

def at_least_2d(name, A, what="A"):
    """"<name>: The input tensor A must have at least 2 dimensions." (`what=None`: no
    operand named, as linalg.cond words it)."""
    if A.ndim < 2:
        tensor = "tensor" if what is None else f"tensor {what}"
        raise RuntimeError(f"{name}: The input {tensor} must have at least 2 dimensions.")


def operand_2d(name, A, what):
    """"<name>: <what> must have at least 2 dimensions." (householder, lstsq, geqrf)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: {what} must have at least 2 dimensions.")


def counted_2d(name, A, what):
    """"<what> should have at least 2 dimensions, but has N dimensions instead" (the LAPACK
    solvers' wording; `name` None: no prefix)."""
    if A.ndim < 2:
        raise RuntimeError(_prefixed(name, f"{what} should have at least 2 dimensions, but has "
                                           f"{A.ndim} dimensions instead"))


def expected_2d(name, A, what):
    """"<name>: Expected <what> to have at least 2 dimensions, but it has N dimensions
    instead" (triangular_solve)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected {what} to have at least 2 dimensions, but it has "
                           f"{A.ndim} dimensions instead")


# ---- shape and dtype ----------------------------------------------------------------------

def square_shape(name, A, what="A"):
    """"<name>: A must be batches of square matrices, but they are R by C matrices" (`name`
    None: no prefix), for an A already known to have 2 dimensions or more."""
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(_prefixed(name, f"{what} must be batches of square matrices, but "
                                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices"))


def square(name, A, what="A"):
    """PyTorch's check of a batch of square matrices: at least 2-d, then square."""
    at_least_2d(name, A, what)
    square_shape(name, A, what)


def float_or_complex(name, A):
    """"<name>: Expected a floating point or complex tensor as input. Got <Type>"."""
    if not _inexact(A):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {dtype_name(A)}")


def same_dtype(name, a, b, a_name, b_name, period=False):
    """"<name>: Expected <a> and <b> to have the same dtype, but found <a> of type X and <b> of
    type Y instead" (`name` None: no prefix; `period`: the LAPACK solvers end it with one)."""
    if a.dtype != b.dtype:
        raise RuntimeError(_prefixed(
            name, f"Expected {a_name} and {b_name} to have the same dtype, but found {a_name} "
                  f"of type {dtype_name(a)} and {b_name} of type {dtype_name(b)} instead"
                  f"{'.' if period else ''}"))


def float_or_double(A):
    """The message of PyTorch's kernels that take LAPACK's four types only (matrix_rank
    without `tol`, lstsq), with no function name."""
    if jnp.dtype(getattr(A.dtype, "np", A.dtype)) not in _LAPACK_TYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")


_LAPACK_TYPES = tuple(jnp.dtype(t) for t in ("float32", "float64", "complex64", "complex128"))
