# Semi-supervised "mean teacher": a student trained on a few labels plus a consistency loss
# against a teacher whose weights are an exponential moving average of the student's. The EMA
# is written three ways people write it (torch._foreach_* like timm's ModelEmaV3, lerp_, and
# mul_/add_ under no_grad), buffers are copied, and the ramp-up weight follows a sigmoid
# schedule. The small MLP uses less common activations (Softplus, CELU, Hardtanh, ...).
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)


def make_net():
    return nn.Sequential(
        nn.Linear(2, 24), nn.Softplus(beta=2.0, threshold=10.0),
        nn.Linear(24, 24), nn.BatchNorm1d(24), nn.CELU(alpha=0.5),
        nn.Linear(24, 24), nn.Hardtanh(-2.0, 2.0),
        nn.Linear(24, 3), nn.LogSoftmax(dim=1))


student = make_net()
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
print(student)
print("teacher requires_grad", any(p.requires_grad for p in teacher.parameters()),
      "same init", all(torch.equal(a, b) for a, b in zip(student.parameters(), teacher.parameters())))

# three moons-ish blobs; only 9 labelled points
centers = torch.tensor([[0.0, 2.0], [-1.7, -1.0], [1.7, -1.0]])
y_all = torch.arange(3).repeat_interleave(40)
x_all = centers[y_all] + 0.6 * torch.randn(120, 2)
labelled = torch.cat([torch.nonzero(y_all == c).flatten()[:3] for c in range(3)])
print("labelled idx", labelled.tolist())


def ema_foreach(teacher, student, decay):
    t_params = [p for p in teacher.parameters()]
    s_params = [p.detach() for p in student.parameters()]
    torch._foreach_mul_(t_params, decay)
    torch._foreach_add_(t_params, s_params, alpha=1 - decay)


def ema_lerp(teacher, student, decay):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.lerp_(s.detach(), 1 - decay)


@torch.no_grad()
def ema_mul_add(teacher, student, decay):
    for t, s in zip(teacher.state_dict().values(), student.state_dict().values()):
        if t.dtype.is_floating_point:
            t.mul_(decay).add_(s, alpha=1 - decay)
        else:
            t.copy_(s)


def rampup(step, length=10):
    t = min(step, length) / length
    return math.exp(-5.0 * (1.0 - t) ** 2)


opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, nesterov=True)
for step in range(20):
    student.train()
    teacher.train()
    noise = 0.1 * torch.randn_like(x_all)
    logp_s = student(x_all + noise)
    with torch.no_grad():
        logp_t = teacher(x_all - noise)
    sup = F.nll_loss(logp_s[labelled], y_all[labelled])
    cons = F.mse_loss(logp_s.exp(), logp_t.exp(), reduction="sum") / x_all.shape[0]
    w = rampup(step)
    loss = sup + 10.0 * w * cons
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    decay = min(0.99, (1 + step) / (10 + step))
    with torch.no_grad():
        if step % 3 == 0:
            ema_foreach(teacher, student, decay)
        elif step % 3 == 1:
            ema_lerp(teacher, student, decay)
        else:
            ema_mul_add(teacher, student, decay)
        # BatchNorm statistics follow the student directly
        for bt, bs in zip(teacher.buffers(), student.buffers()):
            bt.copy_(bs)
    if step % 5 == 4:
        print(f"step {step} sup {sup.item():.5f} cons {cons.item():.6f} w {w:.4f} decay {decay:.4f}")

print("teacher leaf grads", [p.grad for p in teacher.parameters()][:2])
print("student grad_fn", logp_s.grad_fn.name(), "teacher out grad_fn", logp_t.grad_fn)
print("bn tracked", int(student[3].num_batches_tracked), teacher[3].num_batches_tracked.item())

student.eval()
teacher.eval()
with torch.no_grad():
    acc_s = (student(x_all).argmax(1) == y_all).float().mean().item()
    acc_t = (teacher(x_all).argmax(1) == y_all).float().mean().item()
    gap = torch.stack([(a - b).norm() for a, b in zip(student.parameters(), teacher.parameters())])
print(f"acc student {acc_s:.4f} teacher {acc_t:.4f}")
print("param gap", [f"{g:.4f}" for g in gap.tolist()])

# the three EMA forms agree with each other
a, b, c = make_net(), make_net(), make_net()
src = make_net()
b.load_state_dict(a.state_dict())
c.load_state_dict(a.state_dict())
with torch.no_grad():
    ema_foreach(a, src, 0.9)
    ema_lerp(b, src, 0.9)
ema_mul_add(c, src, 0.9)
print("foreach==lerp", all(torch.allclose(p, q, atol=1e-6) for p, q in zip(a.parameters(), b.parameters())),
      "lerp==mul_add", all(torch.allclose(p, q, atol=1e-6) for p, q in zip(b.parameters(), c.parameters())))

# activations on a grid, and their gradients
z = torch.linspace(-3, 3, 7, requires_grad=True)
acts = {"softplus": nn.Softplus(beta=2.0), "celu": nn.CELU(0.5), "hardtanh": nn.Hardtanh(-2, 2),
        "logsigmoid": nn.LogSigmoid(), "tanhshrink": nn.Tanhshrink(), "softsign": nn.Softsign(),
        "hardsigmoid": nn.Hardsigmoid(), "relu6": nn.ReLU6(), "selu": nn.SELU()}
for name, act in acts.items():
    out = act(z)
    (g,) = torch.autograd.grad(out.sum(), z)
    print(f"{name:>11} {out.grad_fn.name():<22} {[round(v, 4) for v in out.tolist()]} {[round(v, 4) for v in g.tolist()]}")
norms = torch._foreach_norm([p.detach() for p in student.parameters()][:3])
print("foreach_norm", [f"{v.item():.4f}" for v in norms])
