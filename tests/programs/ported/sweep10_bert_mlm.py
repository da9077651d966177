"""BERT-style masked-LM pretraining on random tokens: a pre-norm TransformerEncoder with a key
padding mask, tied embedding/decoder weights, AdamW parameter groups without decay on biases and
LayerNorm, a LambdaLR warmup + linear decay, 80/10/10 masking with bernoulli and torch.where,
accuracy on masked positions, and a checkpoint dict through torch.save/torch.load."""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, PAD, MASK, D, L = 20, 0, 1, 16, 10


class MiniBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, L, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(D),
                                             enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(D, D), nn.GELU(), nn.LayerNorm(D))
        self.decoder = nn.Linear(D, VOCAB)
        self.decoder.weight = self.tok.weight

    def forward(self, ids, pad_mask):
        h = self.tok(ids) + self.pos[:, : ids.size(1)]
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        return self.decoder(self.head(h))


def make_batch(n):
    lengths = torch.randint(5, L + 1, (n,))
    ids = torch.randint(2, VOCAB, (n, L))
    pad_mask = torch.arange(L)[None, :] >= lengths[:, None]
    ids = ids.masked_fill(pad_mask, PAD)
    return ids, pad_mask


def mask_tokens(ids, pad_mask, p=0.15):
    labels = ids.clone()
    probs = torch.full(ids.shape, p).masked_fill(pad_mask, 0.0)
    chosen = torch.bernoulli(probs).bool()
    labels[~chosen] = -100
    replace = torch.bernoulli(torch.full(ids.shape, 0.8)).bool() & chosen
    inputs = torch.where(replace, torch.full_like(ids, MASK), ids)
    rand = torch.bernoulli(torch.full(ids.shape, 0.5)).bool() & chosen & ~replace
    inputs = torch.where(rand, torch.randint_like(ids, 2, VOCAB), inputs)
    return inputs, labels


model = MiniBert()
print(model.decoder.weight is model.tok.weight, sum(p.numel() for p in model.parameters()))
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if name.endswith("bias") or "norm" in name or ".2." in name else decay).append(name)
print(len(decay), len(no_decay), no_decay[:4])
params = dict(model.named_parameters())
opt = torch.optim.AdamW([
    {"params": [params[n] for n in decay], "weight_decay": 0.01},
    {"params": [params[n] for n in no_decay], "weight_decay": 0.0},
], lr=2e-3, betas=(0.9, 0.98))
total, warmup = 16, 4
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / (total - warmup)))

for step in range(total):
    model.train()
    ids, pad_mask = make_batch(8)
    inputs, labels = mask_tokens(ids, pad_mask)
    logits = model(inputs, pad_mask)
    loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), ignore_index=-100)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 3 == 0:
        m = labels != -100
        acc = (logits.argmax(-1)[m] == labels[m]).float().mean()
        print(f"step {step} loss {loss.item():.4f} gn {gn.item():.4f} acc {acc.item():.3f} "
              f"lr {sched.get_last_lr()} masked {int(m.sum())}")

print(logits.grad_fn.name(), loss.grad_fn.name(), model.tok.weight.grad is None)
model.eval()
with torch.no_grad():
    ids, pad_mask = make_batch(4)
    inputs, labels = mask_tokens(ids, pad_mask, p=0.3)
    out = model(inputs, pad_mask)
    m = labels != -100
    print(out.shape, out[m].argmax(-1).shape, F.cross_entropy(out[m], labels[m]))

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "step": total}, buf)
buf.seek(0)
ck = torch.load(buf, weights_only=True)
print(sorted(ck), ck["step"], ck["sched"]["last_epoch"], ck["sched"]["_last_lr"])
print(sorted(ck["model"])[:5], len(ck["model"]))
print(ck["opt"]["param_groups"][1]["weight_decay"], len(ck["opt"]["state"]),
      ck["opt"]["state"][0]["step"])
clone = MiniBert()
print(clone.load_state_dict(ck["model"]))
clone.eval()
with torch.no_grad():
    print(torch.allclose(clone(inputs, pad_mask), out), clone.decoder.weight is clone.tok.weight)
opt2 = torch.optim.AdamW(clone.parameters(), lr=1.0)
try:
    opt2.load_state_dict(ck["opt"])
except ValueError as e:
    print("ValueError", e)
