"""Gaussian-process regression: an RBF kernel from torch.cdist, torch.linalg.cholesky,
torch.cholesky_solve and torch.linalg.solve_triangular, the log-determinant from the Cholesky
diagonal, the negative log marginal likelihood minimised by LBFGS with a strong-Wolfe line
search over softplus-parametrised hyperparameters, and the predictive mean and variance."""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
x = torch.linspace(-3, 3, 12).unsqueeze(1)
y = torch.sin(x).squeeze(1) + 0.1 * torch.randn(12)
xs = torch.tensor([[-2.5], [0.0], [1.3], [4.0]])


def rbf(a, b, lengthscale, variance):
    d = torch.cdist(a / lengthscale, b / lengthscale)
    return variance * torch.exp(-0.5 * d.pow(2))


raw = torch.nn.Parameter(torch.tensor([0.0, 0.0, -2.0]))


def hypers():
    ls, var, noise = F.softplus(raw)
    return ls, var, noise + 1e-4


def nll():
    ls, var, noise = hypers()
    K = rbf(x, x, ls, var) + noise * torch.eye(len(x))
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(1), L)
    logdet = 2 * torch.log(torch.diagonal(L)).sum()
    return 0.5 * (y @ alpha.squeeze(1)) + 0.5 * logdet + 0.5 * len(x) * math.log(2 * math.pi)


loss0 = nll()
loss0.backward()
print("initial nll", f"{loss0.item():.6f}", loss0.grad_fn.name(), raw.grad)
L0 = torch.linalg.cholesky(rbf(x, x, 1.0, 1.0) + 0.1 * torch.eye(12))
print("L", L0.shape, L0.dtype, torch.allclose(L0 @ L0.T, rbf(x, x, 1.0, 1.0) + 0.1 * torch.eye(12)))
print("triu zero", L0.triu(1).abs().max().item(), L0.diagonal()[:3])

opt = torch.optim.LBFGS([raw], lr=1.0, max_iter=8, line_search_fn="strong_wolfe")
calls = []


def closure():
    opt.zero_grad()
    loss = nll()
    loss.backward()
    calls.append(loss.item())
    return loss


for step in range(2):
    loss = opt.step(closure)
    print(step, f"{loss.item():.6f}", [f"{h.item():.4f}" for h in hypers()])
print("closure calls", len(calls) > 3, f"final {nll().item():.6f}")
state = opt.state[opt._params[0]]
print("lbfgs state", sorted(k for k in state if not k.startswith("_")), state["n_iter"] > 0)

with torch.no_grad():
    ls, var, noise = hypers()
    K = rbf(x, x, ls, var) + noise * torch.eye(12)
    L = torch.linalg.cholesky(K)
    Ks = rbf(x, xs, ls, var)
    v = torch.linalg.solve_triangular(L, Ks, upper=False)
    w = torch.linalg.solve_triangular(L, y.unsqueeze(1), upper=False)
    mean = (v.T @ w).squeeze(1)
    var_s = var - v.pow(2).sum(0)
    print("mean", mean)
    print("std", var_s.clamp_min(0).sqrt())
    alt = Ks.T @ torch.cholesky_solve(y.unsqueeze(1), L)
    print("mean agrees", torch.allclose(alt.squeeze(1), mean))
    print("logdet agrees", torch.allclose(2 * L.diagonal().log().sum(), torch.logdet(K)))
    print("slogdet", torch.linalg.slogdet(K))
    print("numpy names", K.sum(axis=1, keepdims=True).shape, torch.mean(K, axis=0)[:3],
          torch.cat([mean, var_s], axis=0).shape)

bad = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
try:
    torch.linalg.cholesky(bad)
except torch.linalg.LinAlgError as e:
    print("LinAlgError", e)
L, info = torch.linalg.cholesky_ex(bad)
print("cholesky_ex info", info)
try:
    torch.linalg.solve_triangular(L0, y.unsqueeze(1))
except TypeError as e:
    print("TypeError", e)
try:
    torch.linalg.solve_triangular(L0, y, upper=False)
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
print("upper", torch.allclose(torch.linalg.cholesky(K, upper=True), torch.linalg.cholesky(K).mT))
