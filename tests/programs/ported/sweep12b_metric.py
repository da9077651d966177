"""Metric learning on toy clustered points: F.normalize embeddings, a temperature-scaled
similarity matrix with torch.eye masks and masked_fill, InfoNCE as F.cross_entropy against
arange targets, TripletMarginLoss and TripletMarginWithDistanceLoss(distance_function=...),
hard-negative mining with topk, and recall@k from torch.cdist + argsort."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES, PER_CLASS, DIM = 3, 4, 6
centers = torch.randn(N_CLASSES, DIM) * 2
labels = torch.arange(N_CLASSES).repeat_interleave(PER_CLASS)
points = centers[labels] + 0.5 * torch.randn(len(labels), DIM)

encoder = nn.Sequential(nn.Linear(DIM, 16), nn.Tanh(), nn.Linear(16, 4))
opt = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.5)
triplet = nn.TripletMarginLoss(margin=0.5, p=2)
cosine_triplet = nn.TripletMarginWithDistanceLoss(
    distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.2, swap=True)
eye = torch.eye(len(labels), dtype=torch.bool)
same = labels[:, None] == labels[None, :]


def info_nce(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    sim = sim.masked_fill(torch.eye(len(z), dtype=torch.bool), float("-inf"))
    n = len(z1)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
    return F.cross_entropy(sim, targets), sim


for step in range(4):
    emb = F.normalize(encoder(points), p=2, dim=1)
    view = F.normalize(encoder(points + 0.1 * torch.randn_like(points)), dim=-1)
    nce, sim = info_nce(emb, view)
    dist = torch.cdist(emb, emb)
    pos_dist = dist.masked_fill(~same | eye, float("-inf"))
    neg_dist = dist.masked_fill(same, float("inf"))
    hardest_pos = pos_dist.argmax(dim=1)
    hard_vals, hard_neg = neg_dist.topk(2, dim=1, largest=False)
    anchor, positive, negative = emb, emb[hardest_pos], emb[hard_neg[:, 0]]
    t_loss = triplet(anchor, positive, negative)
    c_loss = cosine_triplet(anchor, positive, negative)
    loss = nce + t_loss + c_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: nce {nce.item():.5f} triplet {t_loss.item():.5f} "
          f"cosine {c_loss.item():.5f} total {loss.item():.5f}")
    print("  hard negatives", hard_neg[:4].tolist(),
          "closest neg", round(hard_vals.min().item(), 4))

print(nce.grad_fn.name(), t_loss.grad_fn.name(), c_loss.grad_fn.name(), emb.grad_fn.name())
print("sim row", sim[0, :3], sim.isinf().sum().item())
with torch.no_grad():
    emb = F.normalize(encoder(points), dim=1)
    d = torch.cdist(emb, emb).masked_fill(eye, float("inf"))
    order = d.argsort(dim=1)
    for k in (1, 3):
        hit = (labels[order[:, :k]] == labels[:, None]).any(dim=1)
        print(f"recall@{k}", hit.float().mean().item())
    print("order", order[:3, :4].tolist())
    print("cdist p=1", torch.cdist(points[:2], points[:3], p=1))
    print("none", nn.TripletMarginLoss(reduction="none")(emb[:3], emb[3:6], emb[6:9]))
    print("pdist", F.pdist(emb[:3]), F.pairwise_distance(emb[:2], emb[2:4]))
    print(F.normalize(torch.zeros(2, 3), dim=1), F.normalize(torch.tensor([3.0, 4.0]), dim=0))
try:
    triplet(emb[:3], emb[:2], emb[:3])
except RuntimeError as e:
    print("RuntimeError", str(e)[:90])
try:
    torch.cdist(emb, emb[:, :2])
except RuntimeError as e:
    print("RuntimeError", e)
