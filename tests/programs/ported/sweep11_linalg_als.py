"""Linear algebra workout: CP decomposition of a 3-way tensor by alternating least squares
(khatri-rao through einsum, torch.linalg.lstsq / solve), a truncated HOSVD (Tucker) with qr/svd
printed sign-invariantly, norms, cholesky_ex, cdist, kron, tensordot, and gradients through
solve, inv, det and slogdet."""
import torch

torch.manual_seed(0)
torch.set_printoptions(precision=4)

I, J, K, R = 6, 5, 4, 3
A0, B0, C0 = torch.randn(I, R), torch.randn(J, R), torch.randn(K, R)
X = torch.einsum("ir,jr,kr->ijk", A0, B0, C0) + 0.01 * torch.randn(I, J, K)
print("X", X.shape, f"fro {torch.linalg.vector_norm(X).item():.5f}")


def khatri_rao(U, V):
    return torch.einsum("ir,jr->ijr", U, V).reshape(-1, U.shape[1])


def unfold(T, mode):
    return T.movedim(mode, 0).reshape(T.shape[mode], -1)


A, B, C = torch.randn(I, R), torch.randn(J, R), torch.randn(K, R)
for sweep in range(6):
    A = torch.linalg.lstsq(khatri_rao(B, C), unfold(X, 0).T).solution.T
    gram = (C.T @ C) * (A.T @ A)
    B = torch.linalg.solve(gram, (unfold(X, 1) @ khatri_rao(A, C)).T).T
    C = torch.linalg.lstsq(khatri_rao(A, B), unfold(X, 2).T, driver="gelsd").solution.T
    rec = torch.einsum("ir,jr,kr->ijk", A, B, C)
    err = torch.linalg.norm(X - rec) / torch.linalg.norm(X)
    print(f"als sweep {sweep} rel err {err.item():.4f}")
print("kr shape", khatri_rao(B, C).shape, "unfold", unfold(X, 1).shape)

# truncated HOSVD: factors from each unfolding's leading left singular vectors
ranks = (3, 3, 2)
factors = []
for mode, r in enumerate(ranks):
    U, S, Vh = torch.linalg.svd(unfold(X, mode), full_matrices=False)
    factors.append(U[:, :r])
    print(f"mode {mode} singular values", S[:r])
core = torch.einsum("ijk,ia,jb,kc->abc", X, *factors)
approx = torch.einsum("abc,ia,jb,kc->ijk", core, *factors)
print("tucker core", core.shape, f"rel err {(torch.linalg.norm(X - approx) / torch.linalg.norm(X)).item():.4f}")
P = factors[0] @ factors[0].T
print("projector (sign-free)", P.diagonal())

M = torch.randn(7, 4)
Q, Rm = torch.linalg.qr(M)
print("qr", Q.shape, Rm.shape, f"orth {(Q.T @ Q - torch.eye(4)).abs().max().item() < 1e-5}")
print("|diag R|", Rm.diagonal().abs())
Qc, Rc = torch.linalg.qr(M, mode="complete")
print("complete", Qc.shape, Rc.shape, torch.allclose(Qc @ Rc, M, atol=1e-5))
U, S, Vh = torch.linalg.svd(M, full_matrices=False)
for k in (1, 2, 3):
    low = U[:, :k] @ torch.diag(S[:k]) @ Vh[:k]
    print(f"rank {k} err {torch.linalg.matrix_norm(M - low).item():.5f} "
          f"tail {S[k:].pow(2).sum().sqrt().item():.5f}")

print("matrix norms", [round(torch.linalg.matrix_norm(M, ord=o).item(), 4) for o in ("fro", "nuc", 2, -2, 1, float("inf"))])
print("vector norms", [round(torch.linalg.vector_norm(M, ord=o).item(), 4) for o in (1, 2, 3.5, float("inf"), 0)])
print("vector_norm dim", torch.linalg.vector_norm(M, dim=0, keepdim=True))

spd = M.T @ M + 0.1 * torch.eye(4)
L, info = torch.linalg.cholesky_ex(spd)
print("cholesky_ex", info, torch.allclose(L @ L.T, spd, atol=1e-5), L.diagonal())
L_bad, info_bad = torch.linalg.cholesky_ex(-spd)
print("cholesky_ex not pd info", info_bad)
try:
    torch.linalg.cholesky(-spd)
except Exception as e:
    print(type(e).__name__, e)

pts, ref = torch.randn(5, 3), torch.randn(4, 3)
print("cdist p2", torch.cdist(pts, ref))
print("cdist p1", torch.cdist(pts, ref, p=1).sum().item())
print("kron", torch.kron(torch.eye(2), torch.tensor([[1., 2.], [3., 4.]])))
T1, T2 = torch.randn(3, 4, 5), torch.randn(4, 5, 2)
print("tensordot", torch.tensordot(T1, T2, dims=2).shape,
      torch.tensordot(T1, T2, dims=([1, 2], [0, 1])).sum().item())
print("tensordot int0", torch.tensordot(torch.ones(2), torch.ones(3), dims=0).shape)

# gradients through solve / inv / det / slogdet
Am = (torch.randn(4, 4) + 4 * torch.eye(4)).requires_grad_()
b = torch.randn(4, 2, requires_grad=True)
x = torch.linalg.solve(Am, b)
inv = torch.linalg.inv(Am)
det = torch.linalg.det(Am)
sign, logabs = torch.linalg.slogdet(Am)
loss = x.pow(2).sum() + inv.trace() + det / 100 + logabs
loss.backward()
print("grad_fns", x.grad_fn.name(), inv.grad_fn.name(), det.grad_fn.name(), logabs.grad_fn.name())
print("loss", f"{loss.item():.5f}", "sign", sign)
print("dA", Am.grad)
print("db", b.grad)
Xs = torch.linalg.solve(Am, b.T, left=False)
print("solve left=False", Xs.shape, Xs.grad_fn.name())
LU, piv = torch.linalg.lu_factor(Am.detach())
print("lu_solve", torch.allclose(torch.linalg.lu_solve(LU, piv, b.detach()), x.detach(), atol=1e-5), piv)
print("cholesky_solve", torch.allclose(torch.cholesky_solve(torch.eye(4), L), torch.linalg.inv(spd), atol=1e-4))
print("pinv", torch.linalg.pinv(M).shape, "rank", torch.linalg.matrix_rank(M), torch.linalg.matrix_rank(P))
print("multi_dot", torch.linalg.multi_dot([M.T, M, torch.ones(4, 1)]).squeeze(1))
w, V = torch.linalg.eigh(spd.clone().requires_grad_())
w.sum().backward()
print("eigh", w, w.grad_fn.name())
S2 = torch.linalg.svdvals(M.clone().requires_grad_())
S2[0].backward()
print("svdvals grad_fn", S2.grad_fn.name())
batch = torch.randn(3, 4, 4) + 4 * torch.eye(4)
print("batched det", torch.linalg.det(batch), torch.linalg.slogdet(batch).logabsdet)
for bad in (torch.zeros(3, 3), torch.randn(3, 4)):
    try:
        torch.linalg.solve(bad, torch.ones(3))
    except Exception as e:
        print(type(e).__name__, e)
try:
    torch.linalg.lstsq(torch.randn(4, 3), torch.randn(5, 2))
except Exception as e:
    print(type(e).__name__, e)
print("lstsq residuals (gelsd, tall)", torch.linalg.lstsq(torch.randn(6, 3), torch.randn(6, 2), driver="gelsd").residuals)
