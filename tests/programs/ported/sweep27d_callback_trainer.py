"""A Lightning-free trainer class of the kind small projects grow: callbacks (logging, early
stopping on a validation metric, best-checkpoint saving with torch.save), resuming from the best
checkpoint with torch.load(weights_only=True), and an exact replay of a training step by
restoring torch.get_rng_state / set_rng_state around dropout."""
import io
import math
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._utils import _flatten_dense_tensors
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(7)


class Callback:
    def on_epoch_end(self, trainer, epoch, metrics):
        pass


class PrintLogger(Callback):
    def on_epoch_end(self, trainer, epoch, metrics):
        items = " ".join(f"{k}={v:.4f}" for k, v in sorted(metrics.items()))
        print(f"epoch {epoch} {items}")


class GradNormMonitor(Callback):
    """Global gradient norm of the epoch's last step, from one flat buffer of all grads."""
    def on_epoch_end(self, trainer, epoch, metrics):
        grads = [p.grad for p in trainer.model.parameters() if p.grad is not None]
        flat = _flatten_dense_tensors(grads)
        metrics["grad_norm"] = flat.norm().item()
        if epoch == 0:
            print("flat grads", flat.shape, flat.dtype)


class EarlyStopping(Callback):
    def __init__(self, monitor, patience, min_delta=0.0):
        self.monitor, self.patience, self.min_delta = monitor, patience, min_delta
        self.best, self.bad_epochs = math.inf, 0

    def on_epoch_end(self, trainer, epoch, metrics):
        value = metrics[self.monitor]
        if value < self.best - self.min_delta:
            self.best, self.bad_epochs = value, 0
        else:
            self.bad_epochs += 1
            if self.bad_epochs >= self.patience:
                print(f"early stop at epoch {epoch} (best {self.monitor} {self.best:.4f})")
                trainer.should_stop = True


class BestCheckpoint(Callback):
    def __init__(self, path, monitor):
        self.path, self.monitor, self.best = path, monitor, math.inf
        self.best_epoch = None

    def on_epoch_end(self, trainer, epoch, metrics):
        if metrics[self.monitor] < self.best:
            self.best, self.best_epoch = metrics[self.monitor], epoch
            torch.save({"epoch": epoch, "model": trainer.model.state_dict(),
                        "optim": trainer.optimizer.state_dict(),
                        "metric": torch.tensor(self.best)}, self.path)


class Trainer:
    def __init__(self, model, optimizer, scheduler=None, callbacks=()):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.callbacks, self.should_stop = list(callbacks), False

    def train_epoch(self, loader):
        self.model.train()
        total, count = 0.0, 0
        for xb, yb in loader:
            loss = F.mse_loss(self.model(xb), yb)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            total += loss.item() * len(xb)
            count += len(xb)
        if self.scheduler is not None:
            self.scheduler.step()
        return total / count

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        errs = [F.l1_loss(self.model(xb), yb, reduction="sum") for xb, yb in loader]
        return torch.stack(errs).sum().item() / len(loader.dataset)

    def fit(self, train_loader, val_loader, max_epochs):
        for epoch in range(max_epochs):
            metrics = {"train_mse": self.train_epoch(train_loader),
                       "val_mae": self.evaluate(val_loader),
                       "lr": self.optimizer.param_groups[0]["lr"]}
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch, metrics)
            if self.should_stop:
                break
        return epoch


def make_model():
    return nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Dropout(0.1), nn.Linear(32, 2))


X = torch.randn(96, 4)
W = torch.tensor([[1.0, -2.0], [0.5, 0.0], [0.0, 1.5], [-1.0, 0.25]])
Y = torch.sin(X @ W) + 0.05 * torch.randn(96, 2)
train_set, val_set = random_split(TensorDataset(X, Y), [72, 24],
                                  generator=torch.Generator().manual_seed(1))
print("split", len(train_set), len(val_set), val_set.indices[:5])
train_loader = DataLoader(train_set, batch_size=24, shuffle=True,
                          generator=torch.Generator().manual_seed(2))
val_loader = DataLoader(val_set, batch_size=12)

model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
workdir = tempfile.mkdtemp()
ckpt = BestCheckpoint(os.path.join(workdir, "best.pt"), "val_mae")
trainer = Trainer(model, optimizer, scheduler,
                  [GradNormMonitor(), PrintLogger(), EarlyStopping("val_mae", patience=2, min_delta=1e-3), ckpt])
last = trainer.fit(train_loader, val_loader, max_epochs=14)
print("stopped after", last, "best epoch", ckpt.best_epoch, "best", round(ckpt.best, 4))

# resume from the best checkpoint into a fresh model and optimizer
state = torch.load(ckpt.path, weights_only=True)
print("checkpoint keys", sorted(state), "epoch", state["epoch"], state["metric"].dtype)
print("model keys", list(state["model"].keys()))
print("optim state keys", sorted(state["optim"]["state"][0]), state["optim"]["param_groups"][0]["lr"])
fresh = make_model()
result = fresh.load_state_dict(state["model"])
print("load result", result)
fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.05)
fresh_opt.load_state_dict(state["optim"])
print("restored step", fresh_opt.state[fresh[0].weight]["step"])
resumed = Trainer(fresh, fresh_opt)
print("resumed val_mae", round(resumed.evaluate(val_loader), 4), "saved", round(state["metric"].item(), 4))

# weights_only refuses arbitrary pickled objects
buf = io.BytesIO()
torch.save({"callback": ckpt.__class__}, buf)
buf.seek(0)
try:
    torch.load(buf, weights_only=True)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0][:60])

# replaying a step exactly: same RNG state -> same dropout masks -> same update
fresh.train()
xb, yb = next(iter(train_loader))
rng = torch.get_rng_state()
print("rng state", rng.dtype, rng.shape)
before = {k: v.clone() for k, v in fresh.state_dict().items()}
opt_before = fresh_opt.state_dict()
opt_before = {"state": {k: {n: t.clone() for n, t in s.items()} for k, s in opt_before["state"].items()},
              "param_groups": opt_before["param_groups"]}
loss_a = F.mse_loss(fresh(xb), yb)
fresh_opt.zero_grad()
loss_a.backward()
fresh_opt.step()
after_a = fresh[3].weight.detach().clone()

fresh.load_state_dict(before)
fresh_opt.load_state_dict(opt_before)
torch.set_rng_state(rng)
loss_b = F.mse_loss(fresh(xb), yb)
fresh_opt.zero_grad()
loss_b.backward()
fresh_opt.step()
print("replayed loss equal", loss_a.item() == loss_b.item(), round(loss_a.item(), 5))
print("replayed weights equal", torch.equal(after_a, fresh[3].weight))
print("next draw after restore", torch.rand(3).tolist())
try:
    torch.set_rng_state(rng.float())
except (TypeError, RuntimeError) as e:
    print(type(e).__name__, e)

# RNG states travel in checkpoints too; fork_rng leaves the global stream untouched
gen = torch.Generator().manual_seed(11)
gen.manual_seed(11)
buf = io.BytesIO()
torch.save({"cpu_rng": torch.get_rng_state(), "gen": gen.get_state(), "seed": torch.initial_seed()}, buf)
gen_draw = torch.randn(2, generator=gen)
glob_draw = torch.randn(2)
buf.seek(0)
saved = torch.load(buf, weights_only=True)
print("saved rng", saved["cpu_rng"].dtype, saved["gen"].shape, saved["seed"])
torch.set_rng_state(saved["cpu_rng"])
gen.set_state(saved["gen"])
print("rng restored", torch.equal(torch.randn(2), glob_draw), torch.equal(torch.randn(2, generator=gen), gen_draw))
with torch.random.fork_rng():
    torch.manual_seed(123)
    inner = torch.rand(2)
outer = torch.rand(2)
print("fork_rng", inner.tolist(), outer.tolist())
os.remove(ckpt.path)
os.rmdir(workdir)
