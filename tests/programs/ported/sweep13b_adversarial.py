"""Adversarial examples on a tiny CNN: FGSM from x.grad.sign(), PGD with a random start projected
with torch.max/torch.min against x - eps / x + eps and clamp(0, 1), input gradients through
torch.autograd.grad with the model in eval mode and its parameters frozen (requires_grad_(False)),
then adversarial training steps mixing clean and adversarial losses."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(
    nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Dropout(0.25), nn.Linear(16, 3))
x = torch.rand(6, 1, 4, 4)
y = torch.tensor([0, 1, 2, 0, 1, 2])
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for _ in range(2):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()


def accuracy(inputs):
    with torch.no_grad():
        return (model(inputs).argmax(1) == y).float().mean().item()


def fgsm(inputs, eps):
    inputs = inputs.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(inputs), y)
    model.zero_grad()
    loss.backward()
    return (inputs + eps * inputs.grad.sign()).clamp(0, 1).detach(), loss


def pgd(inputs, eps, alpha, steps, gen):
    lo, hi = inputs - eps, inputs + eps
    adv = inputs + torch.empty(inputs.shape).uniform_(-eps, eps, generator=gen)
    adv = adv.clamp(0, 1).detach()
    for k in range(steps):
        adv.requires_grad_(True)
        loss = F.cross_entropy(model(adv), y)
        grad, = torch.autograd.grad(loss, adv)
        adv = adv.detach() + alpha * grad.sign()
        adv = torch.min(torch.max(adv, lo), hi).clamp(0, 1)
        print(f"  pgd {k} loss {loss.item():.5f} |grad|1 {grad.abs().sum().item():.5f}", adv.requires_grad)
    return adv


model.eval()
for p in model.parameters():
    p.requires_grad_(False)
print("frozen", [p.requires_grad for p in model.parameters()], model.training, model[5].training)
x_fgsm, clean_loss = fgsm(x, 0.1)
print("fgsm", f"{clean_loss.item():.5f}", (x_fgsm - x).abs().max().item() <= 0.1 + 1e-6,
      model[0].weight.grad, clean_loss.grad_fn.name())
gen = torch.Generator().manual_seed(7)
x_pgd = pgd(x, 0.2, 0.05, 3, gen)
print("linf", f"{(x_pgd - x).abs().max().item():.4f}", x_pgd.min().item() >= 0, x_pgd.max().item() <= 1)
print("acc clean/fgsm/pgd", accuracy(x), accuracy(x_fgsm), accuracy(x_pgd))
try:
    torch.autograd.grad(F.cross_entropy(model(x), y), x)
except RuntimeError as e:
    print("RuntimeError", e)
xr = x.clone().requires_grad_()
out = model(xr).logsumexp(1).sum()
g, unused = torch.autograd.grad(out, [xr, torch.ones(1, requires_grad=True)], allow_unused=True)
print("input grad", g.shape, f"{g.norm().item():.5f}", unused)
try:
    torch.autograd.grad(model(xr).sum(), [xr, model[0].weight])
except RuntimeError as e:
    print("RuntimeError", e)
print("sign", torch.tensor([-0.5, 0.0, -0.0, 2.0]).sign(), torch.sign(torch.tensor([3, -2, 0])))
print("max/min", torch.max(torch.tensor([0.1, 0.9]), torch.tensor(0.5)), torch.min(x[0, 0, 0], x[1, 0, 0]))
print("max other=", torch.max(x[0, 0, 0], other=x[1, 0, 0]), x[0, 0, 0].min(other=x[1, 0, 0]))
for bad in (lambda: torch.max(x, 0.5), lambda: x.min(1.0), lambda: torch.max(x, x - 0.1, x + 0.1)):
    try:
        bad()
    except TypeError as e:
        print("TypeError", e)

model.train()
model.requires_grad_(True)
print("unfrozen", all(p.requires_grad for p in model.parameters()), model[5].training)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(3):
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    adv = pgd(x, 0.1, 0.05, 1, gen)
    model.train()
    for p in model.parameters():
        p.requires_grad_(True)
    clean = F.cross_entropy(model(x), y)
    robust = F.cross_entropy(model(adv), y)
    loss = 0.5 * clean + 0.5 * robust
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"clean {clean.item():.5f} adv {robust.item():.5f} loss {loss.item():.5f}",
          loss.grad_fn.name(), model[1].num_batches_tracked.item())
print("running", model[1].running_mean)
