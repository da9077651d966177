"""A statistician's notebook in PyTorch: a Kaplan-Meier survival curve from sorted event times
(torch.unique counts, cumsum / cumprod), bootstrap confidence intervals with torch.quantile and
its interpolation modes, histograms (histc, torch.histogram with density), weighted counts with
bincount, std_mean / var_mean with corrections, weighted covariance (torch.cov with fweights /
aweights) and corrcoef, a log-mean-exp via logsumexp, polynomial regression by
torch.linalg.lstsq and pinv, and PCA through torch.pca_lowrank / svd_lowrank."""
import math

import torch

torch.manual_seed(11)
gen = torch.Generator().manual_seed(2024)

# survival data: exponential event times, right-censored at t = 2.5
n = 60
group = torch.randint(0, 2, (n,), generator=gen)
rate = torch.where(group == 1, torch.tensor(0.6), torch.tensor(1.2))
times = torch.empty(n).exponential_(generator=gen) / rate
observed = times < 2.5
times = times.clamp(max=2.5)
print("data", times.shape, times.dtype, observed.sum().item(), torch.bincount(group).tolist())


def kaplan_meier(t, event):
    order = torch.argsort(t)
    t, event = t[order], event[order]
    uniq, counts = torch.unique(t, return_counts=True)
    deaths = torch.zeros_like(uniq).index_add_(0, torch.searchsorted(uniq, t), event.float())
    at_risk = counts.flip(0).cumsum(0).flip(0).float()
    surv = torch.cumprod(1 - deaths / at_risk, dim=0)
    return uniq, surv, at_risk


for g in (0, 1):
    mask = group == g
    ts, surv, at_risk = kaplan_meier(times[mask], observed[mask])
    idx = torch.searchsorted(ts, torch.tensor([0.5, 1.0, 2.0]), right=True) - 1
    median = ts[(surv <= 0.5).nonzero()[0, 0]] if (surv <= 0.5).any() else float("nan")
    print("km", g, ts.shape, at_risk[0].item(), [f"{v:.4f}" for v in surv[idx].tolist()],
          f"median {float(median):.4f}")

# bootstrap of the mean event time with several quantile interpolation modes
B = 200
idx = torch.randint(0, n, (B, n), generator=gen)
boot = times[idx].mean(dim=1)
for mode in ("linear", "lower", "higher", "nearest", "midpoint"):
    lo, hi = torch.quantile(boot, torch.tensor([0.025, 0.975]), interpolation=mode)
    print("ci", mode, f"{lo.item():.5f}", f"{hi.item():.5f}")
q = torch.quantile(times[idx], torch.tensor([0.25, 0.5, 0.75]), dim=1, keepdim=True)
print("quantile dim", q.shape, [f"{v:.5f}" for v in q.mean(dim=(1, 2)).tolist()])
with_nan = times.clone()
with_nan[::7] = float("nan")
print("nan", torch.quantile(with_nan, 0.5).item(), f"{torch.nanquantile(with_nan, 0.5).item():.5f}",
      f"{torch.nanmedian(with_nan).item():.5f}", f"{with_nan.nanmean().item():.5f}")

# histograms
h = torch.histc(times, bins=5, min=0, max=2.5)
print("histc", h.tolist(), h.dtype)
hist, edges = torch.histogram(times, bins=5, range=(0.0, 2.5), density=True)
print("histogram", [f"{v:.4f}" for v in hist.tolist()], edges.tolist(),
      f"{(hist * edges.diff()).sum().item():.4f}")
hist2, edges2 = torch.histogram(times, bins=torch.tensor([0.0, 0.5, 1.0, 2.5]),
                                weight=observed.float())
print("weighted", hist2.tolist(), edges2.tolist())
bins = torch.bucketize(times, torch.tensor([0.5, 1.0, 2.0]))
print("bucketize", torch.bincount(bins, minlength=5).tolist(),
      [f"{v:.4f}" for v in torch.bincount(bins, weights=times, minlength=5).tolist()])

# moments
std, mean = torch.std_mean(times)
var0, mean0 = torch.var_mean(times, correction=0)
print("moments", f"{std.item():.5f}", f"{mean.item():.5f}", f"{var0.item():.5f}",
      f"{mean0.item():.5f}")
X = torch.stack([times, rate, group.float()], dim=1)
s, m = torch.std_mean(X, dim=0, keepdim=True)
print("std_mean dim", s.shape, [f"{v:.5f}" for v in s.flatten().tolist()])
print("var_mean dim", [f"{v:.5f}" for v in torch.var_mean(X, dim=0, unbiased=False)[0].tolist()])
C = torch.cov(X.T, fweights=torch.randint(1, 4, (n,), generator=gen),
              aweights=torch.rand(n, generator=gen))
print("cov", C.shape, [f"{v:.5f}" for v in C.diagonal().tolist()])
R = torch.corrcoef(X.T)
print("corrcoef", [f"{v:.4f}" for v in R[0].tolist()], [f"{v:.4f}" for v in R.diagonal()])
# log-mean-exp of per-sample log-likelihoods, stable for large magnitudes
loglik = -rate * times + rate.log() - 200.0
lme = torch.logsumexp(loglik, dim=0) - math.log(n)
print("logmeanexp", f"{lme.item():.5f}", torch.log(torch.exp(loglik).mean()).item())
print("aminmax", [f"{v:.5f}" for v in torch.aminmax(times)],
      torch.kthvalue(times, 5).indices.item(), torch.cummax(times, 0).values[-1].item())

# polynomial regression of log-time on a covariate: lstsq vs pinv vs normal equations
x = torch.linspace(0, 1, n)
y = 1.0 - 2.0 * x + 0.5 * x ** 2 + 0.05 * torch.randn(n, generator=gen)
V = torch.vander(x, N=3, increasing=True)
coef = torch.linalg.lstsq(V, y.unsqueeze(1)).solution.squeeze(1)
coef_pinv = torch.linalg.pinv(V) @ y
coef_ne = torch.linalg.solve(V.T @ V, V.T @ y)
print("lstsq", [f"{v:.4f}" for v in coef.tolist()],
      f"{(coef - coef_pinv).abs().max().item():.2e}", f"{(coef - coef_ne).abs().max().item():.2e}")
res = torch.linalg.lstsq(V.double(), y.double().unsqueeze(1), driver="gelsd")
print("gelsd", res.rank.item(), [f"{v:.4f}" for v in res.singular_values.tolist()],
      res.residuals.shape, res.solution.dtype)

# PCA of correlated data, randomized low-rank methods
Z = torch.randn(100, 2, generator=gen) @ torch.tensor([[3.0, 0.0, 1.0, 0.5],
                                                       [0.0, 1.0, -1.0, 0.2]])
Z = Z + 0.01 * torch.randn(100, 4, generator=gen)
U, S, Vh = torch.linalg.svd(Z - Z.mean(0), full_matrices=False)
U2, S2, V2 = torch.pca_lowrank(Z, q=2)
print("pca", U2.shape, S2.shape, V2.shape, [f"{v:.3f}" for v in S2.tolist()],
      [f"{v:.3f}" for v in S[:2].tolist()])
U3, S3, V3 = torch.svd_lowrank(Z, q=3, niter=3)
print("svd_lowrank", [f"{v:.3f}" for v in S3.tolist()],
      f"{(Z - U3 @ torch.diag(S3) @ V3.T).abs().max().item():.3f}")
explained = S.pow(2) / S.pow(2).sum()
print("explained", [f"{v:.4f}" for v in explained.cumsum(0).tolist()])

try:
    torch.quantile(times, torch.tensor([0.5, 1.5]))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.bincount(torch.tensor([1, -1]))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.quantile(times, 0.5, interpolation="cubic")
except RuntimeError as e:
    print("RuntimeError:", e)
