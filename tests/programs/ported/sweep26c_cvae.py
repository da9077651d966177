"""A conditional VAE on tiny synthetic 6x6 glyphs (three classes: bar, cross, frame): the label
enters encoder and decoder as F.one_hot, the decoder reshapes with nn.Unflatten before a
transposed conv, the posterior is an Independent(Normal) and the KL term comes from
torch.distributions.kl_divergence against the standard-normal prior; gradients are clipped by
value. Afterwards: class-conditional sampling, a per-class ELBO table, and the KL registry's
error for a pair it does not know."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, kl_divergence

torch.manual_seed(0)
C, Z, S = 3, 4, 6


def glyphs(n, g):
    y = torch.randint(0, C, (n,), generator=g)
    x = torch.zeros(n, 1, S, S)
    x[y == 0, :, 2:4, :] = 1.0
    x[y == 1, :, 2:4, :] = 1.0
    x[y == 1, :, :, 2:4] = 1.0
    x[y == 2, :, 0, :] = 1.0
    x[y == 2, :, -1, :] = 1.0
    x[y == 2, :, :, 0] = 1.0
    x[y == 2, :, :, -1] = 1.0
    flip = torch.rand(x.shape, generator=g) < 0.05
    return torch.where(flip, 1.0 - x, x), y


class CVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(S * S + C, 32), nn.ELU())
        self.mu = nn.Linear(32, Z)
        self.logvar = nn.Linear(32, Z)
        self.dec = nn.Sequential(
            nn.Linear(Z + C, 8 * 3 * 3), nn.ELU(),
            nn.Unflatten(1, (8, 3, 3)),
            nn.ConvTranspose2d(8, 1, kernel_size=4, stride=2, padding=1),
        )

    def posterior(self, x, y1h):
        h = self.enc[2](self.enc[1](torch.cat([self.enc[0](x), y1h], dim=1)))
        return Independent(Normal(self.mu(h), torch.exp(0.5 * self.logvar(h))), 1)

    def decode(self, z, y1h):
        return self.dec(torch.cat([z, y1h], dim=1))

    def forward(self, x, y):
        y1h = F.one_hot(y, num_classes=C).float()
        q = self.posterior(x, y1h)
        z = q.rsample()
        return self.decode(z, y1h), q


g = torch.Generator().manual_seed(3)
x_train, y_train = glyphs(64, g)
print("data:", x_train.shape, x_train.dtype, torch.bincount(y_train, minlength=C).tolist())
model = CVAE()
print(model.dec)
prior = Independent(Normal(torch.zeros(Z), torch.ones(Z)), 1)
print("prior:", prior, prior.batch_shape, prior.event_shape)

opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(8):
    perm = torch.randperm(64)
    for i in range(0, 64, 32):
        idx = perm[i:i + 32]
        x, y = x_train[idx], y_train[idx]
        logits, q = model(x, y)
        rec = F.binary_cross_entropy_with_logits(logits, x, reduction="sum") / x.size(0)
        kl = kl_divergence(q, prior).mean()
        loss = rec + kl
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        opt.step()
    if epoch % 2 == 1:
        print(f"epoch {epoch} rec {rec.item():.4f} kl {kl.item():.4f} loss {loss.item():.4f}")

print("q:", q.batch_shape, q.event_shape, type(q.base_dist).__name__)
print("kl grad_fn:", kl.grad_fn.name(), "rsample grad_fn:", q.rsample().grad_fn.name())
gmax = max(p.grad.abs().max().item() for p in model.parameters())
print("max |grad| after clipping:", gmax <= 0.5)

# the Independent KL is the per-dimension Normal KL summed over the event dim
kl_dims = kl_divergence(q.base_dist, prior.base_dist)
print("per-dim kl:", kl_dims.shape, torch.allclose(kl_dims.sum(-1), kl_divergence(q, prior)))

model.eval()
with torch.no_grad():
    labels = torch.arange(C).repeat_interleave(2)
    z = prior.sample((labels.numel(),))
    imgs = torch.sigmoid(model.decode(z, F.one_hot(labels, C).float()))
    print("samples:", imgs.shape, imgs.dtype)
    print((imgs[::2, 0] > 0.5).int())
    x_val, y_val = glyphs(12, g)
    for c in range(C):
        sel = y_val == c
        logits, q = model(x_val[sel], y_val[sel])
        rec = F.binary_cross_entropy_with_logits(logits, x_val[sel], reduction="none")
        elbo = -(rec.sum(dim=(1, 2, 3)) + kl_divergence(q, prior))
        print(f"class {c}: n={int(sel.sum())} elbo {elbo.mean().item():.3f}")
    # does the decoder honour the label? decode one latent under every class
    z0 = q.mean[:1].expand(C, Z)
    out = torch.sigmoid(model.decode(z0, torch.eye(C)))
    print("label effect:", (out[0] - out[1]).abs().mean().item() > 0.05, out.shape)

try:
    kl_divergence(q, Normal(torch.zeros(Z), torch.ones(Z)))
except NotImplementedError as e:
    print("NotImplementedError:", e)
try:
    F.one_hot(torch.tensor([0, 3]), num_classes=3)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    Independent(Normal(torch.zeros(Z), torch.ones(Z)), 2)
except ValueError as e:
    print("ValueError:", e)


# a project-local rule for the missing pair: treat the Normal's batch dim as the event
@torch.distributions.kl.register_kl(Independent, Normal)
def _kl_independent_normal(p, q):
    return kl_divergence(p, Independent(q, 1))


print("registered:", kl_divergence(q, Normal(torch.zeros(Z), torch.ones(Z))).shape)
print("entropy:", q.entropy().shape, round(q.entropy().mean().item(), 4),
      "log_prob:", round(q.log_prob(q.mean).mean().item(), 4))
try:
    Normal(torch.zeros(2), torch.tensor([1.0, -1.0]))
except ValueError as e:
    print("ValueError:", e)
