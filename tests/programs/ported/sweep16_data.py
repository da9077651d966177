"""A text-classification data pipeline: a custom Dataset of variable-length token sequences, a
custom bucketing Sampler, WeightedRandomSampler for class balance, BatchSampler, random_split /
Subset / ConcatDataset with seeded generators, an IterableDataset that shards itself, a
collate_fn with pad_sequence feeding pack_padded_sequence into a GRU, and default_collate of
dicts and tuples, then two training steps."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              Sampler, Subset, WeightedRandomSampler, default_collate, random_split)

torch.manual_seed(0)


class Tokens(Dataset):
    def __init__(self, n, offset=0):
        g = torch.Generator().manual_seed(offset)
        self.items = [torch.randint(1, 9, (2 + (i * 3 + offset) % 4,), generator=g) for i in range(n)]
        self.labels = [int(s.sum()) % 2 for s in self.items]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return {"tokens": self.items[i], "label": self.labels[i]}


class ByLength(Sampler):
    """Indices sorted by length, so each batch needs little padding."""

    def __init__(self, data):
        self.order = sorted(range(len(data)), key=lambda i: (len(data[i]["tokens"]), i))

    def __iter__(self):
        return iter(self.order)

    def __len__(self):
        return len(self.order)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        yield from ((torch.tensor([i, -i]), i % 3) for i in range(self.n) if info is None)


def collate(batch):
    seqs = [b["tokens"] for b in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True), lengths, torch.tensor([b["label"] for b in batch])


data = ConcatDataset([Tokens(8), Tokens(6, offset=1)])
train, val = random_split(data, [0.75, 0.25], generator=torch.Generator().manual_seed(1))
print(len(data), data.cumulative_sizes, len(train), len(val), val.indices)
sub = Subset(train, [0, 2, 4])
print("subset", [sub[i]["tokens"].tolist() for i in range(len(sub))])
print("by length", list(BatchSampler(ByLength(sub), batch_size=2, drop_last=False)))
labels = torch.tensor([train[i]["label"] for i in range(len(train))])
weights = (1.0 / torch.bincount(labels).float())[labels]
sampler = WeightedRandomSampler(weights, num_samples=8, replacement=True,
                                generator=torch.Generator().manual_seed(2))
print("weighted", list(sampler), weights.tolist())

gru = nn.GRU(4, 5, batch_first=True)
emb, head = nn.Embedding(9, 4, padding_idx=0), nn.Linear(5, 2)
opt = torch.optim.Adam([*gru.parameters(), *emb.parameters(), *head.parameters()], lr=0.05)
loader = DataLoader(train, batch_size=4, sampler=sampler, collate_fn=collate, drop_last=True)
for step, (padded, lengths, y) in enumerate(loader):
    packed = pack_padded_sequence(emb(padded), lengths, batch_first=True, enforce_sorted=False)
    out, h = gru(packed)
    unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
    loss = nn.functional.cross_entropy(head(h[-1]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, tuple(padded.shape), lengths.tolist(), packed.batch_sizes.tolist(),
          tuple(unpacked.shape), f"{loss.item():.5f}")

shuffled = DataLoader(val, batch_size=2, shuffle=True, generator=torch.Generator().manual_seed(3),
                      collate_fn=collate, num_workers=0)
for epoch in range(2):
    print("epoch", epoch, [b[2].tolist() for b in shuffled])
for xs, ys in DataLoader(Stream(5), batch_size=2):
    print("stream", xs.tolist(), ys)
print(default_collate([{"a": torch.ones(2), "b": (1, 2.5)}, {"a": torch.zeros(2), "b": (3, 4.5)}]))
print(default_collate([(torch.tensor(1), "x"), (torch.tensor(2), "y")]))
