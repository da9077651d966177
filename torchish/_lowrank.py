"""`torch.svd_lowrank` and `torch.pca_lowrank`: randomized SVD (Halko et al. 2009, Algorithms
4.4 and 5.1), written with public torchish ops in PyTorch's order, so that after the same
`manual_seed` the Gaussian test matrix (`torch.randn(n, q)`), and hence U, S, V, match."""
import torchish as _t

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    # PyTorch's `_linalg_utils.get_floating_dtype`: integer inputs work in float32
    return A.dtype if A.dtype.is_floating_point or A.is_complex() else _t.float32


def _approximate_basis(A, q, niter, M):
    niter = 2 if niter is None else niter
    R = _t.randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    X = _t.matmul(A, R)
    if M is not None:
        X = X - _t.matmul(M, R)
    Q = _t.linalg.qr(X).Q
    for _ in range(niter):
        X = _t.matmul(A.mH, Q)
        if M is not None:
            X = X - _t.matmul(M.mH, Q)
        Q = _t.linalg.qr(X).Q
        X = _t.matmul(A, Q)
        if M is not None:
            X = X - _t.matmul(M, Q)
        Q = _t.linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    # a wide matrix is handled through its conjugate transpose
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter, M)
    B = _t.matmul(Q.mH, A)
    if M is not None:
        B = B - _t.matmul(Q.mH, M)
    U, S, Vh = _t.linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: `(U, S, V)` with `A - M ~ U diag(S) V^H`, U m x q, V n x q."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: `svd_lowrank` of the column-centred `A` (q defaults to min(6, m, n))."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
