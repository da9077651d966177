"""A Siamese embedding net trained with batch-hard triplet mining: pairwise distances by
torch.cdist (p=2 and p=1), the hardest positive by a masked max and the hardest negatives by
topk(largest=False) over a diagonal-masked matrix; TripletMarginLoss (swap, reduction='none'),
a cosine-distance triplet_margin_with_distance_loss and CosineEmbeddingLoss on mined pairs;
recall@k evaluated from the sorted neighbour lists, and a few mistakes a user would catch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_cls, per_cls, dim_in, dim_emb = 4, 3, 10, 6


class EmbedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim_in, 16), nn.BatchNorm1d(16), nn.ReLU(),
                                  nn.Linear(16, dim_emb))

    def forward(self, x):
        return F.normalize(self.body(x), dim=1)


centers = torch.randn(n_cls, dim_in) * 2
labels = torch.arange(n_cls).repeat_interleave(per_cls)
x = centers[labels] + 2.0 * torch.randn(n_cls * per_cls, dim_in)

net = EmbedNet()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True)
triplet = nn.TripletMarginLoss(margin=1.0, p=2, swap=True)
cos_loss = nn.CosineEmbeddingLoss(margin=0.2)
print(triplet, cos_loss, sep="\n")

same = labels[:, None] == labels[None, :]
eye = torch.eye(len(labels), dtype=torch.bool)
print("positives per row:", (same & ~eye).sum(1).tolist())


def mine(emb):
    d = torch.cdist(emb, emb)                            # (N, N)
    pos_d = d.masked_fill(~same | eye, float("-inf"))
    hard_pos = pos_d.argmax(1)
    neg_d = d.masked_fill(same, float("inf"))
    _, hard_neg = neg_d.topk(2, dim=1, largest=False)  # two hardest negatives each
    return d, hard_pos, hard_neg


for step in range(6):
    net.train()
    emb = net(x)
    d, hp, hn = mine(emb.detach())
    a = emb.repeat_interleave(2, dim=0)
    p = emb[hp].repeat_interleave(2, dim=0)
    n = emb[hn.reshape(-1)]
    l_trip = triplet(a, p, n)
    # cosine pairs: hardest positive (+1) and hardest negative (-1)
    target = torch.cat([torch.ones(len(x)), -torch.ones(len(x))])
    l_cos = cos_loss(torch.cat([emb, emb]), torch.cat([emb[hp], emb[hn[:, 0]]]), target)
    loss = l_trip + 0.5 * l_cos
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"step {step} triplet {l_trip.item():.5f} cos {l_cos.item():.5f} "
              f"total {loss.item():.5f} grad_fn {loss.grad_fn.name()}")

print("cdist grad_fn:", torch.cdist(emb, emb).grad_fn.name())
print("hard_neg", hn.shape, hn.dtype, "hard_pos[:6]", hp[:6].tolist())

# per-triplet losses with a cosine distance
net.eval()
with torch.no_grad():
    emb = net(x)
per = F.triplet_margin_with_distance_loss(
    emb, emb[hp], emb[hn[:, 0]],
    distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), margin=1.5,
    reduction="none")
print("per-triplet", per.shape, [round(v, 4) for v in per.tolist()])
none_loss = nn.TripletMarginLoss(margin=3.0, p=1, reduction="none")(emb, emb[hp], emb[hn[:, 1]])
print("p=1 none", none_loss.shape, round(none_loss.sum().item(), 4))

# retrieval: rank everyone else by L1 and L2 distance
for pnorm in (1.0, 2.0):
    d = torch.cdist(emb.unsqueeze(0), emb.unsqueeze(0), p=pnorm).squeeze(0)
    d.fill_diagonal_(float("inf"))
    order = d.argsort(dim=1)
    hits = same.gather(1, order)
    for k in (1, 3):
        recall = hits[:, :k].any(1).float().mean()
        print(f"p={pnorm} recall@{k} {recall.item():.4f}")
    vals, idx = torch.topk(-d, k=3, dim=1, sorted=True)
    print("top3 row0", idx[0].tolist(), [round(-v, 4) for v in vals[0].tolist()])

pdist = nn.PairwiseDistance(p=2, eps=1e-6, keepdim=True)
print(pdist, pdist(emb[:3], emb[3:6]).shape)
print("pdist vec", [round(v, 4) for v in F.pdist(emb[:4]).tolist()])
sim = emb @ emb.T
print("sim diag", round(sim.diagonal().mean().item(), 5), sim.dtype)

# mistakes
try:
    torch.cdist(emb, torch.randn(5, dim_emb + 1))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.cdist(emb, emb, p=-1)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    emb.topk(20, dim=1)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    cos_loss(emb, emb, torch.ones(3))
except RuntimeError as e:
    print("RuntimeError:", e)
sd = net.state_dict()
print(list(sd.keys()))
print(sd["body.1.num_batches_tracked"])
