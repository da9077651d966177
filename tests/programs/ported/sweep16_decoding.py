"""LM decoding strategies on a tiny one-layer decoder with a KV cache grown by torch.cat:
greedy, temperature, top-k (torch.topk) and top-p (sort + cumsum mask + masked_fill(-inf))
sampling with torch.multinomial under a seeded torch.Generator, a repetition penalty through
gather / scatter_, per-row stopping on an eos id, all under torch.inference_mode()."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, D, EOS = 10, 8, 0


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Embedding(16, D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, V)

    def forward(self, idx, cache=None):
        start = 0 if cache is None else cache[0].shape[1]
        pos = torch.arange(start, start + idx.shape[1])
        x = self.emb(idx) + self.pos(pos)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=1), torch.cat([cache[1], v], dim=1)
        att = q @ k.transpose(-2, -1) / D ** 0.5
        causal = torch.ones(idx.shape[1], k.shape[1], dtype=torch.bool).tril(diagonal=start)
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        x = self.ln(x + self.proj(att @ v))
        return self.head(x), (k, v)


def penalize(logits, seen, penalty):
    picked = torch.gather(logits, 1, seen)
    picked = torch.where(picked < 0, picked * penalty, picked / penalty)
    return logits.scatter_(1, seen, picked)


def filter_top_k(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[:, -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def filter_top_p(logits, p):
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    cum = sorted_logits.softmax(-1).cumsum(-1)
    drop = cum > p
    drop[:, 1:] = drop[:, :-1].clone()
    drop[:, 0] = False
    return logits.masked_fill(drop.scatter(1, order, drop), float("-inf"))


def generate(model, prompt, steps, mode, gen=None):
    logits, cache = model(prompt)
    out, done = prompt, torch.zeros(prompt.shape[0], dtype=torch.bool)
    for _ in range(steps):
        last = penalize(logits[:, -1].clone(), out, 1.3)
        if mode == "greedy":
            nxt = last.argmax(-1, keepdim=True)
        else:
            last = last / 0.7
            last = filter_top_k(last, 4) if mode == "top_k" else filter_top_p(last, 0.8)
            nxt = torch.multinomial(F.softmax(last, -1), 1, generator=gen)
        nxt = nxt.masked_fill(done[:, None], EOS)
        out, done = torch.cat([out, nxt], 1), done | (nxt[:, 0] == EOS)
        if bool(done.all()):
            break
        logits, cache = model(nxt, cache)
    return out, cache


model = TinyDecoder().eval()
prompt = torch.tensor([[3, 5, 2], [7, 1, 4]])
with torch.inference_mode():
    for mode in ["greedy", "top_k", "top_p"]:
        out, cache = generate(model, prompt, 5, mode, torch.Generator().manual_seed(7))
        print(mode, out.tolist(), tuple(cache[0].shape), out.is_inference())
    full, _ = model(out)
    step, _ = model(out[:, -1:], cache)  # the loop stopped before caching the eos
    print("cache agrees", torch.allclose(full[:, -1], step[:, -1], atol=1e-5))
    logits = model(prompt)[0][:, -1]
    print("topk", torch.topk(logits, 3), filter_top_k(logits.clone(), 2).isinf().sum(-1).tolist())
    print("penalized", penalize(logits.clone(), prompt, 2.0)[0])
    print("top_p kept", (~filter_top_p(logits, 0.5).isinf()).sum(-1).tolist())
try:
    out.add_(1)
except RuntimeError as e:   # (refused after the update: the values did change)
    print("RuntimeError", e, out[0, :3].tolist())
ids = out.detach()   # a detached inference tensor may be updated outside the mode
ids.sub_(1)
print("detached", ids.is_inference(), out[:, -2:].tolist())
print(torch.multinomial(torch.tensor([0.0, 0.3, 0.7]), 4, replacement=True, generator=torch.Generator().manual_seed(1)))
