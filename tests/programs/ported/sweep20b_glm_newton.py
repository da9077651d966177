# Fitting generalized linear models the statistician's way in PyTorch: Poisson regression by
# L-BFGS on the negative log-likelihood, then Newton / IRLS steps with the exact Hessian from
# torch.autograd.functional, standard errors from the inverse Hessian (Cholesky), Wald
# z-scores and p-values, and a logistic regression with a ridge penalty and calibration.
import math

import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(42)
n, d = 200, 3
X = torch.randn(n, d, generator=gen)
X = torch.cat([torch.ones(n, 1), X], dim=1)
beta_true = torch.tensor([0.3, 0.5, -0.4, 0.0])
rate = torch.exp(X @ beta_true)
counts = torch.poisson(rate, generator=gen)
print("counts", counts.dtype, counts[:8].tolist(), "mean", f"{counts.mean():.4f}")


def poisson_nll(beta):
    eta = X @ beta
    return (torch.exp(eta) - counts * eta).sum() + torch.lgamma(counts + 1).sum()


# 1) L-BFGS with a strong-Wolfe line search
beta = torch.zeros(d + 1, requires_grad=True)
opt = torch.optim.LBFGS([beta], lr=1, max_iter=50, tolerance_grad=1e-10,
                        tolerance_change=1e-12, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = poisson_nll(beta)
    loss.backward()
    return loss


final = opt.step(closure)
state = opt.state[beta]
print("lbfgs nll", f"{final.item():.6f}", "func evals", state["func_evals"], "n_iter", state["n_iter"])
print("beta lbfgs", [f"{v:.4f}" for v in beta.detach().tolist()])

# the same loss through nn.PoissonNLLLoss (log_input, full=Stirling term)
crit = nn.PoissonNLLLoss(log_input=True, full=False, reduction="sum")
print("nn.PoissonNLLLoss", f"{crit(X @ beta.detach(), counts).item():.6f}",
      "lgamma const", f"{torch.lgamma(counts + 1).sum().item():.6f}")
crit_full = nn.PoissonNLLLoss(log_input=True, full=True)
print("full mean", f"{crit_full(X @ beta.detach(), counts).item():.6f}")

# 2) Newton's method with the exact Hessian
b = torch.zeros(d + 1)
for it in range(6):
    g = torch.autograd.functional.jacobian(poisson_nll, b)
    H = torch.autograd.functional.hessian(poisson_nll, b)
    step = torch.linalg.solve(H, g)
    b = b - step
    print(f"newton {it} |g| {g.norm().item():.3e} step {step.abs().max().item():.3e}")
print("beta newton", [f"{v:.4f}" for v in b.tolist()])
print("agree", torch.allclose(b, beta.detach(), atol=1e-5))

# 3) IRLS: the closed form for the same Hessian, W = diag(mu)
mu = torch.exp(X @ b)
H = torch.autograd.functional.hessian(poisson_nll, b)
H_irls = X.T @ (mu[:, None] * X)
print("hessian match", torch.allclose(H_irls, H, rtol=1e-8), H.shape, H.dtype)
L = torch.linalg.cholesky(H_irls)
cov = torch.cholesky_inverse(L)
se = cov.diagonal().sqrt()
z = b / se
normal = torch.distributions.Normal(0.0, 1.0)
p = 2 * (1 - normal.cdf(z.abs()))
for name, coef, s, zz, pp in zip(["const", "x1", "x2", "x3"], b, se, z, p):
    print(f"{name:>6} {coef.item():8.4f} {s.item():7.4f} {zz.item():8.3f} {pp.item():.4f}")
print("cov symmetric", torch.allclose(cov, cov.T), "logdet", f"{torch.logdet(H_irls).item():.5f}",
      "slogdet", tuple(f"{v.item():.5f}" for v in torch.linalg.slogdet(H_irls)))
deviance = 2 * torch.sum(torch.xlogy(counts, counts / mu) - (counts - mu))
print("deviance", f"{deviance.item():.5f}", "dof", n - (d + 1), "aic",
      f"{2 * poisson_nll(b).item() + 2 * (d + 1):.4f}")

# 4) logistic regression with an L2 penalty, numerically stable pieces
logits_true = X @ torch.tensor([-0.2, 1.5, -1.0, 0.5])
yb = torch.bernoulli(torch.sigmoid(logits_true), generator=gen)
lam = 0.1
penalty = torch.diag(torch.tensor([0.0] + [lam] * d))
w = torch.zeros(d + 1)
for it in range(8):
    logits = X @ w
    prob = torch.sigmoid(logits)
    W = prob * (1 - prob)
    # IRLS: weighted least squares on the working response
    zwork = logits + (yb - prob) / W
    A = X.T @ (W[:, None] * X) + n * penalty
    w_new = torch.linalg.solve(A, X.T @ (W * zwork))
    delta = (w_new - w).abs().max()
    w = w_new
    if delta < 1e-10:
        break
print("irls iters", it + 1)
logits = X @ w
# log(1 + exp(-|z|)) form people write to avoid overflow
nll = (torch.clamp(logits, min=0) - logits * yb + torch.log1p(torch.exp(-logits.abs()))).mean()
loss = nll + lam / 2 * (w[1:] ** 2).sum()
w.requires_grad_()
print("logreg loss", f"{loss.item():.6f}", "w", [f"{v:.4f}" for v in w.detach().tolist()])
obj = (torch.nn.functional.softplus(X @ w) - yb * (X @ w)).sum() + n * lam / 2 * (w[1:] ** 2).sum()
(gw,) = torch.autograd.grad(obj, w)
print("stationary", gw.abs().max().item() < 1e-8, obj.grad_fn.name())
ref = nn.functional.binary_cross_entropy_with_logits(X @ w.detach(), yb)
print("bce check", f"{ref.item():.6f}")
prob = torch.sigmoid(X @ w.detach())
odds = prob / (1 - prob)
print("odds ratio", [f"{v:.4f}" for v in torch.exp(w.detach()[1:]).tolist()], "odds[0]", f"{odds[0]:.4f}")
acc = ((prob > 0.5).to(yb.dtype) == yb).double().mean()
brier = ((prob - yb) ** 2).mean()
print(f"acc {acc.item():.3f} brier {brier.item():.5f} logloss {-(yb * prob.log() + (1 - yb) * (1 - prob).log()).mean():.5f}")
bins = torch.linspace(0, 1, 6)
idx = torch.bucketize(prob, bins[1:-1])
for k in range(5):
    sel = idx == k
    if sel.any():
        print(f"bin {k} n={int(sel.sum())} pred {prob[sel].mean():.3f} obs {yb[sel].mean():.3f}")
print("1 - p min", f"{(1 - prob).min().item():.5f}", "1/p max", f"{(1 / prob).max().item():.4f}")
print("log-sum-exp check", math.isclose(torch.logsumexp(torch.stack([torch.zeros(n), X @ w.detach()]), 0).sum().item(),
                                        torch.nn.functional.softplus(X @ w.detach()).sum().item(), rel_tol=1e-9))
