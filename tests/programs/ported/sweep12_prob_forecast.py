"""Probabilistic forecasting heads on torch.distributions: a tiny MLP emits Normal, StudentT and
mixture-density (MixtureSameFamily of Categorical + Independent(Normal)) parameters trained by
negative log_prob; LogNormal and an AffineTransform'ed TransformedDistribution, kl_divergence,
rsample under manual_seed, quantiles via icdf and sorted samples, torch.quantile, torch.nanmean."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import distributions as D

torch.manual_seed(0)
T, H = 24, 4
t = torch.arange(T + H, dtype=torch.float32)
series = torch.sin(t / 3) + 0.1 * t / T + 0.2 * torch.randn(T + H)
windows = series.unfold(0, 6, 1)
x, y = windows[:-1, :5], windows[:-1, 5]
print("windows", windows.shape, x.shape, y.shape)


class Head(nn.Module):
    def __init__(self, out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, out))

    def forward(self, x):
        return self.net(x)


def normal(p):
    return D.Normal(p[:, 0], F.softplus(p[:, 1]) + 1e-3)


def student(p):
    return D.StudentT(F.softplus(p[:, 2]) + 2.0, p[:, 0], F.softplus(p[:, 1]) + 1e-3)


def mixture(p):
    k = 3
    mix = D.Categorical(logits=p[:, :k])
    comp = D.Independent(D.Normal(p[:, k:2 * k].unsqueeze(-1), F.softplus(p[:, 2 * k:]).unsqueeze(-1) + 1e-3), 1)
    return D.MixtureSameFamily(mix, comp)


for name, make, out in (("normal", normal, 2), ("studentt", student, 3), ("mdn", mixture, 9)):
    torch.manual_seed(1)
    head = Head(out)
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    for step in range(3):
        dist = make(head(x))
        target = y.unsqueeze(-1) if name == "mdn" else y
        loss = -dist.log_prob(target).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(name, f"{loss.item():.5f}", dist.batch_shape, dist.event_shape, loss.grad_fn.name())
    print("  mean", dist.mean[:3].detach().view(-1), "std", dist.stddev[:2].detach().view(-1))

torch.manual_seed(2)
p = Head(2)(x[-4:])
dist = normal(p)
torch.manual_seed(3)
draws = dist.rsample((200,))
print("rsample", draws.shape, draws.grad_fn.name())
qs = torch.tensor([0.1, 0.5, 0.9])
icdf = torch.stack([dist.icdf(q.expand(4)) for q in qs])
emp = draws.sort(0).values[(qs * 199).long()]
print("icdf", icdf.detach())
print("sorted", emp.detach())
print("quantile", torch.quantile(draws.detach(), qs, dim=0))
print("quantile nearest", torch.quantile(draws.detach()[:, 0], qs, interpolation="nearest"))
print("median", torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0, 2.0]), 0.5))
loss = (icdf[2] - icdf[0]).mean()
loss.backward()

lognorm = D.LogNormal(torch.tensor([0.0, 0.5]), torch.tensor([0.5, 0.25]))
affine = D.TransformedDistribution(D.Normal(torch.zeros(2), torch.ones(2)),
                                   [D.AffineTransform(loc=torch.tensor([1.0, -1.0]), scale=2.0)])
v = torch.tensor([1.5, 0.5])
print("lognormal", lognorm.mean, lognorm.variance, lognorm.log_prob(v), lognorm.cdf(v + torch.tensor([0.0, 0.9])))
print("affine", affine.log_prob(v), affine.sample().shape, affine.cdf(v), affine.icdf(torch.tensor([0.5, 0.5])))
print("kl", D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)))
print("kl lognormal", D.kl_divergence(lognorm, D.LogNormal(torch.zeros(2), torch.ones(2))))
print("kl cat", D.kl_divergence(D.Categorical(probs=torch.tensor([0.2, 0.8])), D.Categorical(logits=torch.zeros(2))))
print("entropy", D.StudentT(3.0).entropy(), D.Normal(0.0, 2.0).entropy())
torch.manual_seed(4)
print("samples", D.StudentT(torch.tensor([4.0])).sample((3,)).view(-1), lognorm.rsample().shape)
errs = torch.tensor([[0.5, float("nan"), 1.5], [float("nan"), float("nan"), 2.0]])
print("nanmean", torch.nanmean(errs), torch.nanmean(errs, dim=1), errs.nansum(0))
mix = mixture(Head(9)(x[:2]))
print("mix sample", mix.sample((5,)).shape, mix.log_prob(torch.zeros(2, 1)).shape)
try:
    D.Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
except ValueError as e:
    print("ValueError", str(e).splitlines()[0][:70])
try:
    D.kl_divergence(D.StudentT(3.0), D.Normal(0.0, 1.0))
except NotImplementedError as e:
    print("NotImplementedError", type(e).__name__)
print(repr(lognorm), repr(affine.base_dist))
