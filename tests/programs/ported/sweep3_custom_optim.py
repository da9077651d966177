"""A custom optimizer subclassing torch.optim.Optimizer (Lion-style sign update plus a
momentum SGD with per-param state), @torch.no_grad step, closures, add_param_group,
state_dict round trip, and LambdaLR / OneCycleLR / ReduceLROnPlateau / SequentialLR schedules."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR, OneCycleLR, ReduceLROnPlateau, SequentialLR, LinearLR, ExponentialLR

torch.manual_seed(0)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0):
        if lr <= 0:
            raise ValueError(f"Invalid lr: {lr}")
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                    state["step"] = 0
                state["step"] += 1
                p.mul_(1 - group["lr"] * group["weight_decay"])
                upd = state["exp_avg"].mul(b1).add(p.grad, alpha=1 - b1).sign_()
                p.add_(upd, alpha=-group["lr"])
                state["exp_avg"].mul_(b2).add_(p.grad, alpha=1 - b2)
        return loss


X = torch.randn(32, 5)
w_true = torch.randn(5, 1)
y = X @ w_true + 0.1 * torch.randn(32, 1)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1))
opt = Lion(model.parameters(), lr=0.01, weight_decay=0.01)
print(opt)
print(opt.defaults, len(opt.param_groups), len(opt.state))
sched = LambdaLR(opt, lr_lambda=lambda e: 0.9 ** e)
for step in range(5):
    def closure():
        opt.zero_grad()
        l = F.mse_loss(model(X), y)
        l.backward()
        return l
    loss = opt.step(closure)
    sched.step()
    print(step, f"{loss.item():.5f}", sched.get_last_lr(), opt.state[model[0].weight]["step"])

sd = opt.state_dict()
print(sd["param_groups"][0]["params"], sorted(sd["state"].keys()), sd["state"][0]["step"])
opt2 = Lion(model.parameters(), lr=0.5)
opt2.load_state_dict(sd)
print(opt2.param_groups[0]["lr"], torch.equal(opt2.state[model[0].weight]["exp_avg"], opt.state[model[0].weight]["exp_avg"]))
extra = nn.Parameter(torch.zeros(3))
opt.add_param_group({"params": [extra], "lr": 0.1})
print(len(opt.param_groups), opt.param_groups[1]["betas"], opt.param_groups[1]["weight_decay"])
try:
    opt.add_param_group({"params": [extra]})
except Exception as e:
    print(type(e).__name__, e)
try:
    Lion(model.parameters(), lr=-1)
except Exception as e:
    print(type(e).__name__, e)

# OneCycleLR with momentum cycling
model = nn.Linear(5, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
oc = OneCycleLR(opt, max_lr=0.5, total_steps=10, pct_start=0.3, anneal_strategy="cos", div_factor=10, final_div_factor=100)
lrs, moms = [], []
for i in range(10):
    opt.zero_grad()
    F.mse_loss(model(X), y).backward()
    opt.step()
    lrs.append(round(oc.get_last_lr()[0], 6)); moms.append(round(opt.param_groups[0]["momentum"], 6))
    oc.step()
print(lrs)
print(moms)
oc_lin = OneCycleLR(torch.optim.Adam(model.parameters()), max_lr=1.0, total_steps=6, anneal_strategy="linear", three_phase=True)
vals = []
for _ in range(5):
    oc_lin.optimizer.step(); oc_lin.step(); vals.append(round(oc_lin.get_last_lr()[0], 5))
print(vals, oc_lin.optimizer.param_groups[0]["betas"])

# ReduceLROnPlateau
opt = torch.optim.SGD(model.parameters(), lr=1.0)
plateau = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1, threshold=0.01, cooldown=1, min_lr=0.1)
for epoch, val in enumerate([1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9]):
    plateau.step(val)
    print(epoch, val, opt.param_groups[0]["lr"], plateau.num_bad_epochs, plateau.cooldown_counter)
print(plateau.best, plateau.get_last_lr())

# SequentialLR: warmup then exponential
opt = torch.optim.SGD(model.parameters(), lr=1.0)
seq = SequentialLR(opt, [LinearLR(opt, start_factor=0.25, total_iters=3), ExponentialLR(opt, gamma=0.5)], milestones=[3])
out = []
for _ in range(7):
    opt.step(); seq.step(); out.append(round(seq.get_last_lr()[0], 5))
print(out)
print(sorted(seq.state_dict().keys()))
