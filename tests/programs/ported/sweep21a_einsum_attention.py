"""Attention written with torch.einsum, the way research code does it: multi-head attention
with 'bhid,bhjd->bhij', rotary position embeddings, an ALiBi bias, causal linear attention
(elu + 1 feature map, cumulative key-value sums), a Perceiver-style latent cross-attention,
talking-heads mixing and a bilinear scorer; einsum's sublist form, ellipsis, diagonals and
traces; gradients through all of it and the errors einsum gives for bad equations."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, N, D, H = 2, 6, 16, 4


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Rotary(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, n):
        t = torch.arange(n, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None], emb.sin()[None, None]


def alibi_slopes(heads):
    start = 2 ** (-(2 ** -(math.log2(heads) - 3)))
    return torch.tensor([start * start ** i for i in range(heads)])


class EinsumAttention(nn.Module):
    def __init__(self, dim, heads, causal=True, talking_heads=True):
        super().__init__()
        self.heads, self.scale, self.causal = heads, (dim // heads) ** -0.5, causal
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.to_out = nn.Linear(dim, dim)
        self.rotary = Rotary(dim // heads)
        self.register_buffer("slopes", alibi_slopes(heads))
        self.pre_softmax_talk = nn.Parameter(torch.eye(heads) + 0.01 * torch.randn(heads, heads)) if talking_heads else None

    def forward(self, x, mask=None, return_attn=False):
        b, n, _ = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        cos, sin = self.rotary(n)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        pos = torch.arange(n)
        dots = dots - torch.einsum("h,ij->hij", self.slopes, (pos[:, None] - pos[None, :]).abs().float())
        if self.pre_softmax_talk is not None:
            dots = torch.einsum("bhij,hk->bkij", dots, self.pre_softmax_talk)
        mask_value = -torch.finfo(dots.dtype).max
        if mask is not None:
            dots = dots.masked_fill(~mask[:, None, None, :], mask_value)
        if self.causal:
            causal = torch.ones(n, n, dtype=torch.bool).triu(1)
            dots = dots.masked_fill(causal, mask_value)
        attn = dots.softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        out = torch.einsum("bhnd->bnhd", out).reshape(b, n, -1)
        out = self.to_out(out)
        return (out, attn) if return_attn else out


def linear_attention(q, k, v, eps=1e-6):
    """Causal linear attention: phi(q) . cumsum(phi(k) v^T) / phi(q) . cumsum(phi(k))."""
    q, k = F.elu(q) + 1, F.elu(k) + 1
    kv = torch.einsum("bhnd,bhne->bhnde", k, v).cumsum(dim=2)
    k_cum = k.cumsum(dim=2)
    num = torch.einsum("bhnd,bhnde->bhne", q, kv)
    den = torch.einsum("bhnd,bhnd->bhn", q, k_cum).unsqueeze(-1) + eps
    return num / den


def linear_attention_quadratic(q, k, v, eps=1e-6):
    q, k = F.elu(q) + 1, F.elu(k) + 1
    a = torch.einsum("...id,...jd->...ij", q, k).tril()
    return torch.einsum("...ij,...je->...ie", a, v) / (a.sum(-1, keepdim=True) + eps)


class LatentCrossAttention(nn.Module):
    """Perceiver: a few learned latents attend over the inputs."""

    def __init__(self, dim, latents=3, heads=2):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim))
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * dim, bias=False)

    def forward(self, x, mask=None):
        h = self.heads
        q = self.q(self.latents).view(-1, h, x.shape[-1] // h)
        k, v = self.kv(x).view(x.shape[0], x.shape[1], 2, h, -1).unbind(2)
        sim = torch.einsum("lhd,bnhd->bhln", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            sim = sim.masked_fill(~mask[:, None, None, :], float("-inf"))
        attn = sim.softmax(-1)
        return torch.einsum("bhln,bnhd->blhd", attn, v).flatten(2)


attn_layer = EinsumAttention(D, H)
print(attn_layer)
print([n for n, _ in attn_layer.named_buffers()], list(attn_layer.state_dict().keys()))
print(attn_layer.slopes)
x = torch.randn(B, N, D, requires_grad=True)
pad = torch.tensor([[True] * N, [True] * 4 + [False] * 2])
out, attn = attn_layer(x, mask=pad, return_attn=True)
print(out.shape, attn.shape, out.grad_fn.name(), f"{out.sum().item():.4f}")
print(attn[1, 0, 5], attn.sum(-1)[0, 0].round(decimals=4))
cos, sin = attn_layer.rotary(N)
print(cos.shape, f"{cos[0, 0, 3, 1].item():.5f} {sin[0, 0, 5, 0].item():.5f}")
out.pow(2).mean().backward()
print(f"{x.grad.norm().item():.5f}", f"{attn_layer.pre_softmax_talk.grad.abs().sum().item():.5f}",
      f"{attn_layer.to_qkv.weight.grad.abs().max().item():.5f}")

# the quadratic and the cumulative-sum forms of causal linear attention agree
q, k, v = torch.randn(3, B, H, N, 4, dtype=torch.float64).unbind(0)
la, lq = linear_attention(q, k, v), linear_attention_quadratic(q, k, v)
print(la.shape, la.dtype, torch.allclose(la, lq), f"{(la - lq).abs().max().item() < 1e-12}")
q32 = q.float().requires_grad_()
y = linear_attention(q32, k.float(), v.float())
print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
y.sum().backward()
print(f"{q32.grad.abs().sum().item():.4f}")

perceiver = LatentCrossAttention(D)
lat = perceiver(x.detach(), mask=pad)
print(lat.shape, f"{lat.abs().mean().item():.5f}", lat.grad_fn.name())

# bilinear scoring, sublist format, ellipsis, diagonals, traces
W = torch.randn(D, D)
a_, b_ = torch.randn(5, D), torch.randn(5, D)
s1 = torch.einsum("bi,ij,bj->b", a_, W, b_)
s2 = torch.einsum(a_, [0, 1], W, [1, 2], b_, [0, 2], [0])
print(s1.shape, torch.allclose(s1, s2, atol=1e-5), torch.allclose(s1, F.bilinear(a_, b_, W[None]).squeeze(-1), atol=1e-4))
M = torch.arange(9.0).view(3, 3)
print(torch.einsum("ii", M), torch.einsum("ii->i", M), torch.einsum("ij->ji", M)[0])
batch_m = torch.arange(24.0).view(2, 3, 2, 2)
print(torch.einsum("...ii->...i", batch_m)[1], torch.einsum("...ii", batch_m).shape)
print(torch.einsum("i,i->", torch.ones(3), torch.arange(3.0)), torch.einsum("i,j->ij", torch.arange(2.0), torch.arange(3.0)))
print(torch.einsum("bij,bjk->bik", torch.ones(2, 2, 3), torch.ones(2, 3, 1)).squeeze(-1))
print(torch.einsum("b n d, b n d -> b n", x.detach()[:, :2], x.detach()[:, :2]).shape)
print(torch.einsum("ij,ij->ij", torch.ones(2, 2, dtype=torch.int64), torch.full((2, 2), 3)).dtype)
print(torch.einsum("i,i", torch.tensor([1, 2]), torch.tensor([3, 4])))
print(torch.backends.opt_einsum.is_available(), torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy)

for eq, ops in [("ij,jk->ik", (torch.ones(2, 3), torch.ones(4, 5))),
                ("ij->k", (torch.ones(2, 3),)),
                ("ijk,jk->i", (torch.ones(2, 3),)),
                ("ij,jk", (torch.ones(2, 3), torch.ones(3))),
                ("i->ii", (torch.ones(2),))]:
    try:
        torch.einsum(eq, *ops)
    except RuntimeError as e:
        print(type(e).__name__, e)

# a tiny training loop: the attention block learns to copy the previous token's vector
torch.manual_seed(1)
model = nn.Sequential(EinsumAttention(D, H, causal=True, talking_heads=False), nn.LayerNorm(D), nn.Linear(D, D))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
xs = torch.randn(4, N, D)
target = torch.cat([torch.zeros(4, 1, D), xs[:, :-1]], dim=1)
for step in range(6):
    loss = F.mse_loss(model(xs), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
