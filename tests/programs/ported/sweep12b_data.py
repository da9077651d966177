"""A data pipeline: a map-style Dataset of variable-length sequences with a custom collate_fn
that pads to the batch max, an IterableDataset, default_collate on dicts / tuples /
namedtuples, random_split and SubsetRandomSampler driven by a seeded torch.Generator,
ConcatDataset, BatchSampler(drop_last=True) and DataLoader(shuffle=True, generator=g,
drop_last=True); prints each batch's shapes and first values."""
from collections import namedtuple

import torch
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              SequentialSampler, SubsetRandomSampler, TensorDataset, random_split)
from torch.utils.data import default_collate

torch.manual_seed(0)
Pair = namedtuple("Pair", ["feature", "label"])


class Sequences(Dataset):
    def __init__(self, n):
        self.items = [torch.arange(1, 2 + i % 4) * (i + 1) for i in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], i % 2


class Counter(IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        for i in range(self.start, self.end):
            yield {"x": torch.tensor([i, i * i]), "y": float(i)}


def pad_collate(batch):
    seqs, labels = zip(*batch)
    longest = max(len(s) for s in seqs)
    out = torch.zeros(len(seqs), longest, dtype=seqs[0].dtype)
    for row, s in enumerate(seqs):
        out[row, : len(s)] = s
    return out, torch.tensor([len(s) for s in seqs]), torch.tensor(labels)


data = Sequences(10)
g = torch.Generator().manual_seed(42)
loader = DataLoader(data, batch_size=3, shuffle=True, generator=g, drop_last=True,
                    collate_fn=pad_collate)
print("batches", len(loader))
for epoch in range(2):
    for padded, lengths, labels in loader:
        print(epoch, tuple(padded.shape), lengths.tolist(), labels.tolist(), padded[0].tolist())

for batch in DataLoader(Counter(0, 5), batch_size=2):
    print("iterable", batch["x"].tolist(), batch["y"], batch["y"].dtype)

print(default_collate([{"a": torch.ones(2), "b": 1, "c": "s"},
                       {"a": torch.zeros(2), "b": 2, "c": "t"}]))
print(default_collate([(1.5, torch.tensor([1, 2])), (2.5, torch.tensor([3, 4]))]))
print(default_collate([Pair(torch.tensor(1.0), 0), Pair(torch.tensor(2.0), 1)]))
print(default_collate([[1, 2], [3, 4]]), default_collate([True, False]))

fn_map = dict(torch.utils.data._utils.collate.default_collate_fn_map)
fn_map[str] = lambda batch, *, collate_fn_map: "|".join(batch)  # join strings instead of a list
print(torch.utils.data._utils.collate.collate([("a", torch.ones(2)), ("b", torch.zeros(2))],
                                              collate_fn_map=fn_map))

train, val = random_split(data, [7, 3], generator=torch.Generator().manual_seed(1))
print("split", train.indices, val.indices, len(train), train[0][0].tolist())
parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(2))
print("fractions", [list(p) for p in parts])
sampler = SubsetRandomSampler(list(range(0, 10, 2)), generator=torch.Generator().manual_seed(3))
print("subset sampler", list(sampler), list(sampler))
print("batch sampler", list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)),
      list(BatchSampler(range(7), 3, drop_last=False)))

tensors = TensorDataset(torch.arange(8.0).reshape(4, 2), torch.tensor([0, 1, 0, 1]))
both = ConcatDataset([tensors, TensorDataset(torch.full((2, 2), -1.0), torch.tensor([5, 5]))])
print("concat", len(both), both.cumulative_sizes, both[4], both[-1][1])
for x, y in DataLoader(both, batch_size=4, sampler=SubsetRandomSampler(range(6),
                       generator=torch.Generator().manual_seed(4))):
    print("concat batch", x.shape, x[:, 0].tolist(), y.tolist())
sampled = DataLoader(data, batch_sampler=BatchSampler(range(10), 4, drop_last=True),
                     collate_fn=pad_collate)
print([tuple(b[0].shape) for b in sampled])
try:
    random_split(data, [5, 4])
except ValueError as e:
    print("ValueError", e)
try:
    default_collate([torch.ones(2), torch.ones(3)])
except RuntimeError as e:
    print("RuntimeError", e)
