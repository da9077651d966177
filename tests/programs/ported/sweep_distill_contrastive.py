"""Knowledge distillation (KL-div on temperature-softened logits), SimCLR's NT-Xent loss with
a cosine-similarity matrix and masked_fill, a focal loss, mixup with a NumPy Beta draw, cutmix with
random boxes, triplet/cosine-embedding losses, and SGD param groups with different lrs."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))


teacher, student = mlp(10, 32, 4), mlp(10, 8, 4)
teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
x = torch.randn(32, 10)
y = torch.randint(0, 4, (32,))


def distill_loss(s_logits, t_logits, labels, T=3.0, alpha=0.7):
    soft = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                    reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(s_logits, labels)


def focal_loss(logits, labels, gamma=2.0):
    logp = F.log_softmax(logits, 1).gather(1, labels[:, None]).squeeze(1)
    return (-(1 - logp.exp()) ** gamma * logp).mean()


opt = torch.optim.SGD([{"params": student[0].parameters(), "lr": 0.05},
                       {"params": student[2].parameters()}], lr=0.1, momentum=0.9, dampening=0.1)
for step in range(8):
    with torch.no_grad():
        t = teacher(x)
    s = student(x)
    loss = distill_loss(s, t, y) + 0.1 * focal_loss(s, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        agree = (s.argmax(1) == t.argmax(1)).float().mean()
        print(f"step {step} loss {loss.item():.5f} agree {agree.item():.3f}")
print([g["lr"] for g in opt.param_groups], opt.param_groups[1]["dampening"])


def nt_xent(z1, z2, tau=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    n = z1.size(0)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


enc = mlp(10, 16, 8)
proj_opt = torch.optim.Adam(enc.parameters(), lr=1e-2)
for step in range(5):
    v1 = x + 0.1 * torch.randn_like(x)
    v2 = x * (torch.rand_like(x) > 0.2)
    loss = nt_xent(enc(v1), enc(v2))
    proj_opt.zero_grad()
    loss.backward()
    proj_opt.step()
    print(f"simclr {step} {loss.item():.5f}")
cos = F.cosine_similarity(enc(x[:4]).unsqueeze(1), enc(x[:4]).unsqueeze(0), dim=-1)
print(cos.detach())

# mixup and cutmix
lam = float(np.random.beta(0.4, 0.4))
idx = torch.randperm(x.size(0))
mixed = lam * x + (1 - lam) * x[idx]
out = student(mixed)
mix_loss = lam * F.cross_entropy(out, y) + (1 - lam) * F.cross_entropy(out, y[idx])
print(f"lam {lam:.5f} mixup {mix_loss.item():.5f}")
imgs = torch.randn(4, 3, 8, 8)
lam_c = float(np.random.beta(1.0, 1.0))
cut = int(8 * (1 - lam_c) ** 0.5)
cx, cy = np.random.randint(8), np.random.randint(8)
x1, x2 = np.clip(cx - cut // 2, 0, 8), np.clip(cx + cut // 2, 0, 8)
y1, y2 = np.clip(cy - cut // 2, 0, 8), np.clip(cy + cut // 2, 0, 8)
perm = torch.randperm(4)
imgs[:, :, y1:y2, x1:x2] = imgs[perm, :, y1:y2, x1:x2]
lam_adj = 1 - (x2 - x1) * (y2 - y1) / 64
print(f"cutmix {lam_c:.5f} box {(int(x1), int(x2), int(y1), int(y2))} lam {lam_adj:.4f} {imgs.sum().item():.4f}")
onehot = F.one_hot(y[:4], 4).float()
soft_targets = lam_adj * onehot + (1 - lam_adj) * onehot[perm]
print(soft_targets, F.cross_entropy(student(x[:4]), soft_targets).item() > 0)

a, p, n = torch.randn(6, 5), torch.randn(6, 5), torch.randn(6, 5)
print(F.triplet_margin_loss(a, p, n, margin=1.0, p=2).item(),
      nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance())(a, p, n).item())
print(F.cosine_embedding_loss(a, p, torch.tensor([1, -1, 1, -1, 1, 1]), margin=0.2).item(),
      F.margin_ranking_loss(a[:, 0], p[:, 0], torch.ones(6)).item(),
      F.hinge_embedding_loss(a, torch.ones(6, 5)).item())
print(F.multilabel_soft_margin_loss(a, (p > 0).float()).item(), F.soft_margin_loss(a, torch.sign(p)).item(),
      F.poisson_nll_loss(a, p.abs()).item(), F.gaussian_nll_loss(a, p, torch.ones(6, 5)).item())
print(F.huber_loss(a, p, delta=0.5).item(), F.smooth_l1_loss(a, p, beta=0.5).item(),
      F.kl_div(F.log_softmax(a, 1), F.log_softmax(p, 1), reduction="batchmean", log_target=True).item())
