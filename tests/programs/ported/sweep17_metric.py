"""Contrastive / metric learning: normalised embeddings, cosine-similarity logits with a
temperature, InfoNCE through cross_entropy with label smoothing, cdist, triplet and cosine
embedding losses, hard-negative mining with topk/masked_fill, an EMA copy of the encoder with
swa_utils.AveragedModel, and gradient accumulation over two micro-batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
ema = AveragedModel(encoder, multi_avg_fn=get_ema_multi_avg_fn(0.9))
opt = torch.optim.SGD(encoder.parameters(), lr=0.1, momentum=0.9)
triplet = nn.TripletMarginLoss(margin=0.5, p=2)
cosine = nn.CosineEmbeddingLoss(margin=0.2)
temperature = 0.1

x = torch.randn(8, 6)
views = (x + 0.1 * torch.randn(8, 6), x + 0.1 * torch.randn(8, 6))
eye = torch.eye(4, dtype=torch.bool)

for step in range(2):
    opt.zero_grad()
    for micro in range(2):
        a = F.normalize(encoder(views[0][micro * 4:micro * 4 + 4]), dim=1)
        b = F.normalize(encoder(views[1][micro * 4:micro * 4 + 4]), dim=1)
        logits = a @ b.t() / temperature
        target = torch.arange(4)
        nce = F.cross_entropy(logits, target, label_smoothing=0.1)
        dist = torch.cdist(a, b)
        # hardest negative: the closest b that is not the positive
        hard = dist.masked_fill(eye, float("inf")).topk(1, dim=1, largest=False)
        negatives = b[hard.indices.squeeze(1)]
        trip = triplet(a, b, negatives)
        flags = torch.tensor([1.0, -1.0, 1.0, -1.0])
        cos = cosine(a, torch.where(flags[:, None] > 0, b, negatives), flags)
        loss = (nce + trip + cos) / 2
        loss.backward()
        print(step, micro, f"nce={nce.item():.5f} trip={trip.item():.5f} cos={cos.item():.5f}",
              hard.indices.flatten().tolist(), loss.grad_fn.name())
    grad_norm = torch.nn.utils.clip_grad_norm_(encoder.parameters(), max_norm=5.0)
    print("grad norm", round(grad_norm.item(), 5))
    opt.step()
    ema.update_parameters(encoder)

print(ema.n_averaged, type(ema.module).__name__)
print(list(dict(ema.named_buffers()).keys()))
with torch.no_grad():
    e = F.normalize(ema(x), dim=-1)
    sim = F.cosine_similarity(e[:, None, :], e[None, :, :], dim=-1)
    print(sim.diagonal())
    print(torch.cdist(e[:3], e[3:6], p=1))
    top = sim.masked_fill(torch.eye(8, dtype=torch.bool), -2).topk(2, dim=1)
    print(top.values[:3], top.indices[:3])
    print("recall@1", (top.indices[:, 0] == torch.arange(8).roll(1)).float().mean())
for (n, p), q in zip(encoder.named_parameters(), ema.module.parameters()):
    print(n, tuple(p.shape), round((p - q).abs().max().item(), 5))
print(F.normalize(torch.zeros(2, 3), dim=1), F.pairwise_distance(x[:2], x[2:4]))
try:
    torch.cdist(x[:2], torch.randn(2, 5))
except RuntimeError as e:
    print("cdist error:", e)
try:
    triplet(a, b[:3], negatives)
except RuntimeError as e:
    print("triplet error:", e)
