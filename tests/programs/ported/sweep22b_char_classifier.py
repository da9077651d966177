"""Char-level language identification: a vocab dict built from the training words, index tensors
padded with pad_sequence (padding_value = PAD), nn.Embedding(padding_idx=0), a Conv1d branch
with masked max-over-time pooling and an LSTM branch over pack_padded_sequence
(enforce_sorted=False), cross_entropy with label smoothing, accuracy and a confusion matrix."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
DATA = [
    ("hello", 0), ("world", 0), ("house", 0), ("water", 0), ("little", 0), ("thing", 0),
    ("hallo", 1), ("welt", 1), ("haus", 1), ("wasser", 1), ("klein", 1), ("ding", 1),
    ("bonjour", 2), ("monde", 2), ("maison", 2), ("eau", 2), ("petit", 2), ("chose", 2),
]
LANGS = ["en", "de", "fr"]
PAD, UNK = "<pad>", "<unk>"
chars = sorted({c for w, _ in DATA for c in w})
stoi = {PAD: 0, UNK: 1}
for c in chars:
    stoi[c] = len(stoi)
itos = {i: s for s, i in stoi.items()}
print("vocab size", len(stoi), "first", [itos[i] for i in range(6)])


def encode(word):
    return torch.tensor([stoi.get(c, stoi[UNK]) for c in word], dtype=torch.long)


def collate(batch):
    seqs = [encode(w) for w, _ in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    x = pad_sequence(seqs, batch_first=True, padding_value=stoi[PAD])
    y = torch.tensor([lab for _, lab in batch])
    return x, lengths, y


class CharNet(nn.Module):
    def __init__(self, vocab, emb=12, ch=16, hid=10, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.conv = nn.Conv1d(emb, ch, kernel_size=3, padding=1)
        self.rnn = nn.LSTM(emb, hid, batch_first=True, bidirectional=True)
        self.out = nn.Linear(ch + 2 * hid, classes)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, lengths):
        e = self.emb(x)                                   # B, T, E
        mask = x.ne(0)                                    # B, T
        c = F.relu(self.conv(e.transpose(1, 2)))          # B, C, T
        c = c.masked_fill(~mask.unsqueeze(1), float("-inf")).amax(dim=2)
        packed = pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        r = torch.cat([h[-2], h[-1]], dim=1)
        return self.out(self.drop(torch.cat([c, r], dim=1)))


model = CharNet(len(stoi))
print(model.emb)
print("padding row zero:", bool(model.emb.weight[0].abs().sum() == 0))
x, lengths, y = collate(DATA)
print("batch", tuple(x.shape), x.dtype, "lengths", lengths.tolist())
print(x[:3])
packed = pack_padded_sequence(model.emb(x), lengths, batch_first=True, enforce_sorted=False)
print("batch_sizes", packed.batch_sizes.tolist(), "sorted_indices", packed.sorted_indices.tolist())
unpacked, ulens = pad_packed_sequence(packed, batch_first=True)
print("unpacked", tuple(unpacked.shape), ulens.tolist())

opt = torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.01)
# fixed batch composition (visited in random order) keeps the packed shapes few
batches = [collate(DATA[k::3]) for k in range(3)]
for epoch in range(15):
    model.train()
    total = 0.0
    for b in torch.randperm(3).tolist():
        bx, bl, by = batches[b]
        logits = model(bx, bl)
        loss = F.cross_entropy(logits, by, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1} loss {total / 3:.4f} grad_fn {loss.grad_fn.name()}")

print("pad grad row:", model.emb.weight.grad[0].abs().sum().item())
model.eval()
with torch.no_grad():
    logits = model(x, lengths)
    pred = logits.argmax(1)
    acc = (pred == y).float().mean()
    conf = torch.zeros(3, 3, dtype=torch.long)
    conf.index_put_((y, pred), torch.ones_like(y), accumulate=True)
print("train acc", acc.item())
print(conf)
tests = ["hund", "chat", "tree", "zzq"]
tx, tl, _ = collate([(w, 0) for w in tests])
with torch.no_grad():
    probs = F.softmax(model(tx, tl), dim=1)
for w, p in zip(tests, probs):
    print(w, LANGS[int(p.argmax())], [round(v, 3) for v in p.tolist()])
print("unk ids", tx[3].tolist())
try:
    model.emb(torch.tensor([[len(stoi)]]))
except IndexError as e:
    print("IndexError:", e)
try:
    pack_padded_sequence(model.emb(x), lengths, batch_first=True)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
