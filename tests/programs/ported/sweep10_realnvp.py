"""RealNVP normalizing flow on 2-D moons-like data: affine coupling layers with masks, log-det
accumulation, a MultivariateNormal base, sampling, log_prob and Adam."""
import math

import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal, Normal, Independent

torch.manual_seed(0)


def two_moons(n):
    t = torch.rand(n) * math.pi
    upper = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
    lower = torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], dim=1)
    pick = (torch.rand(n) < 0.5).unsqueeze(1)
    return torch.where(pick, upper, lower) + 0.05 * torch.randn(n, 2)


class Coupling(nn.Module):
    def __init__(self, mask, hidden=32):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, 4))
        self.scale = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        xm = x * self.mask
        s, t = self.net(xm).chunk(2, dim=1)
        s = torch.tanh(s) * self.scale.exp()
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        y = xm + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.sum(dim=1)

    def inverse(self, y):
        ym = y * self.mask
        s, t = self.net(ym).chunk(2, dim=1)
        s = torch.tanh(s) * self.scale.exp() * (1 - self.mask)
        t = t * (1 - self.mask)
        return ym + (1 - self.mask) * ((y - t) * torch.exp(-s))


class RealNVP(nn.Module):
    def __init__(self, n_layers=4):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                 for i in range(n_layers)]
        self.layers = nn.ModuleList(Coupling(m) for m in masks)
        self.base = MultivariateNormal(torch.zeros(2), torch.eye(2))

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det

    def log_prob(self, x):
        z, log_det = self(x)
        return self.base.log_prob(z) + log_det

    @torch.no_grad()
    def sample(self, n):
        z = self.base.sample((n,))
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


data = two_moons(256)
print("data", data.shape, data.mean(0), data.std(0))
flow = RealNVP()
print(flow.layers[0])
print("buffers", [name for name, _ in flow.named_buffers()])
print("params", sum(p.numel() for p in flow.parameters()))
base = flow.base
print("base", base, base.event_shape, base.batch_shape)
print("base log_prob", base.log_prob(torch.tensor([[0.0, 0.0], [1.0, -1.0]])))
print("entropy", base.entropy())

opt = torch.optim.Adam(flow.parameters(), lr=3e-3)
for step in range(30):
    idx = torch.randint(0, data.shape[0], (64,))
    loss = -flow.log_prob(data[idx]).mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(flow.parameters(), 5.0)
    opt.step()
    if step % 5 == 0:
        print(f"step {step} nll {loss.item():.5f}")
print("loss grad_fn", loss.grad_fn.name(), loss.grad_fn.next_functions[0][0].name())

x = data[:5]
z, ld = flow(x)
for layer in reversed(flow.layers):
    z = layer.inverse(z)
print("roundtrip", torch.allclose(z, x, atol=1e-5), (z - x).abs().max().item() < 1e-5)
print("log_det", ld.shape, ld.grad_fn.name())
samples = flow.sample(500)
print("samples", samples.shape, samples.requires_grad, samples.mean(0))
print("sample nll", -flow.log_prob(samples).mean().item())

# the same base as a diagonal Normal made Independent
diag = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
print("independent", diag.event_shape, diag.batch_shape)
print("match", torch.allclose(diag.log_prob(samples), base.log_prob(samples), atol=1e-5))
cov = torch.tensor([[1.0, 0.6], [0.6, 2.0]])
mvn = MultivariateNormal(torch.tensor([0.5, -0.5]), covariance_matrix=cov)
print("scale_tril", mvn.scale_tril)
print("precision", mvn.precision_matrix)
print("mvn lp", mvn.log_prob(torch.tensor([0.0, 0.0])).item(), mvn.rsample((3,)).shape)
print("variance", mvn.variance, mvn.mean, mvn.stddev)
batched = MultivariateNormal(torch.zeros(3, 2), scale_tril=torch.linalg.cholesky(cov))
print("batched", batched.batch_shape, batched.log_prob(torch.zeros(2)))
try:
    MultivariateNormal(torch.zeros(2), covariance_matrix=torch.tensor([[1.0, 2.0], [2.0, 1.0]]))
except ValueError as e:
    print("ValueError", str(e).split(" found")[0])
try:
    MultivariateNormal(torch.zeros(2))
except ValueError as e:
    print("ValueError", e)
