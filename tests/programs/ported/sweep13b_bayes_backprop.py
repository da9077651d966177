"""Bayes by backprop on a toy 4-output regression: two BayesianLinear(4, 4) layers with mu/rho
Parameters, sigma from softplus(rho), weights drawn with Normal(...).rsample(), the KL to a
Normal prior through torch.distributions.kl_divergence on Independent distributions, an ELBO
averaged over 3 samples, and a predictive mean/std over 10 samples from a seeded generator."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, kl_divergence

torch.manual_seed(0)


class BayesianLinear(nn.Module):
    def __init__(self, n_in, n_out, prior_sigma=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.empty(n_out, n_in).uniform_(-0.2, 0.2))
        self.w_rho = nn.Parameter(torch.full((n_out, n_in), -3.0))
        self.b_mu = nn.Parameter(torch.zeros(n_out))
        self.b_rho = nn.Parameter(torch.full((n_out,), -3.0))
        self.prior_sigma = prior_sigma
        self.kl = torch.tensor(0.0)

    def posterior(self):
        w = Independent(Normal(self.w_mu, F.softplus(self.w_rho)), 2)
        b = Independent(Normal(self.b_mu, F.softplus(self.b_rho)), 1)
        return w, b

    def forward(self, x, generator=None):
        qw, qb = self.posterior()
        if generator is None:
            w, b = qw.rsample(), qb.rsample()
        else:  # reparameterised by hand to draw from a given generator
            w = self.w_mu + F.softplus(self.w_rho) * torch.randn(self.w_mu.shape, generator=generator)
            b = self.b_mu + F.softplus(self.b_rho) * torch.randn(self.b_mu.shape, generator=generator)
        pw = Independent(Normal(torch.zeros_like(self.w_mu), self.prior_sigma), 2)
        pb = Independent(Normal(torch.zeros_like(self.b_mu), self.prior_sigma), 1)
        self.kl = kl_divergence(qw, pw) + kl_divergence(qb, pb)
        return F.linear(x, w, b)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = BayesianLinear(4, 4), BayesianLinear(4, 4)

    def forward(self, x, generator=None):
        return self.l2(torch.tanh(self.l1(x, generator)), generator)

    def kl(self):
        return self.l1.kl + self.l2.kl


net = BNN()
x = torch.randn(12, 4)
y = torch.sin(x @ torch.randn(4, 4)) + 0.05 * torch.randn(12, 4)
qw, qb = net.l1.posterior()
print(qw, qw.batch_shape, qw.event_shape, qb.event_shape)
print("prior", Independent(Normal(torch.zeros(4, 4), 1.0), 2).log_prob(torch.zeros(4, 4)))
opt = torch.optim.Adam(net.parameters(), lr=0.03)
for step in range(5):
    nll, kl = 0.0, 0.0
    for _ in range(3):
        pred = net(x)
        nll = nll - Normal(pred, 0.1).log_prob(y).sum() / 3
        kl = kl + net.kl() / 3
    elbo_loss = nll + kl / x.shape[0]
    opt.zero_grad()
    elbo_loss.backward()
    opt.step()
    print(step, f"loss {elbo_loss.item():.4f} nll {nll.item():.4f} kl {kl.item():.4f}",
          f"rho grad {net.l1.w_rho.grad.abs().sum().item():.5f}")
print("grad_fns", elbo_loss.grad_fn.name(), net.kl().grad_fn.name(), pred.grad_fn.name())
print("sigma", F.softplus(net.l2.w_rho).detach().flatten()[:4])
w = qw.rsample((2,))
print("rsample", w.shape, w.grad_fn.name(), qw.log_prob(w).shape, qw.entropy().grad_fn.name())
try:
    kl_divergence(qw, Normal(torch.zeros(4, 4), 1.0))
except NotImplementedError as e:
    print("NotImplementedError", e)
try:
    Independent(Normal(torch.zeros(2), 1.0), 2)
except ValueError as e:
    print("ValueError", e)

gen = torch.Generator().manual_seed(42)
x_test = torch.linspace(-2, 2, 48).view(12, 4)
with torch.no_grad():
    preds = torch.stack([net(x_test, generator=gen) for _ in range(10)])
mean, std = preds.mean(axis=0), preds.std(axis=0)
print("predictive mean", mean[:3], "std", std[:3])
print("stacked", preds.shape, preds.requires_grad, gen.initial_seed())
manual = 0.5 * (2 * torch.log(torch.tensor(1.0) / F.softplus(net.l1.b_rho)) +
                F.softplus(net.l1.b_rho) ** 2 + net.l1.b_mu ** 2 - 1).sum()
qb = net.l1.posterior()[1]
print("kl by hand", f"{manual.item():.5f}", f"{kl_divergence(qb, Independent(Normal(torch.zeros(4), 1.0), 1)).item():.5f}")
