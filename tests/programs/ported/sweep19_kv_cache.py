# A tiny char-level decoder-only transformer (nanoGPT style) trained for a few steps, then
# sampled greedily twice: once recomputing the whole prefix, once with a key/value cache.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "hello world, hello torch. "
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
V, D, H, T = len(chars), 16, 2, 8
print("vocab", V, data.shape, data.dtype)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q, k, v = (t.view(B, L, H, D // H).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        S = k.size(2)
        # query i sits at absolute position S - L + i and may see keys up to that position
        mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).contiguous().view(B, L, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = Attention()
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GLU(), nn.Linear(2 * D, D))

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln1(x), cache)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.pos = nn.Embedding(T * 2, D)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, V, bias=False)
        self.head.weight = self.tok.weight  # weight tying
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx, caches=None, start=0):
        pos = torch.arange(start, start + idx.size(1))
        x = self.tok(idx) + self.pos(pos)
        for i, b in enumerate(self.blocks):
            x = b(x, None if caches is None else caches[i])
        return self.head(self.ln(x))


model = GPT()
n_params = sum(p.numel() for p in model.parameters())
print("params", n_params, len(list(model.parameters())), model.head.weight is model.tok.weight)
print(model.blocks[0].mlp)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0}], lr=1e-2, betas=(0.9, 0.95))
print("groups", [len(g["params"]) for g in opt.param_groups])
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: min(1.0, (s + 1) / 3) * 0.5 * (1 + math.cos(math.pi * s / 9)))

g = torch.Generator().manual_seed(1)
for step in range(9):
    ix = torch.randint(len(data) - T - 1, (4,), generator=g)
    xb = torch.stack([data[i:i + T] for i in ix])
    yb = torch.stack([data[i + 1:i + T + 1] for i in ix])
    logits = model(xb)
    loss = F.cross_entropy(logits.view(-1, V), yb.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 3 == 0:
        print(step, f"{loss.item():.5f}", f"{norm.item():.5f}", f"{sched.get_last_lr()[0]:.6f}",
              loss.grad_fn.name())

model.eval()
prompt = torch.tensor([[stoi[c] for c in "hel"]])
with torch.no_grad():
    full = prompt.clone()
    for _ in range(3):
        nxt = model(full)[:, -1].argmax(-1, keepdim=True)
        full = torch.cat([full, nxt], dim=1)
    caches = [{} for _ in model.blocks]
    logits = model(prompt, caches, 0)
    cached = prompt.clone()
    step_logits = []
    for _ in range(3):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        cached = torch.cat([cached, nxt], dim=1)
        logits = model(nxt, caches, cached.size(1) - 1)
        step_logits.append(logits[:, -1])
    ref = model(cached)[:, prompt.size(1):]
print("full  ", "".join(chars[i] for i in full[0].tolist()))
print("cached", "".join(chars[i] for i in cached[0].tolist()), torch.equal(full, cached))
print("cache k", caches[0]["k"].shape, caches[1]["v"].stride())
print("logits close", torch.allclose(torch.stack(step_logits, 1), ref, atol=1e-5))
print("mask", torch.ones(2, 4, dtype=torch.bool).tril(diagonal=2))

# temperature + top-k sampling with a fixed generator
with torch.no_grad():
    lg = model(prompt)[:, -1] / 0.8
    v, _ = torch.topk(lg, 3)
    lg[lg < v[:, [-1]]] = -float("inf")
    probs = F.softmax(lg, dim=-1)
    print("probs", probs.round(decimals=4))
    print("sample", torch.multinomial(probs, 4, replacement=True,
                                      generator=torch.Generator().manual_seed(3)))
try:
    model(torch.zeros(1, 2 * T + 1, dtype=torch.long))
except IndexError as e:
    print("IndexError", e)
