# Training a small MLP classifier with an exponential moving average of its weights kept in
# two ways (AveragedModel with get_ema_avg_fn over parameters and buffers, and a hand-written
# EMA dict), a SWA phase under SWALR followed by update_bn, then a checkpoint of
# model + optimizer + scheduler + EMA + RNG state, and a resumed run that must match exactly.
import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(48, 12)
labels = (images.mean(dim=1) > 0).long() + (images[:, 0] > 1).long()
data = TensorDataset(images, labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 16)
        self.bn = nn.BatchNorm1d(16)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.drop(F.relu(self.bn(self.fc(x)))))


def build():
    torch.manual_seed(1)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    ema = AveragedModel(model, avg_fn=get_ema_avg_fn(0.9), use_buffers=True)
    return model, opt, sched, ema


def epoch(model, opt, ema, loader, manual=None):
    model.train()
    total = 0.0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        ema.update_parameters(model)
        if manual is not None:
            with torch.no_grad():
                for k, v in model.state_dict().items():
                    if v.dtype.is_floating_point:
                        manual[k].mul_(0.9).add_(v, alpha=0.1)
                    else:
                        manual[k].copy_(v)
        total += loss.item()
    return total / len(loader)


def accuracy(net):
    net.eval()
    with torch.no_grad():
        return (net(images).argmax(1) == labels).float().mean().item()


model, opt, sched, ema = build()
print("ema keys", list(ema.state_dict())[:3], "...", list(ema.state_dict())[-2:])
print("n_averaged", ema.n_averaged, ema.module.bn.running_mean.requires_grad)
manual = {k: v.detach().clone() for k, v in model.state_dict().items()}
gen = torch.Generator().manual_seed(5)
loader = DataLoader(data, batch_size=16, shuffle=True, generator=gen)
for ep in range(2):
    loss = epoch(model, opt, ema, loader, manual)
    sched.step()
    print(f"epoch {ep} loss {loss:.5f} lr {sched.get_last_lr()[0]} n_averaged {int(ema.n_averaged)}")
# the first update copies the weights, later ones blend, so the hand-written EMA differs
# only by its starting point
diff = (ema.module.fc.weight - manual["fc.weight"]).abs().max().item()
print(f"ema vs manual max diff {diff:.5f}", ema.module.bn.num_batches_tracked.item(),
      manual["bn.num_batches_tracked"].item())
print(f"running_mean ema {ema.module.bn.running_mean.sum().item():.5f} "
      f"model {model.bn.running_mean.sum().item():.5f}")
print(f"acc model {accuracy(model):.4f} ema {accuracy(ema):.4f}")

# checkpoint everything, including the RNG states that dropout and shuffling consume
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "ema": ema.state_dict(), "rng": torch.get_rng_state(),
            "loader_rng": gen.get_state()}, buf)
print("checkpoint bytes > 0", buf.tell() > 0)
print("opt state keys", list(opt.state_dict()["state"])[:3], opt.state_dict()["param_groups"][0]["lr"])

reference = []
for ep in range(2, 4):
    reference.append(epoch(model, opt, ema, loader))
    sched.step()
ref_weights = copy.deepcopy(ema.state_dict())

buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
model2, opt2, sched2, ema2 = build()
model2.load_state_dict(ckpt["model"])
opt2.load_state_dict(ckpt["opt"])
sched2.load_state_dict(ckpt["sched"])
print(ema2.load_state_dict(ckpt["ema"]))
torch.set_rng_state(ckpt["rng"])
gen2 = torch.Generator()
gen2.set_state(ckpt["loader_rng"])
loader2 = DataLoader(data, batch_size=16, shuffle=True, generator=gen2)
resumed = []
for ep in range(2, 4):
    resumed.append(epoch(model2, opt2, ema2, loader2))
    sched2.step()
# the resumed run should repeat the uninterrupted one bit for bit
print("losses", [round(v, 5) for v in reference], [round(v, 5) for v in resumed])
drift = max((ref_weights[k].double() - v.double()).abs().max().item()
            for k, v in ema2.state_dict().items())
print(f"resume max |loss diff| {max(abs(a - b) for a, b in zip(reference, resumed)):.3e} "
      f"max |ema weight diff| {drift:.3e}")
print("lr after resume", sched2.get_last_lr(), opt2.param_groups[0]["initial_lr"])

# SWA phase: constant-then-annealed SWALR, equal averaging, then recompute BN statistics
swa = AveragedModel(model2)
swa_sched = SWALR(opt2, swa_lr=0.02, anneal_epochs=2, anneal_strategy="linear")
for ep in range(3):
    epoch(model2, opt2, swa, loader2)
    swa_sched.step()
    print(f"swa epoch {ep} lr {opt2.param_groups[0]['lr']:.5f} n_averaged {swa.n_averaged.item()}")
before = swa.module.bn.running_var.clone()
update_bn(loader2, swa)
print("bn stats recomputed", not torch.equal(before, swa.module.bn.running_var),
      swa.module.bn.momentum, swa.module.bn.num_batches_tracked)
print(f"acc swa {accuracy(swa):.4f}", swa.module.training, type(swa.module).__name__)
print(swa)
