"""A small DDPM on 8x8 "images" (blurred blobs) with a UNet-lite: a cosine noise schedule
(torch.cos, clip, cumprod), linear/quadratic schedules from torch.linspace, q_sample through
gather-based extraction, a time-conditioned residual block (GroupNorm, SiLU, FiLM-style
scale/shift from chunk), down/up paths with avg_pool2d / interpolate and skip concatenation,
v-prediction with min-SNR loss weighting, gradient clipping, and a few DDIM sampling steps."""
# tolerance: 1e-4
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 40


def cosine_schedule(T, s=0.008):
    steps = torch.linspace(0, T, T + 1, dtype=torch.float64)
    f = torch.cos((steps / T + s) / (1 + s) * math.pi / 2) ** 2
    abar = f / f[0]
    betas = 1 - abar[1:] / abar[:-1]
    return betas.clip(0, 0.999).float()


lin = torch.linspace(1e-4, 0.02, T)
quad = torch.linspace(1e-4 ** 0.5, 0.02 ** 0.5, T) ** 2
betas = cosine_schedule(T)
print("schedules", lin[-1].item(), round(quad[T // 2].item(), 6), betas.dtype, round(betas[-1].item(), 4))
alphas = 1 - betas
abar = torch.cumprod(alphas, 0)
abar_prev = torch.cat([torch.ones(1), abar[:-1]])
snr = abar / (1 - abar)
print("abar", abar[[0, T // 2, T - 1]], "snr monotone", bool((snr[1:] < snr[:-1]).all()))
print("log snr", torch.log(snr[:4]))
posterior_var = betas * (1 - abar_prev) / (1 - abar)
print("posterior var", posterior_var[:3], posterior_var[0].item() == 0.0)


def extract(a, t, ndim):
    return a.gather(0, t).view(-1, *([1] * (ndim - 1)))


def q_sample(x0, t, noise):
    return extract(abar.sqrt(), t, x0.ndim) * x0 + extract((1 - abar).sqrt(), t, x0.ndim) * noise


def blobs(n, gen):
    yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    c = torch.rand(n, 2, generator=gen) * 5 + 1.5
    d = (yy - c[:, 0, None, None]) ** 2 + (xx - c[:, 1, None, None]) ** 2
    return (torch.exp(-d / 3.0) * 2 - 1).unsqueeze(1)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
    args = t.float()[:, None] * freqs[None, :]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1 = nn.GroupNorm(4, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.film = nn.Linear(tdim, 2 * cout)
        self.norm2 = nn.GroupNorm(4, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.film(temb)[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        h = self.conv2(F.silu(h))
        return h + self.skip(x)


class UNetLite(nn.Module):
    def __init__(self, ch=8, tdim=16):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(1, ch, 3, padding=1)
        self.down = ResBlock(ch, ch, tdim)
        self.mid = ResBlock(ch, 2 * ch, tdim)
        self.up = ResBlock(3 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(4, ch), nn.SiLU(), nn.Conv2d(ch, 1, 3, padding=1))
        nn.init.zeros_(self.out[-1].weight)
        nn.init.zeros_(self.out[-1].bias)

    def forward(self, x, t):
        e = self.temb(timestep_embedding(t, self.tdim))
        h0 = self.down(self.inp(x), e)
        h = self.mid(F.avg_pool2d(h0, 2), e)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return self.out(self.up(torch.cat([h, h0], dim=1), e))


model = UNetLite()
print("params", sum(p.numel() for p in model.parameters()), "zero head", model.out[-1].weight.abs().sum().item())
print([k for k in model.state_dict() if k.startswith("mid.")])
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
gen = torch.Generator().manual_seed(1)
x0 = blobs(16, gen)
print("data", x0.shape, round(x0.mean().item(), 4), x0.min().item() >= -1)

for step in range(8):
    t = torch.randint(0, T, (x0.shape[0],), generator=gen)
    noise = torch.randn(x0.shape, generator=gen)
    xt = q_sample(x0, t, noise)
    v_target = extract(abar.sqrt(), t, 4) * noise - extract((1 - abar).sqrt(), t, 4) * x0
    v_pred = model(xt, t)
    # min-SNR-5 weighting, v-prediction form: min(snr, 5) / (snr + 1)
    w = snr.gather(0, t).clamp(max=5.0) / (snr.gather(0, t) + 1)
    per = F.mse_loss(v_pred, v_target, reduction="none").mean(dim=(1, 2, 3))
    loss = (w * per).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 2 == 0:
        print(f"step {step} loss {loss.item():.5f} gnorm {gnorm.item():.4f} {loss.grad_fn.name()}")

print("ts", t.tolist()[:6], "w", [round(v, 4) for v in w[:4].tolist()])


@torch.no_grad()
def ddim_sample(model, n, steps, gen):
    x = torch.randn(n, 1, 8, 8, generator=gen)
    times = torch.linspace(T - 1, 0, steps).long()
    for i, t in enumerate(times):
        tt = t.repeat(n)
        v = model(x, tt)
        a = abar[t]
        x0_hat = (a.sqrt() * x - (1 - a).sqrt() * v).clamp(-1, 1)
        eps = (1 - a).sqrt() * x + a.sqrt() * v
        a_prev = abar[times[i + 1]] if i + 1 < len(times) else torch.tensor(1.0)
        x = a_prev.sqrt() * x0_hat + (1 - a_prev).sqrt() * eps
    return x, times


model.eval()
samples, times = ddim_sample(model, 4, 5, gen)
print("ddim times", times.tolist(), times.dtype)
print("samples", samples.shape, samples.requires_grad, round(samples.mean().item(), 4),
      round(samples.std().item(), 4), bool(samples.abs().le(1.0 + 1e-6).all()))
