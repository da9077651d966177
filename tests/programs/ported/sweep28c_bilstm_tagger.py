"""Part-of-speech style sequence tagging: variable-length token sequences padded into a batch,
embedded (padding_idx=0), run through a two-layer bidirectional nn.LSTM over
pack_padded_sequence (enforce_sorted=False) and unpacked by pad_packed_sequence, a linear tag
head, a masked token loss via CrossEntropyLoss(ignore_index=-100), gradient clipping with
clip_grad_norm_, greedy decoding (argmax per token, no Viterbi), token and sentence accuracy
under the padding mask, and the packed sequence's fields printed along the way."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                pad_sequence)

torch.manual_seed(0)
gen = torch.Generator().manual_seed(11)
VOCAB, N_TAGS, PAD, IGNORE = 20, 4, 0, -100


def tag_of(token):
    """Tags follow the token id's class, and tag 3 marks a token after token 1 ("determiner")."""
    return token % 3


def make_corpus(n, g):
    sents = []
    for _ in range(n):
        length = int(torch.randint(2, 9, (1,), generator=g))
        toks = torch.randint(1, VOCAB, (length,), generator=g)
        tags = tag_of(toks)
        after_det = torch.cat([torch.tensor([False]), toks[:-1] == 1])
        tags = torch.where(after_det, torch.full_like(tags, 3), tags)
        sents.append((toks, tags))
    return sents


def collate(batch):
    toks = [t for t, _ in batch]
    tags = [y for _, y in batch]
    lengths = torch.tensor([len(t) for t in toks])
    x = pad_sequence(toks, batch_first=True, padding_value=PAD)
    y = pad_sequence(tags, batch_first=True, padding_value=IGNORE)
    return x, y, lengths


# one batch size throughout (the packed LSTM compiles per batch size and bucket of steps)
BATCH = 8
train = make_corpus(16, gen)
test = make_corpus(BATCH, gen)
x, y, lengths = collate(train[:BATCH])
print("batch", x.shape, y.shape, lengths.tolist())
print("x", x)
print("y", y)
mask = y != IGNORE
print("mask", mask.sum(1).tolist(), torch.equal(mask.sum(1), lengths))


class Tagger(nn.Module):
    def __init__(self, vocab, n_tags, emb=8, hidden=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True,
                            dropout=0.1)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(2 * hidden, n_tags)

    def forward(self, x, lengths, verbose=False):
        e = self.embed(x)
        packed = pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        if verbose:
            print("packed data", packed.data.shape, "batch_sizes", packed.batch_sizes)
            print("sorted_indices", packed.sorted_indices,
                  "unsorted_indices", packed.unsorted_indices)
            print("out packed", type(out).__name__, out.data.shape, out.data.grad_fn.name())
            print("h", h.shape, "c", c.shape)
        padded, out_lengths = pad_packed_sequence(out, batch_first=True, padding_value=0.0,
                                                  total_length=x.size(1))
        if verbose:
            print("padded", padded.shape, out_lengths, padded.grad_fn.name())
            print("pad rows zero", padded[lengths.argmin(), lengths.min():].abs().sum().item())
        return self.head(self.drop(padded)), h


model = Tagger(VOCAB, N_TAGS)
print(model)
for name, p in model.lstm.named_parameters():
    if name.endswith("l0") or name.endswith("l1_reverse"):
        print(" ", name, tuple(p.shape))
print("n params", sum(p.numel() for p in model.parameters()))
print("embed pad row", model.embed.weight[PAD].abs().sum().item())

criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)

logits, h = model(x, lengths, verbose=True)
print("logits", logits.shape, logits.grad_fn.name())
loss = criterion(logits.reshape(-1, N_TAGS), y.reshape(-1))
print("first loss", f"{loss.item():.5f}", loss.grad_fn.name())
# the masked loss by hand: mean over real tokens only
flat_mask = mask.reshape(-1)
manual = F.cross_entropy(logits.reshape(-1, N_TAGS)[flat_mask], y.reshape(-1)[flat_mask])
print("manual", f"{manual.item():.5f}")
per_tok = F.cross_entropy(logits.transpose(1, 2), y, ignore_index=IGNORE, reduction="none")
print("per-token", per_tok.shape, (per_tok[~mask] == 0).all().item(),
      f"{(per_tok.sum() / mask.sum()).item():.5f}")
loss.backward()
print("embed pad grad", model.embed.weight.grad[PAD].abs().sum().item())
print("lstm grad", f"{model.lstm.weight_hh_l1_reverse.grad.norm().item():.5f}")
model.zero_grad()

for epoch in range(1):
    model.train()
    order = torch.randperm(len(train), generator=gen).tolist()
    total_loss, total_tokens = 0.0, 0
    norms = []
    for start in range(0, len(train), BATCH):
        xb, yb, lb = collate([train[i] for i in order[start:start + BATCH]])
        logits, _ = model(xb, lb)
        loss = criterion(logits.reshape(-1, N_TAGS), yb.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2.0)
        norms.append(norm.item())
        optimizer.step()
        n_tok = (yb != IGNORE).sum().item()
        total_loss += loss.item() * n_tok
        total_tokens += n_tok
    print(f"epoch {epoch} loss {total_loss / total_tokens:.5f} tokens {total_tokens} "
          f"max norm {max(norms):.4f} clipped {sum(n > 1.0 for n in norms)}")

clipped = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
print("after-step norm", f"{clipped.item():.5f}",
      f"{torch.stack([p.grad.norm() for p in model.parameters()]).norm().item():.5f}")
inf_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.01, norm_type="inf")
print("inf norm", f"{inf_norm.item():.5f}",
      max(p.grad.abs().max().item() for p in model.parameters()) <= 0.01 + 1e-6)
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.001)
print("clip value", max(p.grad.abs().max().item() for p in model.parameters()))

# greedy decoding and masked accuracy on the test split
model.eval()
xt, yt, lt = collate(test)
with torch.no_grad():
    logits, h = model(xt, lt)
    pred = logits.argmax(-1)
mask = yt != IGNORE
pred = pred.masked_fill(~mask, IGNORE)
correct = (pred == yt) & mask
print("pred[0]", pred[0].tolist(), "gold", yt[0].tolist())
print("token acc", f"{(correct.sum() / mask.sum()).item():.4f}")
sent_ok = (correct | ~mask).all(dim=1)
print("sentence acc", sent_ok.float().mean().item(), sent_ok.tolist()[:8])
per_tag = torch.zeros(N_TAGS)
for k in range(N_TAGS):
    sel = (yt == k)
    per_tag[k] = (correct & sel).sum() / sel.sum().clamp(min=1)
print("per-tag acc", per_tag)
decoded = [p[:n].tolist() for p, n in zip(pred, lt)]
print("decoded lengths", [len(d) for d in decoded], decoded[1])
print("final h", h.shape, "h[-1] vs h[-2]", h[-2:].shape)

# packing corner cases
seqs = [torch.tensor([1., 2., 3.]), torch.tensor([4.]), torch.tensor([5., 6.])]
ps = pack_sequence(seqs, enforce_sorted=False)
print("pack_sequence", ps.data, ps.batch_sizes, ps.sorted_indices, ps.unsorted_indices)
padded, lens = pad_packed_sequence(ps, batch_first=False)
print("unpacked", padded, lens)
sorted_ps = pack_padded_sequence(padded, torch.tensor([3, 2, 1]), enforce_sorted=True)
print("sorted indices none", sorted_ps.sorted_indices, sorted_ps.batch_sizes)
try:
    pack_padded_sequence(padded, torch.tensor([1, 3, 2]), enforce_sorted=True)
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
try:
    pack_padded_sequence(padded, torch.tensor([3, 0, 2]), enforce_sorted=False)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    pad_packed_sequence(ps, total_length=2)
except ValueError as e:
    print("ValueError", str(e).splitlines()[0])
try:
    criterion(torch.randn(3, N_TAGS), torch.tensor([0, 7, IGNORE]))
except IndexError as e:
    print("IndexError", e)
all_ignored = criterion(torch.randn(2, N_TAGS), torch.tensor([IGNORE, IGNORE]))
print("all ignored", all_ignored)
print("to", ps.to(torch.float64).data.dtype, ps.data.dtype, ps.is_cuda)
