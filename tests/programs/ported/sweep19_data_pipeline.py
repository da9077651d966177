# torch.utils.data plumbing as training scripts use it: datasets composed from pieces, samplers
# driven by explicit generators, auto-batching off, custom and default collation, and the
# errors a misconfigured DataLoader raises.
import collections

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              IterableDataset, RandomSampler, SequentialSampler, StackDataset,
                              Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler,
                              default_collate, random_split)
from torch.utils.data.dataloader import default_convert

torch.manual_seed(0)
Pair = collections.namedtuple("Pair", ["x", "y"])


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([i, i * i], dtype=torch.float32), "id": i, "name": f"s{i}"}


class Stream(IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))


ds = Squares(7)
batch = next(iter(DataLoader(ds, batch_size=3)))
print(sorted(batch), batch["x"], batch["id"], batch["name"])
print(len(DataLoader(ds, batch_size=3)), len(DataLoader(ds, batch_size=3, drop_last=True)))

# no auto-batching: samples come one at a time, converted but not stacked
for item in DataLoader(TensorDataset(torch.arange(3.)), batch_size=None):
    print("unbatched", item)
print(default_convert([np.arange(3), (1.5, np.float64(2.0))]))
print(default_collate([Pair(1, 2.5), Pair(3, 4.5)]))
print(default_collate([(np.array([1, 2]), True), (np.array([3, 4]), False)]))

chained = ChainDataset([Stream(0, 3), Stream(10, 12)])
print("chain", list(chained), [b.tolist() for b in DataLoader(chained, batch_size=2)])
try:
    len(chained)
except TypeError as e:
    print("TypeError", e)

stacked = StackDataset(a=TensorDataset(torch.arange(4)), b=Squares(4))
print("stack", len(stacked), stacked[2]["a"], stacked[2]["b"]["name"])
tupled = StackDataset(TensorDataset(torch.arange(3)), torch.arange(3) * 10)
print("stack tuple", tupled[1], next(iter(DataLoader(tupled, batch_size=3))))
try:
    StackDataset(TensorDataset(torch.arange(3)), torch.arange(4))
except ValueError as e:
    print("ValueError", e)

cat = ConcatDataset([TensorDataset(torch.arange(3)), TensorDataset(torch.arange(100, 105))])
print("concat", len(cat), cat.cumulative_sizes, cat[4], cat[-1])
g = torch.Generator().manual_seed(42)
train, val = random_split(range(10), [0.7, 0.3], generator=g)
print("split", type(train).__name__, list(train), list(val))
sub = Subset(cat, [0, 5, 7])
print("subset", [sub[i][0].item() for i in range(len(sub))])

print("seq", list(SequentialSampler(range(5))))
print("rand", list(RandomSampler(range(5), generator=torch.Generator().manual_seed(1))))
print("rand repl", list(RandomSampler(range(5), replacement=True, num_samples=8,
                                      generator=torch.Generator().manual_seed(2))))
print("subset rand", list(SubsetRandomSampler([10, 20, 30, 40],
                                              generator=torch.Generator().manual_seed(3))))
w = WeightedRandomSampler([0.1, 0.0, 0.9, 0.5], 6, generator=torch.Generator().manual_seed(4))
print("weighted", list(w), len(w))
print("batches", list(BatchSampler(range(7), 3, drop_last=False)),
      list(BatchSampler(range(7), 3, drop_last=True)), len(BatchSampler(range(7), 3, True)))

# variable-length sequences: sort-by-length batches, pad in a custom collate_fn
seqs = [torch.randint(1, 9, (n,)) for n in (3, 5, 2, 4, 1)]


def pad_collate(items):
    lens = torch.tensor([len(s) for s in items])
    return pad_sequence(items, batch_first=True, padding_value=0), lens


order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
loader = DataLoader([seqs[i] for i in order], batch_size=2, collate_fn=pad_collate)
for padded, lens in loader:
    print("padded", padded.tolist(), lens, (padded != 0).sum(1).eq(lens).all().item())

gen = torch.Generator().manual_seed(5)
loader = DataLoader(TensorDataset(torch.arange(6)), batch_size=4, shuffle=True, generator=gen)
print("epochs", [[b[0].tolist() for b in loader] for _ in range(2)])
loader = DataLoader(range(6), batch_sampler=BatchSampler(SequentialSampler(range(6)), 4, False))
print("batch_sampler", [b.tolist() for b in loader], len(loader))

errors = [
    lambda: DataLoader(range(4), sampler=SequentialSampler(range(4)), shuffle=True),
    lambda: DataLoader(range(4), batch_sampler=BatchSampler(range(4), 2, False), batch_size=2),
    lambda: DataLoader(range(4), batch_size=None, drop_last=True),
    lambda: DataLoader(Stream(0, 3), shuffle=True),
    lambda: default_collate([torch.zeros(2), torch.zeros(3)]),
    lambda: random_split(range(5), [3, 3]),
    lambda: WeightedRandomSampler([0.5, 0.5], 0),
    lambda: BatchSampler(range(3), 0, False),
]
for f in errors:
    try:
        f()
        print("no error")
    except (ValueError, RuntimeError, TypeError) as e:
        print(type(e).__name__, e)
