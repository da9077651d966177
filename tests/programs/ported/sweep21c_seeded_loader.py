"""Reproducible data loading as training scripts set it up: a seed_worker function passed as
worker_init_fn (only workers call it, so with num_workers=0 it never runs), get_worker_info in
the main process, an IterableDataset that shards by worker info, shuffling without a generator
(the loader then draws from the global RNG: the same global seed gives the same order and
later draws move on), a length-bucketing BatchSampler subclass, WeightedRandomSampler without
replacement, a collate_fn with pad_sequence (batch_first, padding_value, left padding) and
lengths, and the errors of misconfigured loaders."""
import random

import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, RandomSampler,
                              Sampler, SequentialSampler, WeightedRandomSampler, get_worker_info)

calls = []


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2 ** 32
    random.seed(worker_seed)
    calls.append(worker_id)


class Sentences(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        lengths = torch.randint(2, 7, (n,), generator=g)
        self.items = [torch.randint(1, 50, (int(k),), generator=g) for k in lengths]
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], self.labels[i]


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.stack(labels)


data = Sentences(12)
print([len(s) for s in data.items], data.labels.tolist())
print(get_worker_info())

torch.manual_seed(0)
loader = DataLoader(data, batch_size=4, shuffle=True, collate_fn=collate,
                    worker_init_fn=seed_worker, num_workers=0)
epoch1 = [b[1].tolist() for b in loader]
after = torch.rand(1)
torch.manual_seed(0)
epoch1_again = [b[1].tolist() for b in loader]
print(epoch1, epoch1 == epoch1_again, torch.equal(after, torch.rand(1)), calls)
epoch2 = [b[1].tolist() for b in loader]
print(epoch2 != epoch1)
padded, lengths, labels = next(iter(loader))
print(padded.shape, padded.dtype, lengths, labels)
print(padded)

# a seeded generator gives the same order whatever the global RNG does
g = torch.Generator()
g.manual_seed(42)
ordered = DataLoader(data, batch_size=5, shuffle=True, generator=g, collate_fn=collate,
                     drop_last=True)
first = [b[2].tolist() for b in ordered]
g.manual_seed(42)
torch.manual_seed(1234)
print(first, first == [b[2].tolist() for b in ordered], len(ordered))

# left padding for a decoder-only model, and padding_value=-100 for labels
seqs = [data[i][0] for i in range(3)]
print(pad_sequence(seqs, batch_first=True, padding_value=-100, padding_side="left"))
print(pad_sequence(seqs).shape, pad_sequence(seqs, padding_side="right").shape)


class BucketBatchSampler(BatchSampler):
    """Batches of similar length: sort a shuffled chunk by length, then cut it."""

    def __init__(self, lengths, batch_size, generator):
        super().__init__(RandomSampler(range(len(lengths)), generator=generator), batch_size,
                         drop_last=False)
        self.lengths = lengths

    def __iter__(self):
        order = list(self.sampler)
        order.sort(key=lambda i: self.lengths[i])
        batches = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for j in torch.randperm(len(batches), generator=self.sampler.generator).tolist():
            yield batches[j]


bucket = BucketBatchSampler([len(s) for s in data.items], 4, torch.Generator().manual_seed(3))
print(len(bucket), list(bucket))
for padded, lengths, labels in DataLoader(data, batch_sampler=bucket, collate_fn=collate):
    print(tuple(padded.shape), lengths.tolist(), (padded == 0).sum().item())

weights = torch.tensor([0.5 if y == 0 else 2.0 for y in data.labels.tolist()])
wsampler = WeightedRandomSampler(weights, num_samples=8, replacement=False,
                                 generator=torch.Generator().manual_seed(9))
picked = list(wsampler)
print(picked, len(set(picked)), sum(data.labels[i].item() for i in picked))
try:
    WeightedRandomSampler(weights, num_samples=20, replacement=False)
    list(WeightedRandomSampler(weights, num_samples=20, replacement=False))
except RuntimeError as e:
    print("RuntimeError:", e)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            yield torch.tensor([i, i * i])


print([b.tolist() for b in DataLoader(Stream(5), batch_size=2)])
print([b.shape for b in DataLoader(Stream(5), batch_size=2, drop_last=True)])


class EveryOther(Sampler):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(0, self.n, 2))

    def __len__(self):
        return (self.n + 1) // 2

    def __repr__(self):
        return f"EveryOther({self.n})"


print([b[2].tolist() for b in DataLoader(data, batch_size=3, sampler=EveryOther(len(data)),
                                          collate_fn=collate)])
print(list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)))

bad = [
    lambda: DataLoader(data, sampler=EveryOther(12), shuffle=True),
    lambda: DataLoader(data, batch_sampler=bucket, batch_size=4),
    lambda: DataLoader(data, batch_size=2, prefetch_factor=2),
    lambda: DataLoader(data, persistent_workers=True),
    lambda: DataLoader(data, num_workers=-1),
    lambda: DataLoader(Stream(4), shuffle=True),
    lambda: DataLoader(Stream(4), sampler=EveryOther(4)),
    lambda: BatchSampler(SequentialSampler(range(4)), 0, False),
    lambda: RandomSampler(range(4), num_samples=0),
    lambda: len(DataLoader(Stream(4))),
]
for make in bad:
    try:
        make()
        print("no error")
    except (ValueError, TypeError) as e:
        print(type(e).__name__ + ":", e)
