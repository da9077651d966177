"""CLIP-style image/text contrastive training with a MoCo-like negative queue: a learnable
logit scale (clamped exp), symmetric cross-entropy with label smoothing, a momentum (EMA) key
encoder updated with torch._foreach ops, retrieval recall@k from topk over cosine similarities
and torch.cdist, and alignment/uniformity diagnostics with torch.pdist."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, D_IMG, D_TXT, D = 16, 12, 10, 8
images = torch.randn(N, D_IMG)
mix = torch.randn(D_IMG, D_TXT)
texts = images @ mix / math.sqrt(D_IMG) + 0.1 * torch.randn(N, D_TXT)


class Tower(nn.Module):
    def __init__(self, d_in):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, 16), nn.LayerNorm(16), nn.GELU(),
                                 nn.Linear(16, D, bias=False))

    def forward(self, x):
        return F.normalize(self.net(x), dim=-1, eps=1e-6)


class CLIP(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = Tower(D_IMG)
        self.text = Tower(D_TXT)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, img, txt):
        zi, zt = self.image(img), self.text(txt)
        scale = self.logit_scale.exp().clamp(max=100)
        return scale * zi @ zt.t(), zi, zt


model = CLIP()
key_text = Tower(D_TXT)
key_text.load_state_dict(model.text.state_dict())
key_text.requires_grad_(False)
queue = F.normalize(torch.randn(24, D), dim=1)
ptr = 0
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
print("trainable", sum(p.numel() for p in model.parameters() if p.requires_grad),
      "frozen", sum(p.numel() for p in key_text.parameters()))

for step in range(6):
    idx = torch.randperm(N)[:8]
    logits, zi, zt = model(images[idx], texts[idx])
    target = torch.arange(len(idx))
    loss_i = F.cross_entropy(logits, target, label_smoothing=0.1)
    loss_t = F.cross_entropy(logits.t(), target, label_smoothing=0.1)
    # extra negatives from the queue of momentum-encoded texts
    with torch.no_grad():
        keys = key_text(texts[idx])
    pos = (zi * keys).sum(1, keepdim=True)
    neg = zi @ queue.t()
    moco_logits = torch.cat([pos, neg], dim=1) / 0.2
    loss_q = F.cross_entropy(moco_logits, torch.zeros(len(idx), dtype=torch.long))
    loss = (loss_i + loss_t) / 2 + 0.5 * loss_q
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    with torch.no_grad():
        ema = list(key_text.parameters())
        torch._foreach_mul_(ema, 0.9)
        torch._foreach_add_(ema, list(model.text.parameters()), alpha=0.1)
        queue[ptr:ptr + len(idx)] = keys
        ptr = (ptr + len(idx)) % queue.size(0)
    print(f"step {step} loss {loss.item():.4f} i2t {loss_i.item():.4f} t2i {loss_t.item():.4f} "
          f"moco {loss_q.item():.4f} scale {model.logit_scale.exp().item():.3f} "
          f"gnorm {gnorm.item():.4f}")

print(loss.grad_fn.name(), logits.grad_fn.name(), moco_logits.grad_fn.name())
print(model.logit_scale.grad is None, model.logit_scale.requires_grad, keys.requires_grad)

model.eval()
with torch.no_grad():
    _, zi, zt = model(images, texts)
    sim = F.cosine_similarity(zi[:, None, :], zt[None, :, :], dim=-1)
    print("sim", sim.shape, sim.dtype, f"{sim.diag().mean().item():.4f}")
    for k in (1, 3, 5):
        top = sim.topk(k, dim=1).indices
        hit = (top == torch.arange(N)[:, None]).any(dim=1).float().mean()
        print(f"recall@{k} i2t {hit.item():.3f}")
    d = torch.cdist(zi, zt)
    rank = d.argsort(dim=1)
    pos_rank = (rank == torch.arange(N)[:, None]).nonzero()[:, 1]
    print("median rank", pos_rank.median().item(), "mean rank", pos_rank.float().mean().item())
    # on the unit sphere squared euclidean distance is 2 - 2 cos
    print("cdist/cos agree", torch.allclose(d.pow(2), 2 - 2 * sim, atol=1e-5))
    vals, inds = sim.t().topk(2, dim=1, largest=True, sorted=True)
    print("t2i top2", inds[:4].tolist(), vals[:2].round(decimals=3).tolist())
    align = (zi - zt).norm(dim=1).pow(2).mean()
    uniform = torch.pdist(zi, p=2).pow(2).mul(-2).exp().mean().log()
    print(f"align {align.item():.4f} uniform {uniform.item():.4f}", torch.pdist(zi).shape)
    hardest = sim.masked_fill(torch.eye(N, dtype=torch.bool), -2).max(dim=1)
    print("hardest neg", hardest.indices[:6].tolist(), f"{hardest.values.mean().item():.4f}")
    print(type(hardest).__name__, hardest.values.dtype)

# batch-hard triplet loss on cdist distances (gradients flow through cdist)
emb = nn.Linear(D_IMG, D)
opt2 = torch.optim.SGD(emb.parameters(), lr=0.05)
cls = torch.arange(N) % 4
for step in range(3):
    z = emb(images)
    dist = torch.cdist(z, z, p=2)
    same = cls[:, None] == cls[None, :]
    hardest_pos = (dist * same).max(dim=1).values
    hardest_neg = dist.masked_fill(same, float("inf")).min(dim=1).values
    trip = F.relu(hardest_pos - hardest_neg + 0.5).mean()
    opt2.zero_grad()
    trip.backward()
    opt2.step()
    print(f"triplet {step} {trip.item():.4f} {dist.grad_fn.name()} "
          f"{emb.weight.grad.abs().sum().item():.4f}")
cos_dist = lambda u, v: 1 - F.cosine_similarity(u, v)  # noqa: E731
a, p, n = emb(images[:4]), emb(images[4:8]), emb(images[8:12])
print("margin loss", f"{nn.TripletMarginLoss(margin=1.0, p=2, swap=True)(a, p, n).item():.4f}",
      f"{F.triplet_margin_with_distance_loss(a, p, n, distance_function=cos_dist).item():.4f}",
      f"{F.cosine_embedding_loss(a, p, torch.tensor([1, -1, 1, -1]), margin=0.1).item():.4f}")
print("pairwise", [f"{v:.4f}" for v in F.pairwise_distance(a, p, keepdim=False).tolist()])
for pn in (1.0, 3.0, float("inf")):
    print("cdist p", pn, [f"{v:.4f}" for v in torch.cdist(a, n, p=pn)[0].tolist()])
mm = torch.cdist(a, n, compute_mode="use_mm_for_euclid_dist")
direct = torch.cdist(a, n, compute_mode="donot_use_mm_for_euclid_dist")
print("mm mode close", torch.allclose(mm, direct, atol=1e-4))
zero = torch.zeros(2, D)
print(F.normalize(zero, dim=1).abs().sum().item(), F.normalize(a, p=1, dim=1).abs().sum(1))
g = torch.randn(3, D, requires_grad=True)
F.cosine_similarity(g, g.flip(0)).sum().backward()
print("cos grad", g.grad.shape, f"{g.grad.norm().item():.5f}")

try:
    torch.cdist(zi, zt[:, :4])
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    F.cosine_similarity(zi, zt[:5])
except RuntimeError as e:
    print("RuntimeError:", e)
