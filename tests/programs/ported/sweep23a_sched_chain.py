# A small regression trainer that tries several LR-schedule recipes side by side: linear warmup
# into warm restarts through SequentialLR, a ChainedScheduler of MultiplicativeLR and
# PolynomialLR, a triangular2 CyclicLR with momentum cycling, and ReduceLROnPlateau in "abs"
# threshold mode. Gradients are clipped by norm (2, inf, foreach), by value, and through the
# two-step get_total_norm / clip_grads_with_norm_ API; a NaN gradient is caught.
import math

import torch
import torch.nn as nn
from torch.optim import lr_scheduler as S

torch.manual_seed(3)
X = torch.randn(32, 5)
Y = X @ torch.tensor([[0.5], [-1.0], [2.0], [0.0], [1.5]]) + 0.1 * torch.randn(32, 1)


def fresh():
    torch.manual_seed(7)
    return nn.Sequential(nn.Linear(5, 16), nn.GELU(), nn.Linear(16, 1))


def lrs(opt):
    return [round(g["lr"], 6) for g in opt.param_groups]


def train_step(model, opt, clip):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    norm = clip(model.parameters())
    opt.step()
    return loss.item(), norm


# recipe 1: warmup then cosine warm restarts, clip by L2 norm
model = fresh()
opt = torch.optim.SGD([{"params": model[0].parameters()},
                       {"params": model[2].parameters(), "lr": 0.02}], lr=0.05, momentum=0.9)
warm = S.LinearLR(opt, start_factor=0.1, end_factor=1.0, total_iters=3)
cos = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=1e-3)
sched = S.SequentialLR(opt, [warm, cos], milestones=[3])
print("recipe 1 start", lrs(opt), sched.get_last_lr() == [g["lr"] for g in opt.param_groups])
for step in range(9):
    loss, norm = train_step(model, opt,
                            lambda ps: nn.utils.clip_grad_norm_(ps, max_norm=1.0))
    sched.step()
    print(f"  step {step} loss {loss:.5f} norm {norm.item():.5f} lr {lrs(opt)}")
sd = sched.state_dict()
print("sequential keys", sorted(sd))
print("  milestones", sd["_milestones"], "last_epoch", sd["last_epoch"],
      "inner", [sorted(s) for s in sd["_schedulers"]])
print("  cos T_cur", sd["_schedulers"][1]["T_cur"], "T_i", sd["_schedulers"][1]["T_i"])

# recipe 2: chained multiplicative decay and polynomial decay, clip by inf-norm (foreach)
model = fresh()
opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
mult = S.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
poly = S.PolynomialLR(opt, total_iters=6, power=2.0)
chain = S.ChainedScheduler([mult, poly], optimizer=opt)
for step in range(7):
    loss, norm = train_step(
        model, opt,
        lambda ps: nn.utils.clip_grad_norm_(ps, 0.5, norm_type=math.inf, foreach=True))
    chain.step()
    print(f"  chained {step} loss {loss:.5f} inf-norm {norm.item():.5f} lr {chain.get_last_lr()}")
csd = chain.state_dict()
print("chained keys", sorted(csd), [sorted(s) for s in csd["_schedulers"]])
print("  mult lambdas", csd["_schedulers"][0]["lr_lambdas"],
      "poly", csd["_schedulers"][1]["total_iters"], csd["_schedulers"][1]["power"])

# recipe 3: triangular2 cyclic LR with momentum cycling, clip by value first
model = fresh()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
cyc = S.CyclicLR(opt, base_lr=0.001, max_lr=0.02, step_size_up=2, mode="triangular2",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9)


def by_value(ps):
    ps = list(ps)
    nn.utils.clip_grad_value_(ps, clip_value=0.25)
    return torch.stack([p.grad.abs().max() for p in ps]).max()


for step in range(8):
    loss, top = train_step(model, opt, by_value)
    cyc.step()
    print(f"  cyclic {step} loss {loss:.5f} max|g| {top.item():.4f} "
          f"lr {opt.param_groups[0]['lr']:.5f} momentum {opt.param_groups[0]['momentum']:.4f}")
print("cyclic state", cyc.state_dict()["last_epoch"], cyc.state_dict()["mode"],
      round(cyc.state_dict()["total_size"], 3), cyc.state_dict()["step_ratio"])

# recipe 4: plateau detection on a validation metric, two-step clipping API
model = fresh()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
plateau = S.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.05,
                              threshold_mode="abs", cooldown=1, min_lr=0.004)
fake_val = [1.0, 0.9, 0.88, 0.87, 0.86, 0.9, 0.85, 0.84, 0.83, 0.82]
for epoch, metric in enumerate(fake_val):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), Y).backward()
    grads = [p.grad for p in model.parameters()]
    total = nn.utils.get_total_norm(grads, norm_type=2.0)
    nn.utils.clip_grads_with_norm_(model.parameters(), max_norm=0.3, total_norm=total)
    after = nn.utils.get_total_norm([p.grad for p in model.parameters()])
    opt.step()
    plateau.step(metric)
    print(f"  epoch {epoch} metric {metric} norm {total.item():.4f}->{after.item():.4f} "
          f"lr {plateau.get_last_lr()} bad {plateau.num_bad_epochs} cool {plateau.cooldown_counter}")
psd = plateau.state_dict()
print("plateau", psd["best"], psd["mode"], psd["threshold_mode"], psd["min_lrs"], psd["_last_lr"])

# a blown-up gradient is caught rather than silently applied
model = fresh()
model(X).sum().backward()
model[0].weight.grad[0, 0] = float("nan")
try:
    nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", e)
norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
print("nan norm", norm, norm.isnan().item(), model[2].bias.grad.isnan().all().item())

# restoring a scheduler from its state_dict continues the same schedule
model = fresh()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
a = S.OneCycleLR(opt, max_lr=0.5, total_steps=10, pct_start=0.4, anneal_strategy="cos",
                 cycle_momentum=False, div_factor=10.0, final_div_factor=100.0)
for _ in range(4):
    opt.step()
    a.step()
saved = a.state_dict()
opt2 = torch.optim.SGD(fresh().parameters(), lr=0.1)
b = S.OneCycleLR(opt2, max_lr=0.5, total_steps=10, pct_start=0.4, anneal_strategy="cos",
                 cycle_momentum=False, div_factor=10.0, final_div_factor=100.0)
b.load_state_dict(saved)
opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
for _ in range(5):
    opt.step()
    a.step()
    opt2.step()
    b.step()
    print("  onecycle", round(a.get_last_lr()[0], 6), a.get_last_lr() == b.get_last_lr())
print("onecycle keys", sorted(saved))
