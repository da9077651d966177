"""Cholesky: linalg.cholesky_ex, cholesky_solve, cholesky_inverse, with PyTorch's backward
formulas where JAX's differ. `info` outputs are int32, as LAPACK's."""
import functools

import jax
import jax.numpy as jnp

from .linalg_checks import float_or_complex, square
from .linalg_matrix import _mH
from .registry import Promote, op
from .return_types import _rt
from .linalg_lapack import _broadcast_batch, _lapack_dtype, _raise_info, _solve_checks, _tri_solve

P = Promote

_CHOLESKY_EX = _rt("linalg_cholesky_ex", ("L", "info"))


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
    _solve_checks("cholesky_solve", input, input2, ("b", "u"))
    _lapack_dtype("cholesky_solve_cpu", input)
    return _cholesky_solve(*_broadcast_batch(input, input2), upper)


@op(promote=P.NONE, grad_fn="CholeskyInverseBackward0")
def cholesky_inverse(input, upper=False):
    square("cholesky_inverse", input)
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
    square("linalg.cholesky", input)
    float_or_complex("linalg.cholesky", input)
    L = _cholesky(input) if input.shape[-1] else input
    return (_mH(L) if upper else L), jax.lax.stop_gradient(_cholesky_info(input))


def cholesky_ex(input, *, upper=False, check_errors=False):
    result = linalg_cholesky_ex(input, upper=upper)
    if check_errors:
        _raise_info("linalg.cholesky_ex", result.info, lambda k: (
            f"The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite)."))
    return result


