# A regression trainer that is stopped and resumed: fractional random_split, an imbalanced
# WeightedRandomSampler, a BatchSampler feeding a dict collate_fn, an IterableDataset for
# validation, ReduceLROnPlateau (max mode, cooldown) next to OneCycleLR / SequentialLR /
# ChainedScheduler, and a checkpoint holding model, optimizer, schedulers and RNG states that
# must reproduce the uninterrupted run exactly.
import io

import torch
import torch.nn as nn
from torch.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset,
                              RandomSampler, StackDataset, WeightedRandomSampler, random_split)
from torch.optim import lr_scheduler as S

torch.manual_seed(0)


class Points(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 4)
        self.y = (self.x @ torch.tensor([1.0, -2.0, 0.5, 0.0]) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i], "idx": i}


class Stream(IterableDataset):
    def __init__(self, xs, ys, chunk):
        self.xs, self.ys, self.chunk = xs, ys, chunk

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        assert info is None
        for s in range(0, len(self.xs), self.chunk):
            yield self.xs[s:s + self.chunk], self.ys[s:s + self.chunk]


def collate(items):
    return {"x": torch.stack([it["x"] for it in items]),
            "y": torch.tensor([it["y"] for it in items]),
            "idx": [it["idx"] for it in items]}


full = Points(40)
train, val = random_split(full, [0.75, 0.25], generator=torch.Generator().manual_seed(1))
print(len(train), len(val), val.indices[:5], type(train).__name__)
labels = full.y[train.indices]
weights = torch.where(labels == 1, 1.0, 3.0).double()
print(labels.bincount(), weights.dtype, weights[:4])


def make(seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    onecycle = S.OneCycleLR(opt, max_lr=0.3, total_steps=12, pct_start=0.3,
                            anneal_strategy="linear", three_phase=True, cycle_momentum=True)
    return model, opt, onecycle


def loader(gen):
    sampler = WeightedRandomSampler(weights, num_samples=24, replacement=True, generator=gen)
    batches = BatchSampler(sampler, batch_size=8, drop_last=True)
    return DataLoader(train, batch_sampler=batches, collate_fn=collate)


def run_epoch(model, opt, sched, dl, log):
    for b in dl:
        loss = nn.functional.cross_entropy(model(b["x"]), b["y"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        log.append((round(loss.item(), 5), b["idx"][:3], opt.param_groups[0]["lr"],
                    opt.param_groups[0]["momentum"]))


val_x = torch.stack([full[i]["x"] for i in val.indices])
val_y = full.y[val.indices]


def evaluate(model):
    correct = 0
    with torch.no_grad():
        for xb, yb in DataLoader(Stream(val_x, val_y, 4), batch_size=None):
            correct += (model(xb).argmax(1) == yb).sum().item()
    return correct / len(val_y)


# the uninterrupted run
gen = torch.Generator().manual_seed(7)
model, opt, sched = make(3)
dl = loader(gen)
print(len(dl), type(dl.batch_sampler).__name__, dl.batch_size)
ref = []
for epoch in range(4):
    run_epoch(model, opt, sched, dl, ref)
for row in ref:
    print(row[0], row[1], f"{row[2]:.6f}", f"{row[3]:.5f}")
print("acc", evaluate(model), sched.last_epoch, sched.get_last_lr())

# stop after two epochs, checkpoint to a buffer, resume in fresh objects
gen = torch.Generator().manual_seed(7)
model, opt, sched = make(3)
dl = loader(gen)
log = []
for epoch in range(2):
    run_epoch(model, opt, sched, dl, log)
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "gen": gen.get_state(), "rng": torch.get_rng_state(), "epoch": 2}, buf)
print("checkpoint bytes > 0", buf.tell() > 0, sorted(sched.state_dict())[:4])
buf.seek(0)
ck = torch.load(buf, weights_only=True)
model2, opt2, sched2 = make(99)
model2.load_state_dict(ck["model"])
opt2.load_state_dict(ck["opt"])
sched2.load_state_dict(ck["sched"])
gen2 = torch.Generator()
gen2.set_state(ck["gen"])
torch.set_rng_state(ck["rng"])
print(ck["gen"].dtype, ck["gen"].shape, ck["epoch"], opt2.state_dict()["param_groups"][0]["lr"])
dl2 = loader(gen2)
for epoch in range(2):
    run_epoch(model2, opt2, sched2, dl2, log)
print("resumed matches", [r[:2] for r in log] == [r[:2] for r in ref],
      all(abs(a[2] - b[2]) < 1e-12 for a, b in zip(log, ref)))
print(opt2.state[opt2.param_groups[0]["params"][0]]["momentum_buffer"].shape)

# ReduceLROnPlateau watching validation accuracy
opt = torch.optim.Adam(model.parameters(), lr=0.01)
plateau = S.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, threshold=0.05,
                              threshold_mode="abs", cooldown=1, min_lr=1e-3)
for acc in [0.5, 0.6, 0.62, 0.61, 0.6, 0.7, 0.69, 0.68, 0.67, 0.66]:
    plateau.step(acc)
    print(acc, plateau.get_last_lr(), plateau.num_bad_epochs, plateau.cooldown_counter,
          plateau.best)
print(sorted(plateau.state_dict()))

# SequentialLR and ChainedScheduler on a toy parameter
p = nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=1.0)
seq = S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.25, total_iters=2),
                           S.ExponentialLR(opt, gamma=0.8)], milestones=[3])
lrs = []
for _ in range(6):
    opt.step()
    seq.step()
    lrs.append(round(seq.get_last_lr()[0], 6))
print("sequential", lrs)
opt = torch.optim.SGD([p], lr=1.0)
chain = S.ChainedScheduler([S.LinearLR(opt, start_factor=0.1, total_iters=3),
                            S.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)], optimizer=opt)
lrs = []
for _ in range(6):
    opt.step()
    chain.step()
    lrs.append(round(chain.get_last_lr()[0], 6))
print("chained", lrs, [type(s).__name__ for s in chain._schedulers])

# StackDataset + RandomSampler with num_samples
pairs = StackDataset(a=torch.arange(6), b=torch.arange(6) * 10)
dl = DataLoader(pairs, batch_size=2, sampler=RandomSampler(pairs, num_samples=4,
                                                           generator=torch.Generator().manual_seed(5)))
print(len(pairs), pairs[2], [batch for batch in dl])
