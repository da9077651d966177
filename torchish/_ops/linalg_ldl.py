"""`torch.linalg.ldl_factor`, `ldl_factor_ex` and `ldl_solve`: the LDL^T (LDL^H) factorization
of a symmetric (Hermitian) indefinite matrix with Bunch-Kaufman pivoting, in LAPACK's
`?sytrf` / `?hetrf` storage (lower triangle, as PyTorch asks for), and its solve (`?sytrs`).

JAX has no sytrf, so the unblocked algorithm (`?sytf2`) is written with jnp in a
`lax.while_loop` (a step eliminates one or two columns). It keeps the trailing block as a full
symmetric matrix, so LAPACK's row/column interchanges within it are one symmetric permutation;
columns already eliminated are not interchanged, as in LAPACK. `pivots` follow LAPACK: 1-based,
a 1x1 block at k has pivots[k] = kp > 0, a 2x2 block at (k, k+1) has both equal to -kp.
PyTorch differentiates neither function (its nodes are `NotImplemented`).
"""
import jax
import jax.numpy as jnp

from .linalg_checks import float_or_complex, same_dtype, square
from .pointwise import legacy_name, not_implemented
from .registry import NOT_IMPLEMENTED, Promote, op
from .return_types import _rt

_LDL_FACTOR = _rt("linalg_ldl_factor", ("LD", "pivots"))
_LDL_FACTOR_EX = _rt("linalg_ldl_factor_ex", ("LD", "pivots", "info"))

_ALPHA = (1 + 17 ** 0.5) / 8   # Bunch-Kaufman's growth bound


def _cabs1(x):
    # LAPACK's i?amax measure for complex entries: |re| + |im|
    return jnp.abs(x.real) + jnp.abs(x.imag) if jnp.iscomplexobj(x) else jnp.abs(x)


def _sytf2(A, hermitian):
    """One matrix: (LD, 1-based int32 pivots, int32 info)."""
    n = A.shape[-1]
    herm = hermitian and jnp.iscomplexobj(A)
    conj = jnp.conj if herm else (lambda x: x)
    low = jnp.tril(A, -1)
    diag = jnp.diagonal(A).real.astype(A.dtype) if herm else jnp.diagonal(A)
    M = low + conj(low).T + jnp.diag(diag)
    idx = jnp.arange(n)
    rows, cols = idx[:, None], idx[None, :]
    dabs = (lambda x: jnp.abs(x.real)) if herm else _cabs1

    def pivot(M, k):
        col = jnp.take(M, k, axis=1)
        absakk = dabs(M[k, k])
        below = jnp.where(idx > k, _cabs1(col), -1.0)
        imax = jnp.argmax(below)
        colmax = jnp.maximum(below[imax], 0.0)
        rowimax = jnp.where((idx >= k) & (idx != imax), _cabs1(jnp.take(M, imax, axis=0)),
                            0.0)
        rowmax = jnp.max(rowimax)
        # (LAPACK's tests, in its order of operations: a pivot choice on a near tie follows)
        keep = (absakk >= _ALPHA * colmax) | (
            absakk >= _ALPHA * colmax * (colmax / jnp.where(rowmax == 0, 1, rowmax)))
        one_at_imax = dabs(M[imax, imax]) >= _ALPHA * rowmax
        kp = jnp.where(keep, k, imax.astype(jnp.int32))
        kstep = jnp.where(keep | one_at_imax, 1, 2).astype(jnp.int32)
        zero = (jnp.maximum(absakk, colmax) == 0) | jnp.isnan(absakk)
        return zero, jnp.where(zero, k, kp), jnp.where(zero, 1, kstep).astype(jnp.int32)

    def body(state):
        M, piv, info, k = state
        zero, kp, kstep = pivot(M, k)
        kk = k + kstep - 1
        # interchange kk and kp within the trailing block only
        perm = jnp.where(idx == kk, kp, jnp.where(idx == kp, kk, idx))
        trailing = (rows >= k) & (cols >= k)
        M = jnp.where(trailing, M[perm][:, perm], M)
        x1 = jnp.where(idx > k, jnp.take(M, k, axis=1), 0)
        d = M[k, k]
        W1 = x1 / d
        upd1 = jnp.outer(x1, conj(W1))
        k1 = jnp.minimum(k + 1, n - 1)
        X = jnp.stack([jnp.where(idx > k1, jnp.take(M, k, axis=1), 0),
                       jnp.where(idx > k1, jnp.take(M, k1, axis=1), 0)], axis=1)
        a, b, c = M[k, k], M[k1, k], M[k1, k1]
        bt = conj(b)   # D = [[a, bt], [b, c]]
        det = a * c - b * bt
        Dinv = jnp.stack([jnp.stack([c, -bt]), jnp.stack([-b, a])]) / det
        W2 = X @ Dinv
        upd2 = X @ conj(W2).T
        two = kstep == 2
        upd = jnp.where(two, upd2, upd1)
        below = k + kstep - 1
        inner = (rows > below) & (cols > below)
        M = jnp.where(zero, M, jnp.where(inner, M - upd, M))
        newcol_k = jnp.where(two, W2[:, 0], W1)
        M = jnp.where(zero | (cols != k) | (rows <= below), M, newcol_k[:, None])
        M = jnp.where(zero | ~two | (cols != k1) | (rows <= below), M, W2[:, 1][:, None])
        if herm:   # (LAPACK stores the pivots' diagonal as exactly real)
            M = jnp.where((rows == cols) & (rows >= k) & (rows <= below),
                          M.real.astype(M.dtype), M)
        p = (kp + 1).astype(jnp.int32)
        piv = jnp.where(two, piv.at[k].set(-p).at[k1].set(-p), piv.at[k].set(p))
        info = jnp.where(zero & (info == 0), (k + 1).astype(jnp.int32), info)
        return M, piv, info, k + kstep

    state = (M, jnp.zeros(n, jnp.int32), jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))
    M, piv, info, _ = jax.lax.while_loop(lambda s: s[3] < n, body, state)
    return jnp.tril(M), piv, info


def _factor_checks(name, A):
    square(name, A)
    float_or_complex(name, A)
    if A.dtype.itemsize < 4 or A.dtype == jnp.bfloat16:
        raise not_implemented("ldl_factor_kernel_cpu", A)


@op(promote=Promote.NONE, grad_fn=NOT_IMPLEMENTED, kernel="linalg_ldl_factor_ex",
    method=False, function=False, returns=_LDL_FACTOR_EX)
def linalg_ldl_factor_ex(A, *, hermitian=False):
    _factor_checks("torch.linalg.ldl_factor_ex", A)
    n = A.shape[-1]
    batch = A.shape[:-2]
    if n == 0:
        return A, jnp.zeros(batch + (0,), jnp.int32), jnp.zeros(batch, jnp.int32)
    flat = A.reshape((-1, n, n))
    LD, piv, info = jax.vmap(lambda a: _sytf2(a, hermitian))(flat)
    return LD.reshape(A.shape), piv.reshape(batch + (n,)), info.reshape(batch)


def _raise_info(name, info):
    import numpy as np
    if isinstance(info._data, jax.core.Tracer):   # (under compile: no value to check)
        return
    arr = np.asarray(info._data).reshape(-1)
    if arr.size and (arr != 0).any():
        # PyTorch's check reaches an internal assert for a singular D (sytrf's info > 0)
        code = int(arr[np.flatnonzero(arr)[0]])
        raise RuntimeError(
            f'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
            f'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. {name}: Unknown '
            f'error code: {code}.')


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    LD, pivots, info = linalg_ldl_factor_ex(A, hermitian=hermitian)
    if check_errors:
        _raise_info("torch.linalg.ldl_factor_ex", info)
    return _LDL_FACTOR_EX(LD, pivots, info)


def ldl_factor(A, *, hermitian=False):
    LD, pivots, info = linalg_ldl_factor_ex(A, hermitian=hermitian)
    _raise_info("torch.linalg.ldl_factor", info)
    return _LDL_FACTOR(LD, pivots)


def _sytrs(LD, piv, B, hermitian):
    """Solve with one factorization (LAPACK's ?sytrs, lower): B is n x nrhs."""
    n = LD.shape[-1]
    herm = hermitian and jnp.iscomplexobj(LD)
    conj = jnp.conj if herm else (lambda x: x)
    idx = jnp.arange(n)

    def swap(B, i, j):
        perm = jnp.where(idx == i, j, jnp.where(idx == j, i, idx))
        return B[perm]

    def forward(state):   # B := D^-1 L^-1 P B, a block at a time
        B, k = state
        two = piv[k] < 0
        k1 = jnp.minimum(k + 1, n - 1)
        kp = jnp.abs(piv[k]) - 1
        B = swap(B, jnp.where(two, k1, k), kp)
        last = jnp.where(two, k1, k)
        lk = jnp.where(idx > last, LD[:, k], 0)
        lk1 = jnp.where(two & (idx > last), LD[:, k1], 0)
        B = B - jnp.outer(lk, B[k]) - jnp.outer(lk1, B[k1])
        a, b, c = LD[k, k], LD[k1, k], LD[k1, k1]
        bt = conj(b)
        det = a * c - b * bt
        y0 = jnp.where(two, (c * B[k] - bt * B[k1]) / det, B[k] / (a.real if herm else a))
        y1 = jnp.where(two, (a * B[k1] - b * B[k]) / det, B[k1])
        B = B.at[k1].set(y1).at[k].set(y0)
        return B, k + jnp.where(two, 2, 1).astype(jnp.int32)

    def backward(state):   # B := P^T L^-H B, a block at a time from the last
        B, k = state
        two = piv[k] < 0
        k0 = jnp.where(two, k - 1, k)
        lk = jnp.where(idx > k, LD[:, k], 0)
        lk0 = jnp.where(idx > k, LD[:, k0], 0)
        B = B.at[k].add(-(conj(lk) @ B))
        B = B.at[k0].add(jnp.where(two, -(conj(lk0) @ B), 0))
        B = swap(B, k, jnp.abs(piv[k]) - 1)
        return B, k0 - 1

    B = jax.lax.while_loop(lambda s: s[1] < n, forward, (B, jnp.zeros((), jnp.int32)))[0]
    return jax.lax.while_loop(lambda s: s[1] >= 0, backward,
                              (B, jnp.full((), n - 1, jnp.int32)))[0]


def _solve_checks(LD, pivots, B):
    name = "torch.linalg.ldl_solve"
    square(name, LD)
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B.ndim, 1)}, {max(B.ndim, 1) - 1}], but got -2)")
    if LD.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if pivots.shape != LD.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape [{', '.join(map(str, pivots.shape))}] "
                           f"instead")
    if not jnp.issubdtype(pivots.dtype, jnp.integer):
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {legacy_name(pivots)}")
    same_dtype(None, B, LD, "b", "A", period=True)
    if not jnp.issubdtype(LD.dtype, jnp.inexact) or LD.dtype.itemsize < 4 or (
            LD.dtype == jnp.bfloat16):
        raise not_implemented("ldl_solve_kernel_cpu", LD)


@op(promote=Promote.NONE, grad_fn=NOT_IMPLEMENTED, kernel="linalg_ldl_solve", method=False,
    function=False)
def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    _solve_checks(LD, pivots, B)
    n = LD.shape[-1]
    batch = jnp.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    if n == 0 or 0 in B.shape[-1:] or 0 in batch:
        return jnp.zeros(batch + B.shape[-2:], B.dtype)
    LDb = jnp.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1, n, n))
    pb = jnp.broadcast_to(pivots.astype(jnp.int32), batch + (n,)).reshape((-1, n))
    Bb = jnp.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    X = jax.vmap(lambda ld, p, b: _sytrs(ld, p, b, hermitian))(LDb, pb, Bb)
    return X.reshape(batch + B.shape[-2:])


def ldl_solve(LD, pivots, B, *, hermitian=False):
    return linalg_ldl_solve(LD, pivots, B, hermitian=hermitian)


# torch.linalg names (torchish/linalg.py takes them in)
LINALG = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
