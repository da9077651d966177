"""Metric learning: a siamese embedding net trained with TripletMarginLoss, CosineEmbeddingLoss
and MarginRankingLoss, F.normalize, cdist/topk retrieval, PairwiseDistance, CosineSimilarity,
TripletMarginWithDistanceLoss, and the Rprop / ASGD optimizers."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES, DIM = 4, 6
centers = torch.randn(N_CLASSES, DIM) * 2
labels = torch.arange(N_CLASSES).repeat_interleave(8)
data = centers[labels] + 0.5 * torch.randn(len(labels), DIM)


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM, 16), nn.PReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return F.normalize(self.net(x), p=2, dim=1)


def triplets(g):
    a = torch.randint(0, len(labels), (16,), generator=g)
    pos, neg = [], []
    for i in a.tolist():
        same = (labels == labels[i]).nonzero().flatten()
        diff = (labels != labels[i]).nonzero().flatten()
        pos.append(same[torch.randint(0, len(same), (1,), generator=g)].item())
        neg.append(diff[torch.randint(0, len(diff), (1,), generator=g)].item())
    return a, torch.tensor(pos), torch.tensor(neg)


model = Embed()
print(model)
triplet = nn.TripletMarginLoss(margin=0.5, p=2)
cosine = nn.CosineEmbeddingLoss(margin=0.2)
opt = torch.optim.Rprop(model.parameters(), lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 1.0))
g = torch.Generator().manual_seed(1)
for step in range(12):
    a, p, n = triplets(g)
    ea, ep, en = model(data[a]), model(data[p]), model(data[n])
    lt = triplet(ea, ep, en)
    target = torch.where(torch.rand(16, generator=g) > 0.5, 1, -1)
    other = torch.where(target > 0, p, n)
    lc = cosine(ea, model(data[other]), target)
    loss = lt + lc
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} triplet {lt.item():.5f} cosine {lc.item():.5f} grad_fn {loss.grad_fn.name()}")
print(sorted(opt.state[model.net[0].weight].keys()), opt.state[model.net[0].weight]["step"])
print(lt.grad_fn.name(), lc.grad_fn.name())

with torch.no_grad():
    emb = model(data)
    d = torch.cdist(emb, emb)
    d.fill_diagonal_(float("inf"))
    vals, idx = d.topk(3, dim=1, largest=False)
    recall = (labels[idx[:, 0]] == labels).float().mean()
    print(f"recall@1 {recall.item():.4f}")
    print(idx[:6])
    print(torch.round(vals[:4], decimals=3))
    sim = emb @ emb.T
    print(sim.argmax(dim=1)[:8], torch.round(sim.diagonal()[:4], decimals=4))

pd = nn.PairwiseDistance(p=1.5, eps=1e-6, keepdim=True)
cs = nn.CosineSimilarity(dim=1, eps=1e-8)
x1, x2 = torch.randn(3, 5), torch.randn(3, 5)
print(pd(x1, x2), cs(x1, x2))
print(F.pairwise_distance(x1, x2), F.cosine_similarity(x1[:, None], x2[None], dim=-1))

rank = nn.MarginRankingLoss(margin=0.1, reduction="none")
s1 = torch.randn(5, requires_grad=True)
s2 = torch.randn(5)
y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0])
r = rank(s1, s2, y)
print(r, r.grad_fn.name())
r.mean().backward()
print(s1.grad)

twd = nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: 1 - F.cosine_similarity(u, v),
                                       margin=0.3, swap=True)
u = torch.randn(4, 5, requires_grad=True)
v, w = torch.randn(4, 5), torch.randn(4, 5)
lw = twd(u, v, w)
lw.backward()
print(f"{lw.item():.6f}", u.grad.abs().sum().item() > 0)
print(F.triplet_margin_loss(u, v, w, margin=1.0, p=1, swap=True, reduction="none"))

model2 = Embed()
asgd = torch.optim.ASGD(model2.parameters(), lr=0.05, lambd=1e-3, alpha=0.75, t0=3)
for step in range(6):
    a, p, n = triplets(g)
    loss = triplet(model2(data[a]), model2(data[p]), model2(data[n]))
    asgd.zero_grad()
    loss.backward()
    asgd.step()
    print(f"asgd {step} {loss.item():.5f}")
st = asgd.state[model2.net[0].bias]
print(sorted(st.keys()), f"{st['eta'].item():.6f}", f"{st['mu'].item():.6f}", st["step"])
print(torch.round(st["ax"][:4], decimals=4))
