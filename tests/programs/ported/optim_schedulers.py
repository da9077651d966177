"""Optimizers and lr schedulers printed step by step: param_groups, state_dict."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
print(opt)
print(opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"], sorted(opt.param_groups[0].keys()))
x = torch.randn(4, 3)
for step in range(3):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(step, loss.item(), model.weight.grad.sum().item())
sd = opt.state_dict()
print(sd["param_groups"], list(sd["state"].keys()), sd["state"][0]["momentum_buffer"])
print(model.weight, model.bias)

model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
opt = torch.optim.Adam([{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 1e-2}], lr=1e-3, betas=(0.8, 0.99))
print(opt)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
data = torch.randn(8, 2)
target = data.sum(1, keepdim=True)
for epoch in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    opt.step()
    sched.step()
    print(epoch, round(loss.item(), 5), sched.get_last_lr(), [g["lr"] for g in opt.param_groups])
st = opt.state_dict()
print(st["state"][0]["step"], st["state"][1]["exp_avg"], st["param_groups"][1])
print(sched.state_dict())
opt2 = torch.optim.Adam(model.parameters(), lr=0.5)
print(len(opt2.state), opt2.defaults)

p = nn.Parameter(torch.tensor([1.0, -2.0]))
for name, cls, kw in [("adamw", torch.optim.AdamW, {"lr": 0.1}), ("rmsprop", torch.optim.RMSprop, {"lr": 0.01}),
                      ("adagrad", torch.optim.Adagrad, {"lr": 0.5}), ("nesterov", torch.optim.SGD, {"lr": 0.1, "momentum": 0.5, "nesterov": True}),
                      ("adam_ams", torch.optim.Adam, {"lr": 0.1, "amsgrad": True}), ("adamax", torch.optim.Adamax, {"lr": 0.1}),
                      ("nadam", torch.optim.NAdam, {"lr": 0.1}), ("radam", torch.optim.RAdam, {"lr": 0.1}), ("adadelta", torch.optim.Adadelta, {"lr": 1.0})]:
    w = nn.Parameter(torch.tensor([1.0, -2.0]))
    o = cls([w], **kw)
    for _ in range(4):
        o.zero_grad()
        (w ** 2).sum().backward()
        o.step()
    print(name, w.data, sorted(o.state[w].keys()))

w = nn.Parameter(torch.ones(1))
o = torch.optim.SGD([w], lr=1.0)
scheds = {
    "cosine": lambda: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1),
    "exp": lambda: torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "multistep": lambda: torch.optim.lr_scheduler.MultiStepLR(o, milestones=[1, 3], gamma=0.1),
    "lambda": lambda: torch.optim.lr_scheduler.LambdaLR(o, lambda e: 1.0 / (e + 1)),
    "linear": lambda: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=3),
    "onecycle": lambda: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=6),
    "warm": lambda: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
    "cyclic": lambda: torch.optim.lr_scheduler.CyclicLR(o, base_lr=0.1, max_lr=1.0, step_size_up=2),
    "poly": lambda: torch.optim.lr_scheduler.PolynomialLR(o, total_iters=4, power=2.0),
}
for name, make in scheds.items():
    for g in o.param_groups:
        g["lr"] = 1.0
        g.pop("initial_lr", None)
    s = make()
    lrs = []
    for _ in range(6):
        o.step()
        s.step()
        lrs.append(round(s.get_last_lr()[0], 6))
    print(name, lrs)
for g in o.param_groups:
    g["lr"] = 1.0
    g.pop("initial_lr", None)
seq = torch.optim.lr_scheduler.SequentialLR(o, [torch.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2),
                                                torch.optim.lr_scheduler.ExponentialLR(o, gamma=0.5)], milestones=[2])
out = []
for _ in range(5):
    o.step()
    seq.step()
    out.append(o.param_groups[0]["lr"])
print("sequential", out)
for g in o.param_groups:
    g["lr"] = 1.0
    g.pop("initial_lr", None)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1)
for val in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7]:
    plateau.step(val)
    print("plateau", val, o.param_groups[0]["lr"], plateau.num_bad_epochs)
o.load_state_dict(o.state_dict())
print(o.state_dict()["param_groups"])
