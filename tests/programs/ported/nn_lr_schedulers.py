"""Learning-rate schedulers as tutorials use them, printing the lr each epoch."""
import torch
import torch.nn as nn
from torch.optim import lr_scheduler

torch.manual_seed(0)
model = nn.Linear(3, 1)


def run(make, epochs=6, opt_cls=torch.optim.SGD, **opt_kw):
    opt = opt_cls(model.parameters(), lr=0.1, **opt_kw)
    sched = make(opt)
    lrs = []
    for epoch in range(epochs):
        opt.zero_grad()
        model(torch.ones(2, 3)).sum().backward()
        opt.step()
        lrs.append(f"{opt.param_groups[0]['lr']:.6f}")
        sched.step()
    print(type(sched).__name__, lrs, [f"{v:.6f}" for v in sched.get_last_lr()])


run(lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5))
run(lambda o: lr_scheduler.MultiStepLR(o, milestones=[1, 4], gamma=0.1))
run(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9))
run(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.001))
run(lambda o: lr_scheduler.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e))
run(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=4))
run(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=6), momentum=0.9)
run(lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), epochs=8)
run(lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2), momentum=0.9)
run(lambda o: lr_scheduler.SequentialLR(o, [lr_scheduler.LinearLR(o, 0.1, total_iters=2),
                                            lr_scheduler.ExponentialLR(o, 0.8)], milestones=[2]))
run(lambda o: lr_scheduler.PolynomialLR(o, total_iters=4, power=2.0))


def warmup_cosine(opt, warmup=2, total=6):
    import math

    def f(step):
        if step < warmup:
            return float(step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * progress))
    return lr_scheduler.LambdaLR(opt, f)


run(warmup_cosine, opt_cls=torch.optim.AdamW, weight_decay=0.01)

opt = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
for epoch, val in enumerate([1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7]):
    plateau.step(val)
    print(epoch, opt.param_groups[0]["lr"], plateau.num_bad_epochs)
print(plateau.state_dict()["best"], plateau.get_last_lr())

opt = torch.optim.SGD([{"params": model.weight}, {"params": model.bias, "lr": 0.01}], lr=0.1)
sched = lr_scheduler.StepLR(opt, 1, gamma=0.5)
for _ in range(3):
    opt.step()
    sched.step()
print(sched.get_last_lr(), [g["initial_lr"] for g in opt.param_groups])
print(sched.state_dict())
