"""Seq2seq on a toy reversal task: a GRU encoder-decoder with dot attention, teacher forcing
chosen per step, cross_entropy with label_smoothing and ignore_index, greedy decoding, and a
batched beam search built from topk, gather, index_select and masked_fill."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD, BOS, EOS, V, H, L = 0, 1, 2, 10, 24, 5


def make_batch(n):
    lens = torch.randint(2, L + 1, (n,))
    src = torch.full((n, L), PAD, dtype=torch.long)
    tgt = torch.full((n, L + 2), PAD, dtype=torch.long)
    tgt[:, 0] = BOS
    for i, k in enumerate(lens.tolist()):
        s = torch.randint(3, V, (k,))
        src[i, :k] = s
        tgt[i, 1:k + 1] = s.flip(0)
        tgt[i, k + 1] = EOS
    return src, tgt


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, H, padding_idx=PAD)
        self.enc = nn.GRU(H, H, batch_first=True)
        self.dec = nn.GRUCell(H, H)
        self.out = nn.Linear(2 * H, V)

    def encode(self, src):
        mem, h = self.enc(self.emb(src))
        return mem, h[0], src == PAD

    def step(self, tok, h, mem, pad):
        h = self.dec(self.emb(tok), h)
        att = torch.einsum("bh,bth->bt", h, mem).masked_fill(pad, -1e9).softmax(-1)
        ctx = (att.unsqueeze(-1) * mem).sum(1)
        return self.out(torch.cat([h, ctx], -1)), h, att

    def forward(self, src, tgt, tf_ratio):
        mem, h, pad = self.encode(src)
        tok, logits = tgt[:, 0], []
        for t in range(1, tgt.size(1)):
            lg, h, _ = self.step(tok, h, mem, pad)
            logits.append(lg)
            teacher = torch.rand(()) < tf_ratio
            tok = tgt[:, t] if teacher else lg.argmax(-1)
        return torch.stack(logits, 1)


def beam_search(model, src, k=3, max_len=L + 2):
    mem, h, pad = model.encode(src)
    B = src.size(0)
    mem, pad, h = (x.repeat_interleave(k, 0) for x in (mem, pad, h))
    scores = torch.full((B, k), float("-inf"))
    scores[:, 0] = 0.0
    seqs = torch.full((B * k, 1), BOS, dtype=torch.long)
    done = torch.zeros(B * k, dtype=torch.bool)
    for _ in range(max_len):
        lg, h, _ = model.step(seqs[:, -1], h, mem, pad)
        logp = F.log_softmax(lg, -1)
        logp = logp.masked_fill(done[:, None], float("-inf"))
        logp[:, PAD] = torch.where(done, 0.0, float("-inf"))
        cand = (scores.view(-1, 1) + logp).view(B, k * V)
        scores, idx = cand.topk(k, dim=1)
        beam, tok = idx // V, idx % V
        flat = (beam + torch.arange(B)[:, None] * k).view(-1)
        seqs = torch.cat([seqs.index_select(0, flat), tok.view(-1, 1)], 1)
        h = h.index_select(0, flat)
        done = done.index_select(0, flat) | (tok.view(-1) == EOS) | (tok.view(-1) == PAD)
        if bool(done.all()):
            break
    best = scores.argmax(1)
    index = best[:, None, None].expand(-1, 1, seqs.size(1))
    return torch.gather(seqs.view(B, k, -1), 1, index).squeeze(1), scores


model = Seq2Seq()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
data = [make_batch(16) for _ in range(2)]
print(data[0][0][:3], data[0][1][:3], sep="\n")
for epoch in range(6):
    total, correct, count = 0.0, 0, 0
    for src, tgt in data:
        logits = model(src, tgt, tf_ratio=0.75)
        gold = tgt[:, 1:]
        loss = F.cross_entropy(logits.reshape(-1, V), gold.reshape(-1), ignore_index=PAD,
                               label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        mask = gold != PAD
        correct += int((logits.argmax(-1)[mask] == gold[mask]).sum())
        count += int(mask.sum())
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(data):.5f} tok-acc {correct / count:.4f}")

print(loss.grad_fn.name(), logits.grad_fn.name(), logits.shape)
x = torch.randn(4, V, requires_grad=True)
y = torch.tensor([1, PAD, 3, 4])
for kw in [{}, {"label_smoothing": 0.2}, {"label_smoothing": 0.2, "ignore_index": PAD},
           {"label_smoothing": 0.2, "reduction": "sum"},
           {"label_smoothing": 0.3, "reduction": "none"}]:
    print(kw, F.cross_entropy(x, y, **kw))
soft = F.softmax(torch.randn(4, V), -1)
print(F.cross_entropy(x, soft, label_smoothing=0.1),
      nn.CrossEntropyLoss(label_smoothing=0.05)(x, y))
F.cross_entropy(x, y, label_smoothing=0.2, ignore_index=PAD,
                weight=torch.linspace(0.5, 1.5, V)).backward()
print(x.grad[0], x.grad[1])
try:
    F.cross_entropy(x, y, label_smoothing=1.5)
except RuntimeError as e:
    print("RuntimeError", e)

model.eval()
with torch.no_grad():
    src, tgt = make_batch(4)
    mem, h, pad = model.encode(src)
    tok, outs = torch.full((4,), BOS), []
    for t in range(L + 1):
        lg, h, att = model.step(tok, h, mem, pad)
        tok = lg.argmax(-1)
        outs.append(tok)
    print("greedy", torch.stack(outs, 1), att.shape)
    best, scores = beam_search(model, src)
    print("beam", best, scores)
    print("gold", tgt[:, 1:])
