"""A llama-style tiny LM: RMSNorm, rotary embeddings through torch.polar / view_as_complex /
view_as_real, a SwiGLU MLP, causal scaled_dot_product_attention, tied input/output weights,
and generation with a KV cache (torch.cat along the sequence) plus temperature and top-p
sampling (sort, cumsum, masked_fill, multinomial with a seeded Generator)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, D, H, L = 11, 16, 2, 2


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_freqs(head_dim, n, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.outer(torch.arange(n).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)


def apply_rope(x, freqs):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs[None, None]).flatten(3)
    return out.type_as(x)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm, self.mlp_norm = RMSNorm(D), RMSNorm(D)
        self.wqkv = nn.Linear(D, 3 * D, bias=False)
        self.wo = nn.Linear(D, D, bias=False)
        self.w1, self.w3 = nn.Linear(D, 24, bias=False), nn.Linear(D, 24, bias=False)
        self.w2 = nn.Linear(24, D, bias=False)

    def forward(self, x, freqs, cache=None):
        b, t, _ = x.shape
        q, k, v = self.wqkv(self.attn_norm(x)).split(D, dim=-1)
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        q, k = apply_rope(q, freqs), apply_rope(k, freqs)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        x = x + self.wo(att.transpose(1, 2).reshape(b, t, D))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h)), (k, v)


class TinyLlama(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, V, bias=False)
        self.head.weight = self.tok.weight
        self.register_buffer("freqs", rope_freqs(D // H, 32), persistent=False)

    def forward(self, idx, caches=None, pos=0):
        x = self.tok(idx)
        freqs = self.freqs[pos: pos + idx.shape[1]]
        new = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, freqs, None if caches is None else caches[i])
            new.append(kv)
        return self.head(self.norm(x)), new


model = TinyLlama()
print("params", sum(p.numel() for p in model.parameters()), "tied", model.head.weight is model.tok.weight)
print("freqs", model.freqs.dtype, model.freqs.shape, list(model.state_dict())[:3])
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
data = torch.randint(0, V, (4, 9))
for step in range(3):
    logits, _ = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, V), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(step, f"{loss.item():.5f}", logits.grad_fn.name())
print("tok grad", model.tok.weight.grad.shape, model.blocks[0].attn_norm.weight.grad.norm() > 0)


def top_p_sample(logits, temperature, p, gen):
    probs = F.softmax(logits / temperature, dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sorted_p, dim=-1)
    sorted_p = sorted_p.masked_fill(cum - sorted_p > p, 0.0)
    sorted_p = sorted_p / sorted_p.sum(-1, keepdim=True)
    pick = torch.multinomial(sorted_p, 1, generator=gen)
    return torch.gather(order, -1, pick)


gen = torch.Generator().manual_seed(123)
model.eval()
with torch.no_grad():
    prompt = data[:2, :3]
    logits, caches = model(prompt)
    out = prompt
    for i in range(4):
        nxt = top_p_sample(logits[:, -1], 0.8, 0.9, gen)
        out = torch.cat([out, nxt], dim=1)
        logits, caches = model(nxt, caches, pos=out.shape[1] - 1)
    print("generated", out.tolist(), "cache", caches[0][0].shape)
    full, _ = model(out)
    print("cache agrees", torch.allclose(full[:, -1], logits[:, -1], atol=1e-5))
