"""Independent multi-output Gaussian processes fitted together in float32: a batch of ARD
Matern-5/2 kernels built with torch.cdist on per-task scaled inputs, batched
torch.linalg.cholesky / cholesky_ex with a jitter-retry loop, cholesky_solve, torch.logdet on a
batch, the marginal likelihood minimised by LBFGS (closure, default line search), then
posterior predictions, a MultivariateNormal built from the posterior scale_tril, and kernel
ridge regression with cholesky_inverse as a cross-check; last, the Hessian of one task's
likelihood for a Laplace approximation, which PyTorch refuses (cdist has no double backward)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal

torch.manual_seed(3)
T, N, D = 2, 10, 2
x = torch.rand(N, D) * 4 - 2
f1 = torch.sin(1.5 * x[:, 0]) + 0.3 * x[:, 1]
f2 = torch.cos(x[:, 0] * x[:, 1])
y = torch.stack([f1, f2]) + 0.05 * torch.randn(T, N)
print("data", x.shape, y.shape, y.dtype)


class BatchGP(nn.Module):
    def __init__(self, tasks, dims):
        super().__init__()
        self.raw_ls = nn.Parameter(torch.zeros(tasks, 1, dims))
        self.raw_var = nn.Parameter(torch.zeros(tasks))
        self.raw_noise = nn.Parameter(torch.full((tasks,), -3.0))

    def kernel(self, a, b):
        ls = F.softplus(self.raw_ls)
        r = torch.cdist(a / ls, b / ls)
        s5 = math.sqrt(5.0) * r
        k = (1 + s5 + s5.pow(2) / 3) * torch.exp(-s5)
        return F.softplus(self.raw_var)[:, None, None] * k

    def noise(self):
        return F.softplus(self.raw_noise) + 1e-2

    def train_cov(self):
        K = self.kernel(x.expand(T, N, D), x.expand(T, N, D))
        return K + self.noise()[:, None, None] * torch.eye(N)

    def nll(self):
        K = self.train_cov()
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        fit = 0.5 * (y.unsqueeze(-2) @ alpha).squeeze()
        logdet = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (fit + logdet + 0.5 * N * math.log(2 * math.pi)).sum()


gp = BatchGP(T, D)
print("params", [(n, tuple(p.shape)) for n, p in gp.named_parameters()])
K0 = gp.train_cov()
print("K", K0.shape, K0.grad_fn.name(), torch.allclose(K0, K0.transpose(-1, -2)))
print("logdet", torch.logdet(K0).detach(), torch.linalg.slogdet(K0.detach()).logabsdet)
loss = gp.nll()
loss.backward()
print("nll0", f"{loss.item():.5f}", loss.grad_fn.name())
print("grad ls", gp.raw_ls.grad.squeeze(1))
print("grad noise", gp.raw_noise.grad)

opt = torch.optim.LBFGS(gp.parameters(), lr=0.5, max_iter=5, history_size=5)
evals = [0]


def closure():
    opt.zero_grad()
    out = gp.nll()
    out.backward()
    evals[0] += 1
    return out


for it in range(2):
    before = opt.step(closure)
    print("lbfgs", it, f"{before.item():.5f}", f"{gp.nll().item():.5f}")
print("evals", evals[0], "state n_iter", opt.state[gp.raw_ls]["n_iter"])
with torch.no_grad():
    print("lengthscales", F.softplus(gp.raw_ls).squeeze(1))
    print("variance", F.softplus(gp.raw_var), "noise", gp.noise())


def robust_cholesky(K, jitter=1e-6, tries=4):
    for i in range(tries):
        L, info = torch.linalg.cholesky_ex(K + jitter * (10 ** i) * torch.eye(K.shape[-1]))
        if not info.any():
            return L, i
    raise RuntimeError("not positive definite")


bad = torch.ones(2, 3, 3) - 2e-4 * torch.eye(3)
bad[1] = torch.eye(3)
L_bad, info = torch.linalg.cholesky_ex(bad)
print("info", info, info.dtype)
try:
    torch.linalg.cholesky(bad)
except torch.linalg.LinAlgError as e:
    print("LinAlgError", type(e).__name__, isinstance(e, RuntimeError), str(e).splitlines()[0])
L_fix, tries = robust_cholesky(bad)
print("fixed after", tries, L_fix.shape)

xs = torch.linspace(-2, 2, 5).unsqueeze(1).expand(5, D).contiguous()
with torch.no_grad():
    K = gp.train_cov()
    L = torch.linalg.cholesky(K)
    Ks = gp.kernel(x.expand(T, N, D), xs.expand(T, 5, D))
    Kss = gp.kernel(xs.expand(T, 5, D), xs.expand(T, 5, D))
    mean = (Ks.transpose(-1, -2) @ torch.cholesky_solve(y.unsqueeze(-1), L)).squeeze(-1)
    v = torch.linalg.solve_triangular(L, Ks, upper=False)
    cov = Kss - v.transpose(-1, -2) @ v + 1e-4 * torch.eye(5)
    print("mean", mean)
    print("std", cov.diagonal(dim1=-2, dim2=-1).clamp_min(0).sqrt())
    post = MultivariateNormal(mean, scale_tril=torch.linalg.cholesky(cov))
    print("post", post.batch_shape, post.event_shape, post.log_prob(mean).shape)
    print("entropy", post.entropy())
    torch.manual_seed(11)
    draws = post.sample((3,))
    print("draws", draws.shape, (draws - mean).abs().max().item() < 10.0)
    Kinv = torch.cholesky_inverse(L)
    krr = (Ks.transpose(-1, -2) @ (Kinv @ y.unsqueeze(-1))).squeeze(-1)
    print("krr agrees", torch.allclose(krr, mean, atol=1e-4), Kinv.shape)
    sol = torch.linalg.solve(K, y.unsqueeze(-1))
    print("solve agrees", torch.allclose(sol, torch.cholesky_solve(y.unsqueeze(-1), L), atol=1e-3))
    d1 = torch.cdist(x, xs, p=1)
    dinf = torch.cdist(x, xs, p=float("inf"))
    print("cdist p", d1.shape, (d1 >= dinf).all().item(), dinf[:2])
    mm = torch.cdist(x, xs, compute_mode="donot_use_mm_for_euclid_dist")
    print("cdist modes", torch.allclose(mm, torch.cdist(x, xs), atol=1e-5))
try:
    torch.cdist(x, xs[:, :1])
except RuntimeError as e:
    print("cdist error", e)
print("state", list(gp.state_dict().keys()))


def task_nll(theta, sqdist):
    """Task 0's marginal likelihood in log-hyperparameters, for a Laplace approximation."""
    ls, var, noise = theta.exp()
    K = var * torch.exp(-0.5 * sqdist(x / ls)) + (noise + 1e-2) * torch.eye(N)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y[0].unsqueeze(-1), L)
    return 0.5 * (y[0] @ alpha.squeeze(-1)) + L.diagonal().log().sum()


theta0 = torch.tensor([0.5, 0.3, -3.0])
try:
    torch.autograd.functional.hessian(lambda t: task_nll(t, lambda z: torch.cdist(z, z) ** 2),
                                      theta0)
except NotImplementedError as e:
    print("cdist hessian:", e)
