"""A char-level LSTM/GRU language model: truncated BPTT with hidden detach, clip_grad_norm_."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "hello world, this is a tiny corpus for a tiny char model. hello again!"
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print("vocab", len(chars), "data", data.shape, data.dtype)


class CharModel(nn.Module):
    def __init__(self, vocab, emb=8, hidden=16, layers=2, cell="LSTM"):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = getattr(nn, cell)(emb, hidden, num_layers=layers, batch_first=True, dropout=0.0)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, h=None):
        out, h = self.rnn(self.embed(x), h)
        return self.head(out), h


def detach_hidden(h):
    if isinstance(h, tuple):
        return tuple(v.detach() for v in h)
    return h.detach()


for cell in ["LSTM", "GRU"]:
    torch.manual_seed(0)
    model = CharModel(len(chars), cell=cell)
    print(model)
    print(cell, "params", sum(p.numel() for p in model.parameters() if p.requires_grad))
    for name, p in model.rnn.named_parameters():
        print(" ", name, list(p.shape))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    seq_len, batch = 8, 2
    hidden = None
    for step in range(3):
        starts = torch.tensor([step * seq_len, 30 + step * seq_len])
        x = torch.stack([data[s:s + seq_len] for s in starts])
        y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts])
        if hidden is not None:
            hidden = detach_hidden(hidden)
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        print(f"{cell} step {step} loss {loss.item():.4f} grad_norm {norm.item():.4f}")
    if isinstance(hidden, tuple):
        print([tuple(h.shape) for h in hidden], hidden[0].requires_grad, hidden[0].grad_fn is not None)
    else:
        print(tuple(hidden.shape), hidden.requires_grad)

    model.eval()
    with torch.no_grad():
        idx = torch.tensor([[stoi["h"]]])
        h = None
        out = "h"
        for _ in range(6):
            logits, h = model(idx, h)
            nxt = logits[0, -1].argmax().item()
            out += itos[nxt]
            idx = torch.tensor([[nxt]])
        print(cell, "greedy:", repr(out))
        probs = F.softmax(logits[0, -1], dim=-1)
        print(f"{probs.max().item():.4f}", torch.multinomial(probs, 3, replacement=True).tolist())
