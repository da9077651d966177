"""NeRF-style volume rendering on a tiny synthetic scene: positional encoding, an MLP with a skip
concat, stratified samples along rays, alpha compositing with an exclusive cumprod, hierarchical
(importance) sampling by inverting a CDF with searchsorted(right=True) and gather, Adam, PSNR."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def posenc(x, n_freqs):
    freqs = 2.0 ** torch.arange(n_freqs, dtype=x.dtype)
    xb = x[..., None, :] * freqs[:, None] * math.pi
    enc = torch.cat([torch.sin(xb), torch.cos(xb)], dim=-1).flatten(-2)
    return torch.cat([x, enc], dim=-1)


class NeRF(nn.Module):
    def __init__(self, n_freqs=4, width=32):
        super().__init__()
        d_in = 3 + 3 * 2 * n_freqs
        self.n_freqs = n_freqs
        self.block1 = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.block2 = nn.Sequential(nn.Linear(width + d_in, width), nn.ReLU())
        self.sigma = nn.Linear(width, 1)
        self.rgb = nn.Sequential(nn.Linear(width, width // 2), nn.ReLU(), nn.Linear(width // 2, 3))

    def forward(self, pts):
        e = posenc(pts, self.n_freqs)
        h = self.block1(e)
        h = self.block2(torch.cat([h, e], dim=-1))
        return F.softplus(self.sigma(h)).squeeze(-1), torch.sigmoid(self.rgb(h))


def stratified(near, far, n_rays, n_samples, perturb=True):
    t = torch.linspace(near, far, n_samples + 1)
    lower, upper = t[:-1], t[1:]
    u = torch.rand(n_rays, n_samples) if perturb else torch.full((n_rays, n_samples), 0.5)
    return lower + (upper - lower) * u


def render(model, origins, dirs, t):
    pts = origins[:, None, :] + dirs[:, None, :] * t[..., None]
    sigma, rgb = model(pts)
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], dim=-1)
    alpha = 1.0 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], dim=-1), dim=-1)[:, :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(dim=1), weights, (weights * t).sum(dim=1)


def sample_pdf(bins, weights, n, deterministic=False):
    pdf = (weights + 1e-5) / (weights + 1e-5).sum(dim=-1, keepdim=True)
    cdf = torch.cumsum(pdf, dim=-1)
    cdf = torch.cat([torch.zeros_like(cdf[:, :1]), cdf], dim=-1)
    u = torch.linspace(0.0, 1.0, n).expand(cdf.shape[0], n).contiguous() if deterministic \
        else torch.rand(cdf.shape[0], n)
    idx = torch.searchsorted(cdf, u, right=True)
    below = (idx - 1).clamp(min=0)
    above = idx.clamp(max=cdf.shape[-1] - 1)
    g = torch.stack([below, above], dim=-1)
    cdf_g = torch.gather(cdf[:, None, :].expand(-1, n, -1), 2, g)
    bins_g = torch.gather(bins[:, None, :].expand(-1, n, -1), 2, g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    frac = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + frac * (bins_g[..., 1] - bins_g[..., 0]), idx


def scene_color(origins, dirs):
    # ground truth: a colour that depends on the ray direction only
    return torch.stack([dirs[:, 0].abs(), dirs[:, 1].abs(), (dirs[:, 2] + 1) / 2], dim=-1)


n_rays, n_coarse, n_fine = 64, 16, 8
origins = torch.zeros(n_rays, 3) + torch.tensor([0.0, 0.0, -2.0])
dirs = F.normalize(torch.randn(n_rays, 3) * torch.tensor([0.3, 0.3, 1.0]) + torch.tensor([0.0, 0.0, 1.0]), dim=-1)
target = scene_color(origins, dirs)
print("posenc", posenc(torch.zeros(2, 3), 4).shape, posenc(torch.ones(1, 3), 2)[0, :6])

coarse, fine = NeRF(), NeRF()
opt = torch.optim.Adam(list(coarse.parameters()) + list(fine.parameters()), lr=5e-3)
print("params", sum(p.numel() for p in coarse.parameters()))
for step in range(4):
    t = stratified(1.0, 3.0, n_rays, n_coarse)
    rgb_c, w, depth = render(coarse, origins, dirs, t)
    mids = 0.5 * (t[:, 1:] + t[:, :-1])
    t_f, _ = sample_pdf(mids, w[:, 1:-1].detach(), n_fine)
    t_all, _ = torch.sort(torch.cat([t, t_f], dim=-1), dim=-1)
    rgb_f, w_f, _ = render(fine, origins, dirs, t_all)
    loss = F.mse_loss(rgb_c, target) + F.mse_loss(rgb_f, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    psnr = -10.0 * torch.log10(F.mse_loss(rgb_f, target))
    print(f"step {step} loss {loss.item():.6f} psnr {psnr.item():.4f} depth {depth.mean().item():.4f}")

print("weights", w.shape, w.grad_fn.name(), f"sum<=1 {bool((w.sum(-1) <= 1 + 1e-5).all())}")
print("t_f", t_f.shape, t_f.requires_grad, bool((t_f >= 1.0).all() and (t_f <= 3.0).all()))
bins = torch.linspace(0, 1, 6).expand(2, 6)
wts = torch.tensor([[0., 0., 1., 0.], [1., 1., 1., 1.]])
samples, idx = sample_pdf(bins[:, :5], wts, 5, deterministic=True)
print("deterministic pdf samples", samples)
print("searchsorted idx", idx)
cdf = torch.tensor([0.0, 0.25, 0.5, 0.5, 1.0])
q = torch.tensor([0.0, 0.25, 0.5, 0.7, 1.0])
print("right", torch.searchsorted(cdf, q, right=True), "left", torch.searchsorted(cdf, q),
      "side", torch.searchsorted(cdf, q, side="right"))
print("out_int32", torch.searchsorted(cdf, q, out_int32=True).dtype, torch.bucketize(q, cdf, right=True))
with torch.no_grad():
    t = stratified(1.0, 3.0, 4, n_coarse, perturb=False)
    rgb, w, depth = render(coarse, origins[:4], dirs[:4], t)
print("eval rgb", rgb)
print("eval depth", depth)
x = torch.tensor([0.5, 0.0, 2.0, 3.0], requires_grad=True)
torch.cumprod(x, 0).sum().backward()
print("cumprod grad with zero", x.grad)
