"""Variable-length sequence classification: padding with pad_sequence, pack_padded_sequence
through a bidirectional LSTM, pad_packed_sequence, masking, attention pooling, sorting by length,
a collate_fn returning lengths, and Adagrad/CosineAnnealingWarmRestarts."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
VOCAB = 12


class Seqs(Dataset):
    def __init__(self, n):
        self.items = []
        for _ in range(n):
            length = int(torch.randint(2, 9, (1,)))
            seq = torch.randint(1, VOCAB, (length,))
            label = int((seq == 3).sum() > (seq == 4).sum())
            self.items.append((seq, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    batch = sorted(batch, key=lambda t: len(t[0]), reverse=True)
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(list(seqs), batch_first=True, padding_value=0), lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, 12, batch_first=True, bidirectional=True)
        self.att = nn.Linear(24, 1)
        self.out = nn.Linear(24, 2)

    def forward(self, x, lengths):
        e = self.emb(x)
        packed = pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=True)
        h, (hn, cn) = self.lstm(packed)
        h, out_len = pad_packed_sequence(h, batch_first=True, total_length=x.size(1))
        mask = torch.arange(x.size(1))[None, :] < lengths[:, None]
        scores = self.att(h).squeeze(-1).masked_fill(~mask, float("-inf"))
        w = torch.softmax(scores, dim=1)
        pooled = torch.bmm(w.unsqueeze(1), h).squeeze(1)
        return self.out(pooled), hn, w


ds = Seqs(24)
loader = DataLoader(ds, batch_size=8, shuffle=True, collate_fn=collate)
x, lengths, y = next(iter(loader))
print(x, lengths, y)
packed = pack_padded_sequence(x, lengths, batch_first=True)
print(packed.batch_sizes, packed.data[:6])
unsorted = pack_padded_sequence(x[[2, 0, 1]], lengths[[2, 0, 1]], batch_first=True, enforce_sorted=False)
print(unsorted.sorted_indices, unsorted.unsorted_indices)

model = Classifier()
print(model)
opt = torch.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=1e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
iters = len(loader)
for epoch in range(3):
    total, correct, loss_sum = 0, 0, 0.0
    for i, (x, lengths, y) in enumerate(loader):
        logits, hn, w = model(x, lengths)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step(epoch + i / iters)
        loss_sum += loss.item() * y.size(0)
        correct += (logits.argmax(1) == y).sum().item()
        total += y.size(0)
    print(f"epoch {epoch} loss {loss_sum / total:.4f} acc {correct / total:.3f} lr {sched.get_last_lr()[0]:.5f}")
print(hn.shape, w.shape, f"{w[0].sum().item():.4f}", (w == 0).sum().item())
print(model.emb.weight[0], model.emb.weight.grad[0])
model.eval()
with torch.no_grad():
    x, lengths, y = collate([ds[i] for i in range(6)])
    logits, _, w = model(x, lengths)
print(F.softmax(logits, -1), w[-1])
