"""Graph numerics with sparse COO tensors: an adjacency matrix assembled from an edge list with
duplicate entries (torch.sparse_coo_tensor + coalesce), degrees by torch.sparse.sum, the
normalised Laplacian, heat diffusion by implicit Euler solved with a hand-written conjugate
gradient on torch.sparse.mm, the spectrum from torch.linalg.eigh / eigvalsh on to_dense(),
spectral clustering by the Fiedler vector, gradients through torch.sparse.mm, and the errors."""
import torch

torch.manual_seed(5)

# two 6-node cliques joined by a single bridge edge, with some edges listed twice
edges = []
for base in (0, 6):
    for i in range(6):
        for j in range(i + 1, 6):
            edges.append((base + i, base + j))
edges.append((5, 6))
edges += [(0, 1), (7, 8)]
src = torch.tensor([a for a, b in edges] + [b for a, b in edges])
dst = torch.tensor([b for a, b in edges] + [a for a, b in edges])
n = 12
A = torch.sparse_coo_tensor(torch.stack([src, dst]), torch.ones(src.numel()), (n, n))
print("raw", A.layout, A.is_coalesced(), A._nnz(), A.shape, A.dtype)
A = A.coalesce()
print("coalesced", A.is_coalesced(), A._nnz(), A.values().max().item(),
      A.indices().shape, A.indices().dtype)
A = torch.sparse_coo_tensor(A.indices(), torch.ones(A._nnz()), (n, n)).coalesce()
small = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([2.0, 3.0]),
                                (2, 2))
print(small)
print(small.coalesce().to_dense())

# triangles: the Hadamard product of A with A @ A (sparse x sparse both ways), summed / 6
A2 = torch.sparse.mm(A, A)
tri = A * A2
print("A @ A", A2.layout, A2._nnz(), A2.is_coalesced(), "A * A2", tri._nnz(),
      tri.is_coalesced(), "triangles", torch.sparse.sum(tri).item() / 6)
deg = torch.sparse.sum(A, dim=1).to_dense()
print("degree", deg.tolist())
d_inv_sqrt = deg.pow(-0.5)
idx = A.indices()
norm_vals = d_inv_sqrt[idx[0]] * A.values() * d_inv_sqrt[idx[1]]
A_norm = torch.sparse_coo_tensor(idx, norm_vals, (n, n))
eye = torch.sparse_coo_tensor(torch.arange(n).repeat(2, 1), torch.ones(n), (n, n))
L = (eye - A_norm).coalesce()
print("laplacian", L._nnz(), f"{L.values().sum().item():.5f}",
      torch.allclose(L.to_dense(), L.to_dense().T))
# Frobenius norm of the normalised adjacency from its squared entries
sq = A_norm.pow(2)
print("frobenius", sq.is_coalesced(), f"{torch.sparse.sum(sq).sqrt().item():.5f}",
      f"{torch.linalg.matrix_norm(A_norm.to_dense()).item():.5f}")


def cg(matvec, b, iters=30, tol=1e-6):
    x = torch.zeros_like(b)
    r = b - matvec(x)
    p = r.clone()
    rs = (r * r).sum(0)
    for k in range(iters):
        Ap = matvec(p)
        alpha = rs / (p * Ap).sum(0)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = (r * r).sum(0)
        if rs_new.max().sqrt() < tol:
            return x, k + 1
        p = r + rs_new / rs * p
        rs = rs_new
    return x, iters


# implicit Euler for du/dt = -L u: (I + dt L) u_next = u, two heat sources at once
dt = 0.5
M = (eye + dt * L).coalesce()
u = torch.zeros(n, 2)
u[0, 0] = 1.0
u[11, 1] = 1.0
for step in range(3):
    u, iters = cg(lambda v: torch.sparse.mm(M, v), u)
    print("heat", step, iters, [f"{v:.5f}" for v in u.sum(0).tolist()],
          f"{u[:6, 0].sum().item():.5f}")
x_cg, iters = cg(lambda v: torch.sparse.mm(M, v), u)
x_dense = torch.linalg.solve(M.to_dense(), u)
print("cg vs solve", iters, x_dense.shape, f"{(x_cg - x_dense).abs().max().item():.5f}")

Ld = L.to_dense()
evals, evecs = torch.linalg.eigh(Ld)
print("eigh", evals.shape, evecs.shape, [f"{v:.4f}" for v in evals[:3].tolist()],
      f"{evals[-1].item():.4f}")
print("eigvalsh", torch.allclose(torch.linalg.eigvalsh(Ld), evals, atol=1e-5))
fiedler = evecs[:, 1]
fiedler = fiedler * fiedler[0].sign()
clusters = (fiedler > 0).long()
print("clusters", clusters.tolist(), torch.bincount(clusters).tolist())
# residual of the eigen equation, and orthonormality
print("residual", f"{(Ld @ evecs - evecs * evals).abs().max().item():.2e}",
      f"{(evecs.T @ evecs - torch.eye(n)).abs().max().item():.2e}")

# a learnable graph filter h(L) x = sum_k theta_k L^k x, fitted to a smooth target signal
x = torch.randn(n, 3)
target = torch.linalg.matrix_exp(-2 * Ld) @ x
theta = torch.zeros(4, requires_grad=True)
opt = torch.optim.SGD([theta], lr=0.05, momentum=0.9)
for it in range(12):
    opt.zero_grad()
    out, z = theta[0] * x, x
    for k in range(1, 4):
        z = torch.sparse.mm(L, z)
        out = out + theta[k] * z
    loss = (out - target).pow(2).mean()
    loss.backward()
    opt.step()
    if it % 4 == 3:
        print("filter", it, f"{loss.item():.6f}", [f"{v:.4f}" for v in theta.tolist()])
print("sparse.mm grad_fn", z.grad_fn, out.grad_fn.name())

w = torch.randn(n, 2, requires_grad=True)
y = torch.sparse.mm(A, w)
y.pow(2).sum().backward()
print("dense grad", w.grad.shape, w.grad.layout, f"{w.grad.abs().sum().item():.5f}",
      y.grad_fn.name())
vals = torch.ones(A._nnz(), requires_grad=True)
As = torch.sparse_coo_tensor(A.indices(), vals, (n, n))
torch.sparse.sum(torch.sparse.mm(As, torch.ones(n, 1)).to_sparse()).backward()
print("values grad", vals.grad.shape, vals.grad.sum().item())

try:
    torch.sparse_coo_tensor(torch.tensor([[0, 5]]), torch.ones(2), (3,), check_invariants=True)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.sparse.mm(A, torch.ones(5, 2))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    A.values()
    A.view(-1)
except RuntimeError as e:
    print("RuntimeError:", str(e).split(". ")[0])
