"""Dataset/DataLoader programs: custom datasets, splits, shuffling, collate, samplers."""
import torch
from torch.utils.data import (DataLoader, Dataset, TensorDataset, random_split, Subset, ConcatDataset,
                              RandomSampler, SequentialSampler, BatchSampler, WeightedRandomSampler,
                              SubsetRandomSampler, default_collate, IterableDataset)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i), float(i) ** 2]), "y": i % 3, "name": f"item{i}"}


class Pairs(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return torch.full((2,), i), (i, float(i) / 2)


ds = Squares(7)
print(len(ds), ds[3])
for batch in DataLoader(ds, batch_size=3):
    print(batch)
for x, (a, b) in DataLoader(Pairs(), batch_size=2):
    print(x, a, b)
torch.manual_seed(0)
for batch in DataLoader(ds, batch_size=2, shuffle=True, drop_last=True):
    print(batch["y"], batch["name"])
torch.manual_seed(0)
loader = DataLoader(ds, batch_size=4, shuffle=True)
print(len(loader), [b["y"].tolist() for b in loader], [b["y"].tolist() for b in loader])

X = torch.arange(20.0).reshape(10, 2)
Y = torch.arange(10)
tds = TensorDataset(X, Y)
print(len(tds), tds[2], tds[1:3])
train, val = random_split(tds, [8, 2], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), train.indices, val.indices, type(train).__name__)
a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print(list(a), list(b), list(c))
for xb, yb in DataLoader(train, batch_size=3):
    print(xb, yb)
g = torch.Generator()
g.manual_seed(3)
print([yb.tolist() for _, yb in DataLoader(tds, batch_size=4, shuffle=True, generator=g)])
sub = Subset(tds, [0, 5, 9])
print(len(sub), sub[1], [y.item() for _, y in sub])
cat = ConcatDataset([sub, Subset(tds, [1])])
print(len(cat), cat[3], cat.cumulative_sizes)

print(list(SequentialSampler(range(4))), list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)))
print(list(BatchSampler(range(7), batch_size=3, drop_last=True)))
torch.manual_seed(5)
print(list(RandomSampler(range(6))), list(RandomSampler(range(6), replacement=True, num_samples=4)))
print(list(RandomSampler(range(5), generator=torch.Generator().manual_seed(9))))
torch.manual_seed(5)
w = WeightedRandomSampler([0.1, 0.1, 0.8], num_samples=8, replacement=True)
print(len(w), list(w))
print(list(WeightedRandomSampler(torch.tensor([1.0, 2.0, 3.0, 4.0]), 3, replacement=False, generator=torch.Generator().manual_seed(2))))
torch.manual_seed(1)
print(list(SubsetRandomSampler([10, 20, 30, 40])))
torch.manual_seed(1)
dl = DataLoader(tds, batch_size=3, sampler=SubsetRandomSampler(range(6)))
print([y.tolist() for _, y in dl])
dl = DataLoader(tds, batch_sampler=BatchSampler(SequentialSampler(tds), 4, False))
print([y.tolist() for _, y in dl], len(dl))
print(default_collate([(1, 2.0, "a"), (3, 4.0, "b")]))
print(default_collate([{"a": torch.ones(2), "b": [1, 2]}, {"a": torch.zeros(2), "b": [3, 4]}]))
print(default_collate([torch.tensor(1), torch.tensor(2)]), default_collate([True, False]))
import numpy as np
print(default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))


def my_collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs).sum(1), list(ys)


print([r for r in DataLoader(tds, batch_size=4, collate_fn=my_collate)])
print(next(iter(DataLoader(tds, batch_size=None)))) 
print([y for _, y in DataLoader(tds, batch_size=5, num_workers=2)])


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(5):
            yield torch.tensor([i, i * 10])


print(list(DataLoader(Stream(), batch_size=2)))
loader = DataLoader(tds, batch_size=4)
print(loader.batch_size, loader.drop_last, type(loader.sampler).__name__, loader.dataset is tds)
