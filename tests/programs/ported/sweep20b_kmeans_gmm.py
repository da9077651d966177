# Clustering with plain tensor code, the way it shows up in notebooks and in anchor/codebook
# initialisation: k-means++ seeding (multinomial with a Generator), Lloyd iterations with
# cdist / scatter_add_ / index_add_ / bincount, empty-cluster handling, a silhouette score,
# then a diagonal-covariance Gaussian mixture fitted by EM in log space, and PCA via eigh.
import math

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(2024)
true_centers = torch.tensor([[0.0, 0.0, 0.0], [4.0, 4.0, 0.0], [0.0, 5.0, 3.0], [5.0, 0.0, 4.0]])
labels_true = torch.randint(0, 4, (160,), generator=gen)
scales = torch.tensor([0.5, 0.8, 0.6, 1.0])
X = true_centers[labels_true] + scales[labels_true, None] * torch.randn(160, 3, generator=gen)
print("data", X.shape, X.dtype, "true counts", torch.bincount(labels_true).tolist())


def kmeans_pp(X, k, gen):
    n = X.shape[0]
    first = torch.randint(0, n, (1,), generator=gen)
    centers = X[first]
    for _ in range(1, k):
        d2 = torch.cdist(X, centers).pow(2).min(dim=1).values
        idx = torch.multinomial(d2 / d2.sum(), 1, generator=gen)
        centers = torch.cat([centers, X[idx]], dim=0)
    return centers


def lloyd(X, centers, iters=20):
    k = centers.shape[0]
    for it in range(iters):
        dist = torch.cdist(X, centers)
        assign = dist.argmin(dim=1)
        sums = torch.zeros_like(centers).index_add_(0, assign, X)
        counts = torch.bincount(assign, minlength=k).to(X.dtype)
        empty = counts == 0
        if empty.any():
            # re-seed an empty cluster at the point farthest from its center
            far = dist.gather(1, assign[:, None]).squeeze(1).argmax()
            sums[empty] = X[far]
            counts[empty] = 1
        new = sums / counts[:, None]
        shift = (new - centers).norm(dim=1).max()
        centers = new
        if shift < 1e-9:
            break
    inertia = (X - centers[assign]).pow(2).sum()
    return centers, assign, inertia, it + 1


best = None
for restart in range(3):
    c0 = kmeans_pp(X, 4, gen)
    centers, assign, inertia, iters = lloyd(X, c0)
    print(f"restart {restart} inertia {inertia.item():.4f} iters {iters}")
    if best is None or inertia < best[2]:
        best = (centers, assign, inertia)
centers, assign, inertia = best
order = torch.argsort(centers[:, 0] * 10 + centers[:, 1], stable=True)
print("centers (sorted)", [[round(v, 3) for v in row] for row in centers[order].tolist()])
vals, counts = torch.unique(assign, return_counts=True)
print("cluster sizes", vals.tolist(), counts.tolist())

# scatter_add_ form of the same centroid update
sums = torch.zeros(4, 3).scatter_add_(0, assign[:, None].expand(-1, 3), X)
print("scatter == index_add", torch.allclose(sums / counts[:, None].to(X.dtype), centers))
one_hot = F.one_hot(assign, 4).to(X.dtype)
print("one_hot centroid", torch.allclose(one_hot.T @ X / one_hot.sum(0)[:, None], centers))

# contingency table against the true labels, and purity
table = torch.zeros(4, 4, dtype=torch.long)
table.index_put_((assign, labels_true), torch.ones_like(assign), accumulate=True)
print("contingency\n", table)
print("purity", f"{table.max(dim=1).values.sum().item() / X.shape[0]:.4f}")

# silhouette score
D = torch.cdist(X, X)
same = assign[:, None] == assign[None, :]
eye = torch.eye(len(X), dtype=torch.bool)
a = (D * (same & ~eye)).sum(1) / (same.sum(1) - 1).clamp(min=1)
b = torch.full((len(X),), math.inf)
for c in range(4):
    mask = assign == c
    mean_to_c = D[:, mask].mean(1)
    b = torch.where(assign != c, torch.minimum(b, mean_to_c), b)
sil = (b - a) / torch.maximum(a, b)
print("silhouette", f"{sil.mean().item():.5f}", "worst", f"{sil.min().item():.5f}",
      "kth", [round(v, 4) for v in sil.kthvalue(5).values.reshape(1).tolist()])

# GMM with diagonal covariances by EM in log space
K, (N, Dm) = 4, X.shape
means = centers.clone()
var = torch.ones(K, Dm)
logw = torch.full((K,), -math.log(K))
prev = -math.inf
for it in range(30):
    diff = X[:, None, :] - means[None]
    log_prob = -0.5 * ((diff ** 2) / var + var.log() + math.log(2 * math.pi)).sum(-1)
    joint = log_prob + logw
    ll = torch.logsumexp(joint, dim=1)
    resp = (joint - ll[:, None]).exp()
    Nk = resp.sum(0)
    means = resp.T @ X / Nk[:, None]
    var = (resp.T @ X.pow(2)) / Nk[:, None] - means.pow(2) + 1e-6
    logw = (Nk / N).log()
    total = ll.sum().item()
    if it % 10 == 0:
        print(f"em {it} loglik {total:.5f}")
    if total - prev < 1e-8:
        break
    prev = total
print("em stopped", it, f"loglik {total:.6f}", "weights", [round(v, 4) for v in logw.exp()[order].tolist()])
print("std", [[round(v, 3) for v in row] for row in var.sqrt()[order].tolist()])
bic = -2 * total + (K * 2 * Dm + K - 1) * math.log(N)
print("bic", f"{bic:.4f}", "hard agree", (resp.argmax(1) == assign).double().mean().item())
print("entropy", f"{-(resp * resp.clamp_min(1e-300).log()).sum(1).mean().item():.6f}")

# PCA of the centred data via eigh, and the variance it explains
Xc = X - X.mean(0)
cov = torch.cov(Xc.T)
evals, evecs = torch.linalg.eigh(cov)
evals, evecs = evals.flip(0), evecs.flip(1)
signs = torch.sign(evecs[0])
evecs = evecs * signs
print("explained", [round(v, 5) for v in (evals / evals.sum()).tolist()])
proj = Xc @ evecs[:, :2]
print("proj", proj.shape, "var", [round(v, 4) for v in proj.var(0).tolist()])
U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
print("svd agrees", torch.allclose(S ** 2 / (N - 1), evals))
print("cummax of sorted sil", sil.sort().values.cummax(0).indices[-3:].tolist())
