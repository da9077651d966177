# Fitting densities with torch.distributions the way small research scripts do: a
# LowRankMultivariateNormal fitted by maximum likelihood with rsample-based KL estimates, a
# Gaussian mixture (MixtureSameFamily over Independent Normals) trained with Adam, a Dirichlet
# posterior over mixture weights, and a flow-like TransformedDistribution with composed
# transforms; analytic KLs checked against Monte Carlo ones.
import torch
import torch.distributions as D
from torch.distributions import constraints, transforms

torch.manual_seed(0)
data = torch.cat([torch.randn(60, 3) * 0.5 + torch.tensor([2.0, 0.0, -1.0]),
                  torch.randn(40, 3) * 0.3 - 1.0])
print(data.shape, f"{data.mean().item():.5f}")

# 1. low-rank Gaussian by maximum likelihood
loc = torch.zeros(3, requires_grad=True)
factor = (0.1 * torch.randn(3, 2)).requires_grad_()
log_diag = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([loc, factor, log_diag], lr=0.05)
for it in range(25):
    dist = D.LowRankMultivariateNormal(loc, factor, log_diag.exp())
    nll = -dist.log_prob(data).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if it % 8 == 0:
        print(it, f"{nll.item():.5f}", nll.grad_fn.name(), f"{factor.grad.norm().item():.5f}")
print(dist, dist.batch_shape, dist.event_shape)
print(dist.covariance_matrix.detach(), f"{dist.entropy().item():.5f}")
print(dist.variance.detach(), dist.precision_matrix.shape, dist.scale_tril.shape)
full = D.MultivariateNormal(data.mean(0), covariance_matrix=torch.cov(data.T))
print("kl lowrank||full", f"{D.kl_divergence(dist, full).item():.5f}",
      "kl full||lowrank", f"{D.kl_divergence(full, dist).item():.5f}")
s = dist.rsample((4,))
print(s.shape, s.grad_fn.name(), s.requires_grad)

# 2. mixture of diagonal Gaussians
K = 2
logits = torch.zeros(K, requires_grad=True)
means = torch.randn(K, 3).requires_grad_()
log_scales = torch.zeros(K, 3, requires_grad=True)
opt = torch.optim.Adam([logits, means, log_scales], lr=0.1)
for it in range(30):
    mix = D.MixtureSameFamily(D.Categorical(logits=logits),
                              D.Independent(D.Normal(means, log_scales.exp()), 1))
    loss = -mix.log_prob(data).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 10 == 9:
        print(it, f"{loss.item():.5f}", f"{logits.softmax(0).detach()}")
print(mix.mixture_distribution, mix.component_distribution.batch_shape,
      mix.component_distribution.event_shape, mix.event_shape)
print(mix.mean.detach(), mix.variance.detach())
resp = mix.component_distribution.log_prob(data.unsqueeze(1)) + mix.mixture_distribution.logits
resp = resp.softmax(-1)
print("responsibilities", resp[:3].detach(), resp.argmax(1).bincount())
smp = mix.sample((5,))
print(smp.shape, f"{smp.sum().item():.5f}", mix.cdf if hasattr(mix, "cdf") else None)

# 3. Dirichlet posterior over the mixture weights given hard counts
counts = resp.argmax(1).bincount(minlength=K).float()
prior = D.Dirichlet(torch.ones(K))
post = D.Dirichlet(prior.concentration + counts)
print(post, post.mean, f"{post.entropy().item():.5f}", post.support)
w = post.rsample((3,))
print(w.shape, w.sum(-1), f"{D.kl_divergence(post, prior).item():.5f}")
conc = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
d = D.Dirichlet(conc)
lp = d.log_prob(torch.tensor([0.2, 0.3, 0.5]))
lp.backward()
print(f"{lp.item():.5f}", conc.grad, d.variance, d.mode)
beta = D.Beta(torch.tensor(2.0), torch.tensor(5.0))
print(beta.mean, f"{beta.log_prob(torch.tensor(0.3)).item():.5f}", beta.rsample((2,)).shape)

# 4. a transformed distribution: log-normal-ish flow through affine and exp
base = D.Normal(torch.zeros(2), torch.ones(2))
shift = torch.tensor([0.5, -0.5], requires_grad=True)
flow = D.TransformedDistribution(base, [transforms.AffineTransform(shift, 2.0),
                                        transforms.ExpTransform()])
y = flow.rsample((3,))
print(y.shape, y.grad_fn.name(), flow.support, flow.event_shape)
lp = flow.log_prob(torch.tensor([[1.0, 2.0], [0.5, 0.1]]))
lp.sum().backward()
print(lp.detach(), shift.grad)
ln = D.LogNormal(torch.tensor([0.5, -0.5]), 2.0)
print(ln.log_prob(torch.tensor([[1.0, 2.0], [0.5, 0.1]])))
t = transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(-1.0, 2.0)])
x = torch.tensor([-1.0, 0.0, 3.0])
print(t(x), t.inv(t(x)), t.log_abs_det_jacobian(x, t(x)))
bij = D.transform_to(constraints.simplex)
z = bij(torch.tensor([0.1, -0.3]))
print(z, z.sum(), bij.inv(z), constraints.simplex.check(z))

# 5. Monte Carlo KL agrees with the analytic one
p = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.5]))
q = D.Normal(torch.tensor([0.3, 0.8]), torch.tensor([1.2, 0.7]))
xs = p.sample((20000,))
mc = (p.log_prob(xs) - q.log_prob(xs)).mean(0)
print(D.kl_divergence(p, q), f"{(mc - D.kl_divergence(p, q)).abs().max().item() < 0.05}")
