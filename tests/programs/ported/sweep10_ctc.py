"""CTC speech toy: random "acoustic" features whose frames encode a label sequence, padded to a
fixed length, a bidirectional GRU over pack_padded_sequence, nn.CTCLoss (blank=0, mean reduction,
zero_infinity), greedy decoding with unique_consecutive, and an edit-distance error rate."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
C, FEAT, H, T_MAX, S_MAX = 6, 8, 16, 12, 4  # classes incl. blank 0
proto = torch.randn(C, FEAT)


def make_batch(n):
    label_lens = torch.randint(1, 5, (n,))
    labels = [torch.randint(1, C, (int(k),)) for k in label_lens]
    feats, lens = [], []
    for lab in labels:
        reps = torch.randint(2, 4, (lab.numel(),))
        frames = proto[lab].repeat_interleave(reps, dim=0)
        frames = frames + 0.3 * torch.randn_like(frames)
        feats.append(frames)
        lens.append(frames.size(0))
    x = torch.zeros(n, T_MAX, FEAT)
    targets = torch.zeros(n, S_MAX, dtype=torch.long)
    for i, (f, lab) in enumerate(zip(feats, labels)):
        x[i, : f.size(0)] = f
        targets[i, : lab.numel()] = lab
    return x, torch.tensor(lens), targets, label_lens, labels


class Acoustic(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEAT, H)
        self.rnn = nn.GRU(H, H, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.out = nn.Linear(2 * H, C)

    def forward(self, x, lens):
        h = F.relu(self.proj(x))
        packed = pack_padded_sequence(h, lens, batch_first=True, enforce_sorted=False)
        y, hn = self.rnn(packed)
        y, out_lens = pad_packed_sequence(y, batch_first=True, total_length=T_MAX)
        return self.out(y).log_softmax(-1), out_lens, hn


def greedy(log_probs, lens):
    best = log_probs.argmax(-1)
    out = []
    for b in range(best.size(0)):
        seq = torch.unique_consecutive(best[b, : lens[b]])
        out.append(seq[seq != 0].tolist())
    return out


def edit_distance(a, b):
    d = torch.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        prev, d = d, torch.zeros_like(d)
        d[0] = i
        for j in range(1, len(b) + 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + int(a[i - 1] != b[j - 1]))
    return int(d[-1])


model = Acoustic()
ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, lens, targets, label_lens, labels = make_batch(6)
print(x.shape, lens, targets, label_lens)
train_set = [make_batch(6) for _ in range(2)]
for epoch in range(3):
    model.train()
    total = 0.0
    for x, lens, targets, label_lens, labels in train_set:
        logp, out_lens, hn = model(x, lens)
        loss = ctc(logp.transpose(0, 1), targets, out_lens, label_lens)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        total += loss.item()
    if epoch % 2 == 0:
        print(f"epoch {epoch} loss {total / len(train_set):.5f}", logp.shape, hn.shape, loss.grad_fn.name())

model.eval()
with torch.no_grad():
    x, lens, targets, label_lens, labels = train_set[0]
    logp, out_lens, _ = model(x, lens)
    hyp = greedy(logp, out_lens)
    errs = sum(edit_distance(h, r.tolist()) for h, r in zip(hyp, labels))
    print(hyp[:3], [r.tolist() for r in labels[:3]])
    print("cer", errs / int(label_lens.sum()))

# the loss's options on a fixed input
torch.manual_seed(1)
lp = torch.randn(5, 2, 4).log_softmax(2).requires_grad_()
tg = torch.tensor([[1, 2, 2], [3, 0, 0]])
il, tl = torch.tensor([5, 3]), torch.tensor([3, 1])
for red in ["none", "sum", "mean"]:
    print(red, F.ctc_loss(lp, tg, il, tl, reduction=red))
impossible = F.ctc_loss(lp, tg, torch.tensor([2, 3]), tl, reduction="none")
print(impossible,
      F.ctc_loss(lp, tg, torch.tensor([2, 3]), tl, reduction="none", zero_infinity=True))
l = F.ctc_loss(lp, tg, torch.tensor([2, 3]), tl, zero_infinity=True)
l.backward()
print(l, lp.grad[:, 0].abs().sum(), lp.grad[:, 1])
flat = F.ctc_loss(lp, torch.tensor([1, 2, 2, 3]), il, tl, reduction="sum")
print(flat, flat.grad_fn.name())
print(torch.unique_consecutive(torch.tensor([0, 0, 1, 1, 0, 2, 2, 2]), return_counts=True,
                               return_inverse=True))
try:
    F.ctc_loss(lp, tg, torch.tensor([5]), tl)
except RuntimeError as e:
    print("RuntimeError", e)
