"""Optimizer zoo: one tiny regression trained a few steps with each of the less common
torch.optim optimizers (Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, SGD with dampening,
LBFGS with strong Wolfe line search), printing losses and the state_dict layout; param groups
with their own lr, add_param_group, ChainedScheduler and SequentialLR."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(16, 3)
Y = X @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


def train_step(model, opt):
    loss = F.mse_loss(model(X), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def describe(opt):
    state = opt.state_dict()["state"]
    out = []
    for k in sorted(state):
        entry = state[k]
        out.append(f"{k}:" + ",".join(f"{n}{tuple(v.shape) if torch.is_tensor(v) else ''}"
                                      for n, v in sorted(entry.items())))
    return " ".join(out[:2])


zoo = {
    "Adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
    "Adadelta": lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.8, weight_decay=0.01),
    "Adamax": lambda p: torch.optim.Adamax(p, lr=0.05),
    "NAdam": lambda p: torch.optim.NAdam(p, lr=0.05, momentum_decay=0.005),
    "RAdam": lambda p: torch.optim.RAdam(p, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
    "ASGD": lambda p: torch.optim.ASGD(p, lr=0.05, t0=2),
    "Rprop": lambda p: torch.optim.Rprop(p, lr=0.01, etas=(0.4, 1.3)),
    "SGD": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.3, nesterov=False),
}

for name, make in zoo.items():
    model = make_model()
    opt = make(model.parameters())
    losses = []
    for _ in range(5):
        loss = train_step(model, opt)
        losses.append(round(loss.item(), 5))
    print(name, losses, describe(opt))

model = make_model()
opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=5, history_size=4,
                        line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = F.mse_loss(model(X), Y)
    loss.backward()
    return loss


for step in range(3):
    loss = opt.step(closure)
    print(f"LBFGS step {step} loss {loss.item():.5f}")
st = opt.state_dict()["state"][0]
print("LBFGS state", sorted(st), st["func_evals"], st["n_iter"], len(st["old_dirs"]))

# param groups with different lr, then a new group
model = make_model()
opt = torch.optim.Adam([
    {"params": model[0].parameters(), "lr": 0.01},
    {"params": model[2].weight},
], lr=0.1, betas=(0.8, 0.99))
opt.add_param_group({"params": model[2].bias, "lr": 0.5, "weight_decay": 0.1})
print([(g["lr"], g["weight_decay"], g["betas"], len(g["params"])) for g in opt.param_groups])
try:
    opt.add_param_group({"params": model[2].bias})
except ValueError as e:
    print("ValueError:", e)

sched = torch.optim.lr_scheduler.ChainedScheduler([
    torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2),
    torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
])
for step in range(4):
    loss = train_step(model, opt)
    sched.step()
    print(f"chained {step} loss {loss.item():.5f} lr {[round(x, 6) for x in sched.get_last_lr()]}")

model = make_model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
seq = torch.optim.lr_scheduler.SequentialLR(opt, schedulers=[warm, cos], milestones=[3])
lrs = []
for step in range(7):
    loss = train_step(model, opt)
    seq.step()
    lrs.append(round(opt.param_groups[0]["lr"], 6))
print("sequential", lrs, round(loss.item(), 5))
print(sorted(seq.state_dict()), seq.state_dict()["_milestones"], seq.last_epoch)
sd = opt.state_dict()
print(sd["param_groups"][0]["initial_lr"], sorted(sd["param_groups"][0]))
