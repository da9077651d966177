"""SimCLR-style contrastive pretraining: two augmented views per image (flip, roll, additive
noise, a crop resized back with F.interpolate), the NT-Xent loss from a cosine-similarity matrix
with the diagonal masked to -inf, a LARS-like Optimizer subclass with per-parameter state, a
CosineAnnealingWarmRestarts schedule, and a linear probe on the frozen encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, C, H = 12, 3, 12
images = torch.randn(N, C, H, H)
labels = (images.mean((1, 2, 3)) > 0).long()


def augment(x):
    flip = torch.rand(x.size(0)) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(-1), x)
    x = torch.roll(x, shifts=int(torch.randint(-2, 3, ()).item()), dims=2)
    top, left = torch.randint(0, 4, (2,)).tolist()
    crop = x[:, :, top:top + 8, left:left + 8]
    x = F.interpolate(crop, size=(H, H), mode="bilinear", align_corners=False)
    return x + 0.05 * torch.randn_like(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.GroupNorm(2, 8),
                                      nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.projector = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        h = self.features(x)
        return h, self.projector(h)


def nt_xent(z1, z2, tau=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
    return F.cross_entropy(sim, targets), sim


class LARS(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=1e-4, eta=0.02):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay,
                                      eta=eta))

    @torch.no_grad()
    def step(self, closure=None):
        loss = torch.enable_grad()(closure)() if closure is not None else None
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d = p.grad.add(p, alpha=group["weight_decay"])
                if p.ndim > 1:
                    w_norm, d_norm = torch.norm(p), torch.norm(d)
                    trust = torch.where((w_norm > 0) & (d_norm > 0),
                                        group["eta"] * w_norm / d_norm, torch.ones_like(w_norm))
                    d = d.mul(trust)
                state = self.state[p]
                if "mu" not in state:
                    state["mu"] = torch.zeros_like(p)
                mu = state["mu"]
                mu.mul_(group["momentum"]).add_(d)
                p.add_(mu, alpha=-group["lr"])
        return loss


enc = Encoder()
opt = LARS(enc.parameters(), lr=0.5)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
for step in range(7):
    v1, v2 = augment(images), augment(images)
    _, z1 = enc(v1)
    _, z2 = enc(v2)
    loss, sim = nt_xent(z1, z2)

    def closure():
        opt.zero_grad()
        lo = nt_xent(*[enc(v)[1] for v in (v1, v2)])[0]
        lo.backward()
        return lo

    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    pos = sim.diagonal(N).mean()
    print(f"step {step} loss {loss.item():.5f} pos {pos.item():.4f} "
          f"lr {opt.param_groups[0]['lr']:.5f} T_cur {sched.T_cur} T_i {sched.T_i}")
print(torch.isinf(sim).sum().item(), sim.grad_fn.name(), loss.grad_fn.name())
print(float(opt.step(closure)) > 0, len(opt.state), sorted(opt.state_dict()["state"][0]))
print(opt.defaults, opt.state_dict()["param_groups"][0]["params"][:4])
print(F.cosine_similarity(z1, z2, dim=1).shape, F.cosine_similarity(z1[:1], z2[:1]).item() < 1)

for p in enc.parameters():
    p.requires_grad_(False)
probe = nn.Linear(16, 2)
popt = torch.optim.SGD(probe.parameters(), lr=0.5)
with torch.no_grad():
    feats = enc(images)[0]
print(feats.requires_grad, feats.shape)
for it in range(30):
    logits = probe(feats)
    ploss = F.cross_entropy(logits, labels)
    popt.zero_grad()
    ploss.backward()
    popt.step()
    if it % 10 == 0:
        print(f"probe {it} {ploss.item():.5f}")
acc = (probe(feats).argmax(1) == labels).float().mean()
print(f"probe acc {acc.item():.4f}", [p.grad is None for p in enc.parameters()][:2])
try:
    LARS([torch.zeros(2)], lr=0.1).add_param_group({"params": probe.weight})
    LARS([probe.weight]).add_param_group({"params": probe.weight})
except ValueError as e:
    print("ValueError:", e)
