"""VAE-style training: Normal posterior with rsample, analytic KL to a standard normal prior,
Bernoulli likelihood; plus a tanh-squashed Gaussian policy (SAC-style) log-prob."""
import torch
import torch.nn as nn
import torch.distributions as D
from torch.distributions import Normal, Independent, kl_divergence

torch.manual_seed(0)
x = (torch.rand(32, 8) > 0.5).float()
enc = nn.Linear(8, 4)
dec = nn.Linear(2, 8)
opt = torch.optim.SGD(list(enc.parameters()) + list(dec.parameters()), lr=0.05)
prior = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
for step in range(30):
    h = enc(x)
    mu, log_std = h[:, :2], h[:, 2:].clamp(-4, 2)
    q = Independent(Normal(mu, log_std.exp()), 1)
    z = q.rsample()
    lik = Independent(D.Bernoulli(logits=dec(z)), 1)
    kl = kl_divergence(q, prior)
    loss = (kl - lik.log_prob(x)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, f"{loss.item():.5f}", f"{kl.mean().item():.5f}", z.grad_fn.__class__.__name__)
print(q.batch_shape, q.event_shape, q.mean.shape, q.stddev.shape, kl.shape)
print(q.log_prob(z).shape, prior.entropy(), prior.sample((3,)).shape)

base = Normal(torch.tensor([0.0, 0.5]), torch.tensor([1.0, 0.3]))
squashed = D.TransformedDistribution(base, [D.TanhTransform(), D.AffineTransform(0.0, 2.0)])
a = squashed.rsample((4,))
print(a, squashed.log_prob(a), squashed.batch_shape, squashed.support)
ln = D.LogNormal(torch.tensor([0.0]), torch.tensor([0.5]))
print(ln.sample((3,)), ln.mean, ln.variance, ln.entropy(), ln.cdf(torch.tensor([1.5])))
mvn = D.MultivariateNormal(torch.zeros(3), scale_tril=torch.tensor([[1.0, 0, 0], [0.5, 1, 0], [0.2, 0.3, 1]]))
s = mvn.rsample((2,))
print(s, mvn.log_prob(s), mvn.entropy(), mvn.covariance_matrix)
print(kl_divergence(mvn, D.MultivariateNormal(torch.ones(3), torch.eye(3) * 2)))
print(Normal(0.0, 1.0).cdf(torch.tensor([-1.0, 0.0, 1.0])), Normal(0.0, 1.0).icdf(torch.tensor([0.1, 0.9])))
print(D.Uniform(0.0, 2.0).sample((3,)), D.Exponential(torch.tensor([2.0])).sample((2,)), D.Laplace(0.0, 1.0).sample((2,)))
print(D.Gamma(2.0, 1.0).log_prob(torch.tensor(1.5)), D.Beta(2.0, 3.0).entropy(), D.Dirichlet(torch.ones(3)).log_prob(torch.tensor([0.2, 0.3, 0.5])))
try:
    Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])
try:
    Normal(0.0, 1.0).log_prob(torch.tensor([[1.0, 2.0]]).expand(2, 2).sum())
    D.Exponential(torch.tensor([1.0])).log_prob(torch.tensor([-2.0]))
except ValueError as e:
    print("ValueError:", str(e).replace("\n", " | "))
