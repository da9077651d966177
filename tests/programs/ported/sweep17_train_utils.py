"""Training utilities: parameter groups with and without weight decay, add_param_group,
OneCycleLR, SequentialLR of LinearLR and CosineAnnealingWarmRestarts, get_last_lr(),
clip_grad_norm_ (error_if_nonfinite) and clip_grad_value_, a checkpoint of model, optimizer and
schedulers through torch.save/torch.load on BytesIO, parameters_to_vector/vector_to_parameters,
and early stopping on a plateau."""
import io

import torch
import torch.nn as nn
from torch.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                            vector_to_parameters)
from torch.optim.lr_scheduler import (CosineAnnealingWarmRestarts, LinearLR, OneCycleLR,
                                      SequentialLR)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.ReLU(), nn.Linear(6, 1))
decay = [p for n, p in model.named_parameters() if p.ndim > 1]
no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
print(len(decay), len(no_decay), parameters_to_vector(model.parameters()).shape)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0}], lr=0.01)
extra = nn.Parameter(torch.zeros(3))
opt.add_param_group({"params": [extra], "lr": 0.05})
print([(len(g["params"]), g["lr"], g["weight_decay"]) for g in opt.param_groups])
warm = LinearLR(opt, start_factor=0.25, total_iters=2)
cos = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=1e-4)
sched = SequentialLR(opt, [warm, cos], milestones=[2])
x, y = torch.randn(8, 4), torch.randn(8, 1)

best, bad, patience = float("inf"), 0, 2
for epoch in range(7):
    loss = nn.functional.mse_loss(model(x), y) + (extra ** 2).sum()
    opt.zero_grad()
    loss.backward()
    norm = clip_grad_norm_(model.parameters(), max_norm=0.5, error_if_nonfinite=True)
    clip_grad_value_(model.parameters(), clip_value=0.1)
    opt.step()
    sched.step()
    print(epoch, f"{loss.item():.5f}", f"{norm.item():.5f}",
          [f"{lr:.6f}" for lr in sched.get_last_lr()])
    val = round(loss.item(), 2)
    if val < best - 1e-3:
        best, bad = val, 0
    else:
        bad += 1
    if bad >= patience:
        print("early stop at", epoch)
        break

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()},
           buf)
buf.seek(0)
ckpt = torch.load(buf)
print(sorted(ckpt), sorted(ckpt["opt"]["state"])[:3], ckpt["opt"]["param_groups"][2]["params"])
print(sorted(ckpt["sched"]), ckpt["sched"]["last_epoch"], ckpt["sched"]["_milestones"])
opt2 = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                          {"params": no_decay, "weight_decay": 0.0},
                          {"params": [extra], "lr": 0.05}], lr=0.01)
opt2.load_state_dict(ckpt["opt"])
print(opt2.state_dict()["param_groups"][0]["lr"], opt2.state[decay[0]]["step"])
print(torch.equal(opt2.state[decay[0]]["exp_avg"], opt.state[decay[0]]["exp_avg"]))

vec = parameters_to_vector(model.parameters())
vector_to_parameters(vec * 0 + 0.5, model.parameters())
print(vec.shape, vec.grad_fn.name(), model[0].bias, model[3].weight.sum())
model.load_state_dict(ckpt["model"])
print(torch.allclose(parameters_to_vector(model.parameters()), vec))

one = torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1, momentum=0.9)
onecycle = OneCycleLR(one, max_lr=1.0, total_steps=5, pct_start=0.4)
lrs, moms = [], []
for _ in range(5):
    lrs.append(round(onecycle.get_last_lr()[0], 6))
    moms.append(round(one.param_groups[0]["momentum"], 6))
    one.step()
    onecycle.step()
print(lrs, moms)
model[0].weight.grad = torch.full_like(model[0].weight, float("nan"))
try:
    clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("clip error:", e)
try:
    vector_to_parameters(vec[:5], model.parameters())
except RuntimeError as e:
    print("vector error:", type(e).__name__)
