"""A tiny DDPM on 2-D points: linear beta schedule, q_sample with gathered alphas_cumprod,
sinusoidal timestep embeddings, an MLP noise predictor trained with AdamW + LambdaLR warmup and
an EMA copy (copy.deepcopy, torch.lerp), a checkpoint with model/EMA/optimizer/scheduler/RNG
state saved mid-run, resumed into fresh objects, then ancestral sampling under
torch.inference_mode with a seeded generator."""
import copy
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 50
betas = torch.linspace(1e-4, 0.05, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
posterior_var = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
print(alphas_cumprod[[0, 10, 49]], posterior_var[:3])


def extract(a, t, shape):
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(shape) - 1)))


def q_sample(x0, t, noise):
    return extract(alphas_cumprod.sqrt(), t, x0.shape) * x0 + \
        extract((1 - alphas_cumprod).sqrt(), t, x0.shape) * noise


class SinusoidalEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / (half - 1))
        args = t[:, None].float() * freqs[None]
        return torch.cat([args.sin(), args.cos()], dim=-1)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.temb = nn.Sequential(SinusoidalEmb(16), nn.Linear(16, 32), nn.SiLU())
        self.inp = nn.Linear(2, 32)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(32), nn.Linear(32, 32), nn.GELU())
                                     for _ in range(2)])
        self.out = nn.Linear(32, 2)

    def forward(self, x, t):
        h = self.inp(x) + self.temb(t)
        for blk in self.blocks:
            h = h + blk(h)
        return self.out(h)


def data(n):
    angle = torch.rand(n) * 2 * math.pi
    return torch.stack([angle.cos(), angle.sin()], 1) + 0.05 * torch.randn(n, 2)


model = Denoiser()
ema = copy.deepcopy(model).requires_grad_(False)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))


def train(steps, start):
    for step in range(start, start + steps):
        x0 = data(64)
        t = torch.randint(0, T, (64,))
        noise = torch.randn_like(x0)
        loss = F.mse_loss(model(q_sample(x0, t, noise), t), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.lerp_(pm, 0.1)
        if step % 10 == 9:
            print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.5f}")


train(20, 0)
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "ema": ema.state_dict(), "opt": opt.state_dict(),
            "sched": sched.state_dict(), "rng": torch.get_rng_state(), "step": 20}, buf)
print("saved", sorted(opt.state_dict()["state"][0].keys()), sched.state_dict()["last_epoch"])
train(10, 20)
after_direct = [p.detach().clone() for p in model.parameters()]

buf.seek(0)
ckpt = torch.load(buf, weights_only=False)
model = Denoiser()
ema = Denoiser().requires_grad_(False)
print(model.load_state_dict(ckpt["model"]), ema.load_state_dict(ckpt["ema"]))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
opt.load_state_dict(ckpt["opt"])
sched.load_state_dict(ckpt["sched"])
torch.set_rng_state(ckpt["rng"])
print(opt.state_dict()["state"][0]["step"], sched.last_epoch, sched.get_last_lr())
train(10, ckpt["step"])
print("resume identical", all(torch.equal(a, b) for a, b in zip(after_direct, model.parameters())))


@torch.inference_mode()
def sample(net, n, g):
    x = torch.randn(n, 2, generator=g)
    for i in reversed(range(T)):
        t = torch.full((n,), i, dtype=torch.long)
        eps = net(x, t)
        coef = betas[i] / (1 - alphas_cumprod[i]).sqrt()
        mean = (x - coef * eps) / alphas[i].sqrt()
        if i > 0:
            x = mean + posterior_var[i].sqrt() * torch.randn(n, 2, generator=g)
        else:
            x = mean
    return x


g = torch.Generator().manual_seed(7)
xs = sample(ema, 256, g)
r = xs.norm(dim=1)
print(xs.requires_grad, xs.is_inference(), f"radius mean {r.mean().item():.3f} std {r.std().item():.3f}")
print(torch.histc(r, bins=5, min=0, max=2.5))
