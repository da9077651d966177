"""A tiny decoder-only language model in the sequence-first layout (batch_first=False):
nn.TransformerEncoder with a causal mask from generate_square_subsequent_mask plus a key padding
mask, a sinusoidal positional-encoding buffer (non-persistent, so not in the state_dict), tied
input/output embeddings, label-smoothed cross_entropy with ignore_index, perplexity, and
temperature / top-k sampling with torch.multinomial from a seeded Generator."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "the cat sat on the mat. the dog sat on the log. a cat and a dog. "
vocab = ["<pad>"] + sorted(set(text))
stoi = {c: i for i, c in enumerate(vocab)}
PAD, V, D = 0, len(vocab), 32
data = torch.tensor([stoi[c] for c in text])
print("vocab", V, "tokens", data.numel())


class SinusoidalPE(nn.Module):
    def __init__(self, d, max_len=64):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, 1, d)
        pe[:, 0, 0::2] = torch.sin(pos * div)
        pe[:, 0, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):                     # x: T, B, D
        return x + self.pe[: x.size(0)]


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=PAD)
        self.pos = SinusoidalPE(D)
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.1)
        self.body = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(D, V, bias=False)
        self.head.weight = self.emb.weight     # weight tying

    def forward(self, src, pad_mask=None):
        T = src.size(0)
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        h = self.pos(self.emb(src) * math.sqrt(D))
        h = self.body(h, mask=mask, src_key_padding_mask=pad_mask, is_causal=True)
        return self.head(h)


model = TinyLM()
print(nn.Transformer.generate_square_subsequent_mask(4))
sd = model.state_dict()
print("state_dict keys", len(sd), list(sd)[:3], "pos.pe" in sd)
print("buffers", [n for n, _ in model.named_buffers()])
print("params", sum(p.numel() for p in model.parameters()), "tied", model.head.weight is model.emb.weight)

SEQ, B = 16, 6


def get_batch(gen):
    starts = torch.randint(0, data.numel() - SEQ - 1, (B,), generator=gen)
    x = torch.stack([data[s:s + SEQ] for s in starts.tolist()], 1)       # T, B
    y = torch.stack([data[s + 1:s + SEQ + 1] for s in starts.tolist()], 1)
    # ragged ends: the last two columns are shorter, padded with PAD (and ignored in the loss)
    x[12:, -2:] = PAD
    y[11:, -2:] = PAD
    return x, y


gen = torch.Generator().manual_seed(42)
opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.9, 0.98))
for step in range(30):
    model.train()
    x, y = get_batch(gen)
    pad_mask = (x == PAD).t()                                            # B, T
    logits = model(x, pad_mask)
    loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), ignore_index=PAD,
                           label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.4f} {loss.grad_fn.name()}")

model.eval()
with torch.no_grad():
    x, y = get_batch(gen)
    logits = model(x, (x == PAD).t())
    nll = F.cross_entropy(logits.view(-1, V), y.view(-1), ignore_index=PAD, reduction="sum")
    n_tok = (y != PAD).sum()
print("eval tokens", n_tok.item(), "ppl", round(math.exp(nll.item() / n_tok.item()), 3))
print("logits", tuple(logits.shape), logits.dtype)


@torch.no_grad()
def sample(prompt, n, temperature=0.8, top_k=5, gen=None):
    ids = torch.tensor([stoi[c] for c in prompt]).unsqueeze(1)            # T, 1
    for _ in range(n):
        logits = model(ids)[-1, 0] / temperature
        v, _ = torch.topk(logits, top_k)
        logits[logits < v[-1]] = float("-inf")
        nxt = torch.multinomial(F.softmax(logits, -1), 1, generator=gen)
        ids = torch.cat([ids, nxt.unsqueeze(1)], 0)
    return "".join(vocab[i] for i in ids[:, 0].tolist())


g = torch.Generator().manual_seed(7)
print(repr(sample("the ", 4, gen=g)))
greedy = torch.tensor([stoi[c] for c in "a ca"]).unsqueeze(1)
with torch.no_grad():
    for _ in range(4):
        greedy = torch.cat([greedy, model(greedy)[-1:].argmax(-1)], 0)
print(repr("".join(vocab[i] for i in greedy[:, 0].tolist())))
try:
    model(torch.zeros(80, 1, dtype=torch.long))
except RuntimeError as e:
    print("RuntimeError:", e)
