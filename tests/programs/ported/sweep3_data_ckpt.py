"""Training pipeline: custom Dataset, random_split with a generator, WeightedRandomSampler /
SubsetRandomSampler / BatchSampler, custom collate_fn returning dicts, gradient accumulation,
checkpoint (model + optimizer + scheduler + RNG state) saved to io.BytesIO and resumed exactly."""
import io
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (Dataset, DataLoader, random_split, WeightedRandomSampler,
                              SubsetRandomSampler, BatchSampler, SequentialSampler, TensorDataset,
                              ConcatDataset, Subset)

torch.manual_seed(0)


class Points(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 4)
        self.y = (self.x[:, 0] + self.x[:, 1] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i], "idx": i}


def collate(batch):
    return {"x": torch.stack([b["x"] for b in batch]), "y": torch.stack([b["y"] for b in batch]),
            "idx": torch.tensor([b["idx"] for b in batch])}


ds = Points(40)
train, val = random_split(ds, [30, 10], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), train.indices[:8], val.indices)
parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print([list(p) for p in parts])
counts = torch.bincount(ds.y)
weights = (1.0 / counts.float())[ds.y[train.indices]]
sampler = WeightedRandomSampler(weights, num_samples=30, replacement=True, generator=torch.Generator().manual_seed(3))
print(list(sampler)[:10])
loader = DataLoader(train, batch_size=8, sampler=sampler, collate_fn=collate)
print(len(loader))
b0 = next(iter(loader))
print(b0["x"].shape, b0["y"], b0["idx"])
print(list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)))
print(list(SubsetRandomSampler([5, 6, 7, 8], generator=torch.Generator().manual_seed(0))))
dl = DataLoader(TensorDataset(torch.arange(10.), torch.arange(10) % 3), batch_size=4, shuffle=True, drop_last=True)
for xb, yb in dl:
    print(xb, yb)
cat = ConcatDataset([TensorDataset(torch.arange(3)), TensorDataset(torch.arange(10, 14))])
print(len(cat), cat[4], cat.cumulative_sizes, Subset(cat, [0, 6])[1])

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=1e-4)
ACC = 2


def train_epoch(epoch):
    model.train()
    total = 0.0
    for i, batch in enumerate(loader):
        loss = F.cross_entropy(model(batch["x"]), batch["y"]) / ACC
        loss.backward()
        total += loss.item()
        if (i + 1) % ACC == 0 or i + 1 == len(loader):
            opt.step()
            opt.zero_grad()
    sched.step()
    return total


for epoch in range(3):
    print(f"epoch {epoch} loss {train_epoch(epoch):.5f} lr {sched.get_last_lr()[0]:.6f}")

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "epoch": 3, "rng": torch.get_rng_state(), "sampler_rng": sampler.generator.get_state()}, buf)
print(buf.tell() > 0)
after = [train_epoch(e) for e in range(3, 5)]
print([round(a, 5) for a in after])

buf.seek(0)
ck = torch.load(buf, weights_only=True)
print(sorted(ck.keys()), ck["epoch"], ck["rng"].dtype, ck["rng"].shape)
print(list(ck["opt"]["state"][0].keys()), ck["opt"]["param_groups"][0]["lr"])
model2 = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
print(model2.load_state_dict(ck["model"]))
model, opt.param_groups[0]["params"] = model2, list(model2.parameters())
opt = torch.optim.Adam(model.parameters(), lr=0.01)
opt.load_state_dict(ck["opt"])
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, eta_min=1e-4)
sched.load_state_dict(ck["sched"])
torch.set_rng_state(ck["rng"])
sampler.generator.set_state(ck["sampler_rng"])
again = [train_epoch(e) for e in range(3, 5)]
print([round(a, 5) for a in again], all(abs(a - b) < 1e-6 for a, b in zip(after, again)))
model.eval()
with torch.no_grad():
    vx = torch.stack([val[i]["x"] for i in range(len(val))])
    vy = torch.stack([val[i]["y"] for i in range(len(val))])
    acc = (model(vx).argmax(1) == vy).float().mean()
print("val acc", acc.item())
res = model.load_state_dict({k: v for k, v in ck["model"].items() if "2." not in k}, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    model.load_state_dict({"0.weight": torch.zeros(3, 3)}, strict=False)
except Exception as e:
    print(type(e).__name__, e)
