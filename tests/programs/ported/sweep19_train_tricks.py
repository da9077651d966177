# Training-loop tricks from large-model recipes on a tiny MLP: gradient accumulation, global
# norm clipping in two stages, an EMA of the weights with _foreach ops, the optimizer stepped
# inside backward via post-accumulate-grad hooks, optimizer hooks and state_dict round trips.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make():
    return nn.Sequential(nn.Linear(5, 8), nn.SiLU(), nn.Linear(8, 3))


model = make()
ema = copy.deepcopy(model).requires_grad_(False)
x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=True)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=1e-4)
calls = []
opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
opt.register_step_post_hook(lambda o, a, k: calls.append("post"))

accum = 3
for it in range(6):
    for micro in range(accum):
        sl = slice(micro * 4, micro * 4 + 4)
        loss = F.cross_entropy(model(x[sl]), y[sl]) / accum
        loss.backward()
    grads = [p.grad for p in model.parameters()]
    total = torch.nn.utils.get_total_norm(grads, norm_type=2.0)
    torch.nn.utils.clip_grads_with_norm_(model.parameters(), max_norm=0.5, total_norm=total)
    clipped = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
    opt.step()
    opt.zero_grad()
    sched.step()
    with torch.no_grad():
        e, m = list(ema.parameters()), list(model.parameters())
        torch._foreach_lerp_(e, m, 0.1)
    print(it, f"{total.item():.5f}", f"{clipped.item():.5f}", f"{sched.get_last_lr()[0]:.6f}",
          total.grad_fn)
print("hooks", calls[:4], len(calls))
with torch.no_grad():
    print("ema vs model", f"{(ema(x) - model(x)).abs().max().item():.5f}",
          ema[0].weight.requires_grad)

# optimizer state round trip into a fresh model/optimizer pair
sd, ssd = copy.deepcopy(opt.state_dict()), sched.state_dict()
print(sorted(sd), sd["param_groups"][0]["params"], sorted(sd["state"][0]))
print("sched", sorted(k for k in ssd if not k.startswith("_")), ssd["T_cur"], ssd["T_i"])
model2 = make()
model2.load_state_dict(model.state_dict())
opt2 = torch.optim.AdamW(model2.parameters(), lr=1e-2, foreach=True)
# (building a scheduler resets the group lr, so it goes before the optimizer's state)
sched2 = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt2, T_0=2, T_mult=2,
                                                              eta_min=1e-4)
opt2.load_state_dict(sd)
sched2.load_state_dict(ssd)
print("lrs", opt.param_groups[0]["lr"], opt2.param_groups[0]["lr"])
for m, o, s in ((model, opt, sched), (model2, opt2, sched2)):
    F.cross_entropy(m(x), y).backward()
    o.step()
    o.zero_grad()
    s.step()
print("resumed equal", all(torch.equal(a, b) for a, b in zip(model.parameters(),
                                                              model2.parameters())),
      opt2.state[opt2.param_groups[0]["params"][0]]["step"])

# optimizer in backward: each parameter steps as soon as its gradient is accumulated
model3 = make()
opts = {p: torch.optim.SGD([p], lr=0.1, momentum=0.9) for p in model3.parameters()}
order = []


def step_now(p):
    order.append(tuple(p.shape))
    opts[p].step()
    opts[p].zero_grad()


handles = [p.register_post_accumulate_grad_hook(step_now) for p in model3.parameters()]
before = model3[2].bias.clone()
for _ in range(2):
    F.cross_entropy(model3(x), y).backward()
print("in-backward", order[:4], all(p.grad is None for p in model3.parameters()),
      f"{(model3[2].bias - before).abs().sum().item():.5f}")
for h in handles:
    h.remove()

# add_param_group for a head unfrozen later, and a nonfinite gradient caught by the clipper
head = nn.Linear(3, 1)
opt.add_param_group({"params": head.parameters(), "lr": 0.5})
print("groups", len(opt.param_groups), opt.param_groups[1]["lr"], opt.param_groups[1]["betas"])
model[0].weight.grad = torch.full_like(model[0].weight, float("inf"))
errors = [
    lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True),
    lambda: opt.add_param_group({"params": head.parameters()}),
    lambda: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=0),
    lambda: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5),
]
for f in errors:
    try:
        f()
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e).splitlines()[0])
print(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
