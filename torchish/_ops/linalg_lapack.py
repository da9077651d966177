"""Shared pieces of the factorization modules (`linalg_decomp`, `linalg_lu`,
`linalg_cholesky`): `LinAlgError`, PyTorch's errors for LAPACK `info` outputs, operand checks
and batched triangular solves."""

import jax
import jax.numpy as jnp

from .linalg_checks import counted_2d, same_dtype, square_shape
from .pointwise import not_implemented


class LinAlgError(RuntimeError):
    """`torch.linalg.LinAlgError`: a factorization or inversion failed (a RuntimeError)."""


# PyTorch's class is `torch._C._LinAlgError` (what `type(e).__name__` prints)
LinAlgError.__module__, LinAlgError.__name__, LinAlgError.__qualname__ = \
    "torch._C", "_LinAlgError", "_LinAlgError"


# ---- helpers ------------------------------------------------------------------------------

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

def _solve_checks(name, B, A, dim_names=("b", "A")):
    """PyTorch's checks of a LAPACK solver's b and A (cholesky_solve names A "u" in its
    dimension message only)."""
    counted_2d(None, B, dim_names[0])
    counted_2d(None, A, dim_names[1])
    square_shape(None, A)
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    same_dtype(None, B, A, "b", "A", period=True)


def _lapack_dtype(kernel, x):
    """PyTorch's error for an integer operand of a LAPACK kernel without integer support."""
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        raise not_implemented(kernel, x)

