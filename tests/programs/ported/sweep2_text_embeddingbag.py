"""Text classification as in the torchtext tutorial: EmbeddingBag over a flat token list with
offsets (mean/sum/max, per_sample_weights, padding_idx), then a bidirectional two-layer GRU over
packed sequences, with ChainedScheduler(StepLR, ExponentialLR) and a ConstantLR warmup."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
VOCAB, CLASSES = 20, 3
texts = [torch.randint(1, VOCAB, (int(torch.randint(3, 9, (1,))),)) for _ in range(20)]
labels = torch.tensor([int(t.sum()) % CLASSES for t in texts])


def batchify(idx):
    seqs = [texts[i] for i in idx]
    offsets = torch.tensor([0] + [len(s) for s in seqs[:-1]]).cumsum(dim=0)
    return torch.cat(seqs), offsets, labels[idx]


class BagModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.EmbeddingBag(VOCAB, 8, mode="mean")
        self.fc = nn.Linear(8, CLASSES)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


model = BagModel()
print(model)
opt = torch.optim.SGD(model.parameters(), lr=2.0)
sched = torch.optim.lr_scheduler.ChainedScheduler([
    torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5),
    torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)])
perm = torch.randperm(20)
for epoch in range(4):
    tot, acc = 0.0, 0
    for b in range(0, 20, 10):
        text, offsets, y = batchify(perm[b:b + 10])
        out = model(text, offsets)
        loss = F.cross_entropy(out, y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        opt.step()
        tot += loss.item()
        acc += (out.argmax(1) == y).sum().item()
    sched.step()
    print(f"epoch {epoch} loss {tot:.5f} acc {acc} lr {sched.get_last_lr()[0]:.6f}")
print(out.grad_fn.name(), model.embedding.weight.grad.abs().sum() > 0)

bag_sum = nn.EmbeddingBag(6, 3, mode="sum", padding_idx=0)
bag_max = nn.EmbeddingBag(6, 3, mode="max")
with torch.no_grad():
    bag_max.weight.copy_(bag_sum.weight)
inp = torch.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 1]])
print(bag_sum(inp), bag_max(inp))
flat = torch.tensor([1, 2, 4, 5, 4, 3, 2])
offs = torch.tensor([0, 2, 2, 5])
w = torch.rand(7, requires_grad=True)
out = bag_sum(flat, offs, per_sample_weights=w)
print(out)
out.sum().backward()
print(w.grad, bag_sum.weight.grad)
print(bag_max(flat, offs))
inc = nn.EmbeddingBag(6, 3, mode="mean", include_last_offset=True)
print(inc(flat, torch.tensor([0, 2, 5, 7])).shape)
print(F.embedding_bag(flat, bag_sum.weight, offs, mode="mean"))
pre = nn.EmbeddingBag.from_pretrained(torch.arange(12.).view(4, 3), mode="sum")
print(pre(torch.tensor([[0, 3], [2, 2]])), pre.weight.requires_grad)


class GRUClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 6, padding_idx=0)
        self.gru = nn.GRU(6, 5, num_layers=2, batch_first=True, bidirectional=True, dropout=0.0)
        self.fc = nn.Linear(10, CLASSES)

    def forward(self, x, lengths):
        packed = pack_padded_sequence(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
        out, h = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        feat = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(feat), out


gru = GRUClassifier()
print(gru.gru)
opt = torch.optim.Adam(gru.parameters(), lr=0.01)
warm = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
for epoch in range(3):
    tot = 0.0
    for b in range(0, 20, 10):
        idx = perm[b:b + 10]
        seqs = [texts[i] for i in idx]
        lengths = torch.tensor([len(s) for s in seqs])
        x = pad_sequence(seqs, batch_first=True)
        logits, out = gru(x, lengths)
        loss = F.cross_entropy(logits, labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item()
    warm.step()
    print(f"gru epoch {epoch} loss {tot:.5f} lr {opt.param_groups[0]['lr']:.4f}")
print(out.shape, (out[lengths < out.size(1)].abs().sum(-1) == 0).sum().item())
print(logits.grad_fn.name(), out.grad_fn.name())
h0 = torch.zeros(4, 2, 5)
o, h = gru.gru(gru.emb(x[:2]), h0)
print(o.shape, h.shape, f"{o.abs().sum().item():.5f}")
