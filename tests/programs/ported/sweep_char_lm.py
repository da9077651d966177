"""Character-level GRU/LSTM language model: vocab from text, batches of windows, Adam with
CosineAnnealingLR, clip_grad_norm_, sampling with temperature, top-k and multinomial."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = ("the quick brown fox jumps over the lazy dog. " * 4 +
        "pack my box with five dozen liquor jugs. " * 3)
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(len(chars), data.shape, data[:10])
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block, batch = 16, 8


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block, (batch,))
    x = torch.stack([d[i:i + block] for i in ix])
    y = torch.stack([d[i + 1:i + block + 1] for i in ix])
    return x, y


class CharRNN(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32, cell="lstm"):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        rnn_cls = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn_cls(emb, hidden, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        h, state = self.rnn(self.embed(x), state)
        return self.head(h), state


@torch.no_grad()
def sample(model, start, steps, temperature=1.0, top_k=None):
    model.eval()
    idx = torch.tensor([[stoi[c] for c in start]])
    logits, state = model(idx)
    out = list(start)
    for _ in range(steps):
        last = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(last, top_k)
            last[last < v[:, [-1]]] = -float("inf")
        probs = F.softmax(last, dim=-1)
        nxt = torch.multinomial(probs, num_samples=1)
        out.append(itos[nxt.item()])
        logits, state = model(nxt, state)
    model.train()
    return "".join(out)


for cell in ["lstm", "gru"]:
    torch.manual_seed(1)
    model = CharRNN(len(chars), cell=cell)
    print(model)
    print(sum(p.numel() for p in model.parameters()))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=1e-4)
    for it in range(12):
        x, y = get_batch("train")
        logits, _ = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if it % 3 == 0:
            print(f"{cell} it {it:2d} loss {loss.item():.4f} norm {norm.item():.4f} lr {sched.get_last_lr()[0]:.6f}")
    model.eval()
    with torch.no_grad():
        x, y = get_batch("val")
        logits, (h) = model(x)
        vl = F.cross_entropy(logits.transpose(1, 2), y)
        ppl = torch.exp(vl)
    print(f"{cell} val {vl.item():.4f} ppl {ppl.item():.3f}")
    torch.manual_seed(7)
    print(repr(sample(model, "the ", 20, temperature=0.8, top_k=5)))
    print(repr(sample(model, "pack", 15, temperature=1.3)))
    probs = F.softmax(logits[0, -1], -1)
    print(torch.multinomial(probs, 5, replacement=True), torch.multinomial(probs, 3))
    print(probs.topk(3).indices, f"{probs.max().item():.5f}")
