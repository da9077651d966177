"""Mid-epoch checkpoint and exact resume: a Dataset whose augmentation is seeded per epoch and
item (so skipped batches draw nothing), a
DataLoader shuffled by its own torch.Generator, dropout, a noise Generator inside the model,
SGD with Nesterov momentum and CosineAnnealingWarmRestarts. The checkpoint holds model,
optimizer and scheduler state_dicts with torch.get_rng_state() and both generators' states,
goes through torch.save to BytesIO and torch.load with several map_location forms and
weights_only=True; the resumed run (skipping the batches already seen this epoch) must give the
uninterrupted run's losses bit for bit."""
import io
import pickle

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class NoisyPoints(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(123)
        self.x = torch.randn(n, 4, generator=g)
        self.y = (self.x[:, 0] - 2 * self.x[:, 1] > 0).long()
        self.epoch = 0

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(1000 * self.epoch + i)
        return self.x[i] + 0.05 * torch.randn(4, generator=g), self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2))
        self.noise = torch.Generator().manual_seed(7)

    def forward(self, x):
        if self.training:
            x = x + 0.01 * torch.randn(x.shape, generator=self.noise)
        return self.body(x)


def build(seed):
    torch.manual_seed(seed)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True,
                          weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2,
                                                                 eta_min=0.01)
    loader_gen = torch.Generator().manual_seed(2024)
    loader = DataLoader(NoisyPoints(40), batch_size=8, shuffle=True, generator=loader_gen)
    return model, opt, sched, loader


def run_epochs(model, opt, sched, loader, epochs, start_epoch=0, skip=0, stop_at=None):
    losses, ckpt = [], None
    for epoch in range(start_epoch, epochs):
        epoch_state = loader.generator.get_state()   # this epoch's shuffle starts here
        loader.dataset.epoch = epoch
        for step, (xb, yb) in enumerate(loader):
            if epoch == start_epoch and step < skip:
                continue
            model.train()
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step(epoch + (step + 1) / len(loader))
            losses.append(loss.item())
            if stop_at == (epoch, step):
                ckpt = {"model": model.state_dict(), "optim": opt.state_dict(),
                        "sched": sched.state_dict(), "epoch": epoch, "step": step + 1,
                        "rng": torch.get_rng_state(), "loader_rng": epoch_state,
                        "noise_rng": model.noise.get_state()}
                buf = io.BytesIO()
                torch.save(ckpt, buf)
                return losses, buf
    return losses, ckpt


model, opt, sched, loader = build(0)
print(len(loader), loader.batch_size, type(loader.sampler).__name__,
      loader.generator.initial_seed())
full, _ = run_epochs(model, opt, sched, loader, 3)
print([round(v, 6) for v in full])
print(sched.get_last_lr(), sched.T_cur, sched.T_i)

model, opt, sched, loader = build(0)
first, buf = run_epochs(model, opt, sched, loader, 3, stop_at=(1, 2))
print(len(first), first == full[:len(first)], buf.getbuffer().nbytes > 1000)

loaded = []
for loc in ["cpu", torch.device("cpu"), lambda storage, location: storage, {"cpu": "cpu"}]:
    buf.seek(0)
    loaded.append(torch.load(buf, map_location=loc, weights_only=True))
ckpt = loaded[0]
print(sorted(ckpt), ckpt["epoch"], ckpt["step"])
print(ckpt["rng"].dtype, ckpt["rng"].shape, ckpt["loader_rng"].dtype, ckpt["noise_rng"].shape)
print(all(torch.equal(c["rng"], ckpt["rng"]) for c in loaded),
      all(torch.equal(c["model"]["body.0.weight"], ckpt["model"]["body.0.weight"]) for c in loaded))
print(ckpt["optim"]["param_groups"][0]["nesterov"], ckpt["optim"]["param_groups"][0]["lr"],
      sorted(ckpt["optim"]["state"][0]))
print({k: v for k, v in ckpt["sched"].items() if k != "_last_lr"})

# resume: fresh objects (different seed), everything restored from the checkpoint
model, opt, sched, loader = build(99)
model.load_state_dict(ckpt["model"])
opt.load_state_dict(ckpt["optim"])
sched.load_state_dict(ckpt["sched"])
torch.set_rng_state(ckpt["rng"])
model.noise.set_state(ckpt["noise_rng"])
loader.generator.set_state(ckpt["loader_rng"])
rest, _ = run_epochs(model, opt, sched, loader, 3, start_epoch=ckpt["epoch"],
                     skip=ckpt["step"])
resumed = first + rest
print(len(resumed), resumed == full)
print([i for i, (a, b) in enumerate(zip(resumed, full)) if a != b][:5])

# what weights_only refuses, and the state of the generators
buf2 = io.BytesIO()
torch.save({"net": model}, buf2)
buf2.seek(0)
try:
    torch.load(buf2, weights_only=True)
except pickle.UnpicklingError as e:
    print("UnpicklingError:", str(e).splitlines()[0])
buf2.seek(0)
print(type(torch.load(buf2, weights_only=False)["net"]).__name__)
g = torch.Generator()
g.manual_seed(5)
state = g.get_state()
a = torch.rand(3, generator=g)
g.set_state(state)
print(torch.equal(a, torch.rand(3, generator=g)), g.initial_seed(), state.dtype)
with torch.random.fork_rng():
    torch.manual_seed(1)
    inner = torch.rand(2)
print(inner, torch.initial_seed())
try:
    g.set_state(torch.zeros(10, dtype=torch.uint8))
except RuntimeError as e:
    print("RuntimeError:", e)

# RNG states kept in a JSON log come back as lists; seeds drawn with NumPy are np.int64
import json

import numpy as np

logged = json.loads(json.dumps({"rng": state.tolist(), "seed": 17}))
for bad in [logged["rng"], np.array(logged["rng"], dtype=np.uint8), state.long()]:
    try:
        g.set_state(bad)
    except TypeError as e:
        print("TypeError:", e)
g.set_state(torch.tensor(logged["rng"], dtype=torch.uint8))
print(torch.equal(a, torch.rand(3, generator=g)))
seed = np.random.default_rng(0).integers(0, 2 ** 31)
try:
    torch.Generator().manual_seed(seed)
except TypeError as e:
    print("TypeError:", e)
print(torch.Generator().manual_seed(int(seed)).initial_seed(), torch.manual_seed(seed).initial_seed())
for bad_seed in [2 ** 64, "42"]:
    try:
        torch.Generator().manual_seed(bad_seed)
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__ + ":", e)
torch.manual_seed(logged["seed"])
print(torch.initial_seed(), torch.randint(0, 100, (3,)))
