"""A mixture density network for a multimodal 1-D regression (MixtureSameFamily of Normals,
trained by negative log-likelihood), followed by a tanh-squashed Gaussian policy head as in
SAC (TransformedDistribution with AffineTransform and TanhTransform, rsample + log_prob) and a
small learned affine flow on 2-D data with Independent base; prints shapes, reprs and the
validation errors a program would catch."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import distributions as D

torch.manual_seed(0)
# x -> y has two branches: y = +-sqrt(x) + noise
x = torch.rand(64, 1) * 2
sign = torch.where(torch.rand(64, 1) < 0.5, -1.0, 1.0)
y = sign * x.sqrt() + 0.05 * torch.randn(64, 1)


class MDN(nn.Module):
    def __init__(self, k=3, hidden=24):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh())
        self.pi = nn.Linear(hidden, k)
        self.mu = nn.Linear(hidden, k)
        self.log_sigma = nn.Linear(hidden, k)

    def forward(self, x):
        h = self.body(x)
        mix = D.Categorical(logits=self.pi(h))
        comp = D.Normal(self.mu(h), F.softplus(self.log_sigma(h)) + 1e-3)
        return D.MixtureSameFamily(mix, comp)


mdn = MDN()
opt = torch.optim.Adam(mdn.parameters(), lr=2e-2)
for step in range(25):
    dist = mdn(x)
    nll = -dist.log_prob(y.squeeze(1)).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 6 == 0 or step == 24:
        print(f"mdn step {step:2d} nll {nll.item():.4f}")

with torch.no_grad():
    dist = mdn(torch.tensor([[0.25], [1.0], [1.8]]))
    print(dist.batch_shape, dist.event_shape, dist.mixture_distribution.probs.shape)
    print("mean", dist.mean.round(decimals=3).tolist())
    print("var", [f"{v:.4f}" for v in dist.variance.tolist()])
    probs = dist.mixture_distribution.probs
    print("weights", [[f"{p:.3f}" for p in row] for row in probs.tolist()])
    s = dist.sample((5,))
    print("sample", s.shape, s.dtype)
    print("cdf", [f"{v:.4f}" for v in dist.cdf(torch.zeros(3)).tolist()])
    grid = torch.linspace(-2, 2, 5)
    lp = dist.log_prob(grid[:, None])
    print("log_prob grid", lp.shape, f"{lp.exp().sum().item():.4f}")

# SAC-style squashed Gaussian: action = tanh(mu + std * eps) scaled into [-2, 2]
policy = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))
state = torch.randn(6, 3)
mu, log_std = policy(state).chunk(2, dim=-1)
log_std = log_std.clamp(-5, 2)
base = D.Independent(D.Normal(mu, log_std.exp()), 1)
squashed = D.TransformedDistribution(base, [D.TanhTransform(cache_size=1),
                                            D.AffineTransform(loc=0.0, scale=2.0)])
action = squashed.rsample()
logp = squashed.log_prob(action)
print("action", action.shape, logp.shape, action.grad_fn.name(), logp.grad_fn is not None)
print("in bounds", bool((action.abs() <= 2).all()), squashed.event_shape, squashed.batch_shape)
# the hand-written SAC correction gives the same log-prob
pre = torch.atanh(action / 2)
manual = base.log_prob(pre) - (2 * (math.log(2) - pre - F.softplus(-2 * pre))).sum(-1) \
    - math.log(2) * 2
print("manual matches", torch.allclose(manual, logp, atol=1e-4))
alpha = torch.tensor(0.2, requires_grad=True)
actor_loss = (alpha.detach() * logp - action.pow(2).sum(-1)).mean()
actor_loss.backward()
print(f"actor loss {actor_loss.item():.4f}", policy[0].weight.grad.shape,
      f"{policy[2].weight.grad.norm().item():.4f}")
t = D.TanhTransform()
print(t, t.domain, t.codomain, t.bijective, t.sign)
aff = D.AffineTransform(torch.tensor([1.0, -1.0]), torch.tensor([0.5, 3.0]), event_dim=1)
z = torch.tensor([[0.2, 0.4]])
print(aff(z), aff.inv(aff(z)), aff.log_abs_det_jacobian(z, aff(z)))

# a learned elementwise affine flow fitted to correlated 2-D data
data = torch.randn(128, 2) @ torch.tensor([[1.0, 0.0], [0.8, 0.4]]) + torch.tensor([2.0, -1.0])
loc = nn.Parameter(torch.zeros(2))
log_scale = nn.Parameter(torch.zeros(2))
opt = torch.optim.SGD([loc, log_scale], lr=0.1, momentum=0.5)
for step in range(12):
    flow = D.TransformedDistribution(D.Independent(D.Normal(torch.zeros(2), torch.ones(2)), 1),
                                     [D.AffineTransform(loc, log_scale.exp(), event_dim=1)])
    loss = -flow.log_prob(data).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 3:
        print(f"flow step {step} nll {loss.item():.4f} loc {[round(v, 3) for v in loc.tolist()]}"
              f" scale {[round(v, 3) for v in log_scale.exp().tolist()]}")
print(flow.rsample((4,)).shape, flow.base_dist, flow.transforms[0].event_dim)
ent = D.Normal(torch.zeros(2), log_scale.exp()).entropy()
print("entropy", ent.grad_fn.name(), [f"{v:.4f}" for v in ent.tolist()])
print(D.kl_divergence(D.Normal(loc, log_scale.exp()), D.Normal(0.0, 1.0)).shape)

# a 2-D mixture whose components are Independent diagonal Gaussians
means = torch.tensor([[0.0, 0.0], [3.0, 1.0], [-2.0, 2.0]])
gmm = D.MixtureSameFamily(D.Categorical(torch.tensor([0.5, 0.3, 0.2])),
                          D.Independent(D.Normal(means, torch.full((3, 2), 0.7)), 1))
pts = gmm.sample((6,))
print(gmm.batch_shape, gmm.event_shape, pts.shape, gmm.log_prob(pts).shape)
print("gmm mean", gmm.mean.tolist(), [f"{v:.4f}" for v in gmm.variance.tolist()])
post = gmm.component_distribution.log_prob(pts[:, None, :]) + gmm.mixture_distribution.logits
print("responsibilities", post.softmax(-1).argmax(-1).tolist())
wide = gmm.expand((4,))
print(wide.batch_shape, wide.sample().shape, wide.log_prob(torch.zeros(4, 2)).shape)
cat = D.transforms.CatTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)], dim=0,
                                lengths=[1, 2])
u = torch.tensor([0.0, 1.0, 2.0])
print(cat(u), cat.inv(cat(u)), cat.log_abs_det_jacobian(u, cat(u)))
stack = D.transforms.StackTransform([D.SigmoidTransform(), D.TanhTransform()], dim=1)
v = torch.tensor([[0.5, -0.5], [1.0, 2.0]])
print(stack(v), stack.log_abs_det_jacobian(v, stack(v)))
print(D.Normal(torch.tensor([0.0, 1.0]), 2.0).icdf(torch.tensor([0.1, 0.975])))

for bad in (lambda: D.Normal(torch.zeros(2), torch.tensor([1.0, -1.0])),
            lambda: D.Categorical(probs=torch.tensor([0.5, -0.1, 0.6])),
            lambda: D.Normal(0.0, 1.0).log_prob(torch.tensor([float("nan")])),
            lambda: D.MixtureSameFamily(D.Categorical(logits=torch.zeros(3)),
                                        D.Normal(torch.zeros(4), torch.ones(4)))):
    try:
        bad()
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e).replace("\n", " | "))
