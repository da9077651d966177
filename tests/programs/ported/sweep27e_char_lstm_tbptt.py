"""A character LSTM language model trained on one long stream with truncated BPTT: the text is
batchified into parallel columns, each chunk's (h, c) is detached before the next, the LSTM
uses batch_first and a projection (proj_size) so h and c differ in width, Adam with gradient
clipping and a StepLR, perplexity on a held-out stream, then temperature sampling with
torch.multinomial driven by a seeded Generator (replayed via get_state / set_state)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
text = ("the quick brown fox jumps over the lazy dog. " * 6 +
        "a lazy dog sleeps; the fox runs off. " * 4)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
data = data[:288]
train_ids, val_ids = data[:-44], data[-44:]
print("vocab", len(chars), "train", train_ids.numel(), "val", val_ids.numel())


def batchify(ids, bsz):
    n = ids.size(0) // bsz
    return ids[: n * bsz].view(bsz, n)


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=12, hidden=24, proj=10, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True, proj_size=proj,
                            dropout=0.1)
        self.out = nn.Linear(proj, vocab)

    def forward(self, x, state=None):
        h, state = self.lstm(self.embed(x), state)
        return self.out(h), state

    def init_state(self, bsz):
        L, H, P = self.lstm.num_layers, self.lstm.hidden_size, self.lstm.proj_size
        return torch.zeros(L, bsz, P), torch.zeros(L, bsz, H)


model = CharLSTM(len(chars))
print(model)
print([(n, tuple(p.shape)) for n, p in model.lstm.named_parameters()][:5])
opt = torch.optim.Adam(model.parameters(), lr=0.02)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
train = batchify(train_ids, 4)
val = batchify(val_ids, 4)
BPTT = 10
print("batches", train.shape, val.shape)


def evaluate(stream):
    model.eval()
    state, total, count = model.init_state(stream.size(0)), 0.0, 0
    with torch.no_grad():
        for i in range(0, stream.size(1) - 1, BPTT):
            seq = min(BPTT, stream.size(1) - 1 - i)
            x, y = stream[:, i:i + seq], stream[:, i + 1:i + 1 + seq]
            logits, state = model(x, state)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                                     reduction="sum").item()
            count += y.numel()
    return total / count


for epoch in range(3):
    model.train()
    state = model.init_state(train.size(0))
    epoch_loss, chunks = 0.0, 0
    for i in range(0, train.size(1) - 1, BPTT):
        seq = min(BPTT, train.size(1) - 1 - i)
        x, y = train[:, i:i + seq], train[:, i + 1:i + 1 + seq]
        state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.transpose(1, 2), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        epoch_loss += loss.item()
        chunks += 1
        if epoch == 0 and chunks == 1:
            h, c = state
            print("state", h.shape, c.shape, h.requires_grad, h.grad_fn is not None)
            print("loss fn", loss.grad_fn.name(), logits.shape)
    sched.step()
    val_nll = evaluate(val)
    print(f"epoch {epoch} chunks {chunks} train {epoch_loss / chunks:.4f} "
          f"val ppl {math.exp(val_nll):.3f} lr {sched.get_last_lr()[0]:.4f}")


def sample(prefix, n, temperature, gen):
    model.eval()
    ids = torch.tensor([[stoi[c] for c in prefix]])
    out = list(prefix)
    with torch.no_grad():
        logits, state = model(ids)
        for _ in range(n):
            probs = F.softmax(logits[:, -1] / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=gen)
            out.append(chars[nxt.item()])
            logits, state = model(nxt, state)
    return "".join(out)


gen = torch.Generator().manual_seed(42)
saved = gen.get_state()
texts = [sample("the ", 20, temp, gen) for temp in (0.5, 1.0)]
print("samples", [repr(t) for t in texts])
gen.set_state(saved)
print("replayed", sample("the ", 20, 0.5, gen) == texts[0])
probs = F.softmax(torch.tensor([2.0, 1.0, 0.1, -1.0]) / 0.7, dim=0)
g2 = torch.Generator().manual_seed(0)
draws = torch.multinomial(probs, 2000, replacement=True, generator=g2)
print("freq", torch.bincount(draws, minlength=4).float() / 2000, probs)
print("no repl", torch.multinomial(probs, 4, generator=g2))
try:
    torch.multinomial(probs, 5)
except RuntimeError as e:
    print("error", e)
try:
    torch.multinomial(torch.tensor([0.5, -0.1]), 1)
except RuntimeError as e:
    print("error", e)
try:
    model.lstm(torch.randn(1, 3, 12), (torch.zeros(2, 1, 24), torch.zeros(2, 1, 24)))
except RuntimeError as e:
    print("error", e)
try:   # a hidden state built in float64 for a float32 model
    model.lstm(torch.randn(1, 3, 12), (torch.zeros(2, 1, 10, dtype=torch.float64),
                                       torch.zeros(2, 1, 24)))
except RuntimeError as e:
    print("error", e)
