"""Knowledge-graph embedding (TransE) + matrix-factorisation recommender: nn.Embedding with
max_norm renormalisation, negative sampling by corrupting heads/tails, margin_ranking_loss and
nn.MarginRankingLoss, clip_grad_norm_/clip_grad_value_, Adagrad, ranking metrics (MRR, hits@k)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NE, NR, DIM = 10, 3, 6
triples = torch.stack([torch.randint(0, NE, (20,)), torch.randint(0, NR, (20,)), torch.randint(0, NE, (20,))], 1)
print(triples[:5], triples.shape)


class TransE(nn.Module):
    def __init__(self):
        super().__init__()
        self.ent = nn.Embedding(NE, DIM, max_norm=1.0)
        self.rel = nn.Embedding(NR, DIM)
        nn.init.uniform_(self.ent.weight, -0.5, 0.5)
        nn.init.xavier_uniform_(self.rel.weight)

    def score(self, h, r, t):
        return -(self.ent(h) + self.rel(r) - self.ent(t)).norm(p=1, dim=-1)


model = TransE()
print(model, model.ent.weight.norm(dim=1)[:4])
opt = torch.optim.Adagrad(model.parameters(), lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)
crit = nn.MarginRankingLoss(margin=1.0)
for epoch in range(6):
    h, r, t = triples.unbind(1)
    corrupt_head = torch.rand(len(h)) < 0.5
    rnd = torch.randint(0, NE, (len(h),))
    h2 = torch.where(corrupt_head, rnd, h)
    t2 = torch.where(corrupt_head, t, rnd)
    pos = model.score(h, r, t)
    neg = model.score(h2, r, t2)
    loss = crit(pos, neg, torch.ones_like(pos))
    opt.zero_grad()
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=2.0)
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.5f} grad_norm {total.item():.5f} max_ent_norm {model.ent.weight.norm(dim=1).max().item():.4f}")

print(loss.grad_fn.name(), pos.grad_fn.name())
print(F.margin_ranking_loss(pos, neg, -torch.ones_like(pos), margin=0.5, reduction="none")[:5])
with torch.no_grad():
    h, r, t = triples[:4].unbind(1)
    all_t = torch.arange(NE)
    scores = model.score(h.unsqueeze(1), r.unsqueeze(1), all_t.unsqueeze(0))
    print(scores.shape, scores[0])
    ranks = (scores > scores.gather(1, t.unsqueeze(1))).sum(1) + 1
    print("ranks", ranks, "MRR", (1.0 / ranks.float()).mean().item(), "hits@3", (ranks <= 3).float().mean().item())
    top = scores.topk(3, dim=1, largest=True, sorted=True)
    print(top.indices, top.values)

# matrix factorisation recommender
torch.manual_seed(1)
users, items = 8, 12
R = (torch.rand(users, items) < 0.3).float() * torch.randint(1, 6, (users, items)).float()
obs = R.nonzero()
print(obs.shape, R.sum(), obs[:4])


class MF(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.U = nn.Embedding(users, k)
        self.I = nn.Embedding(items, k)
        self.ub = nn.Embedding(users, 1)
        self.ib = nn.Embedding(items, 1)
        self.mu = nn.Parameter(torch.tensor(R[R > 0].mean()))
        for e in (self.U, self.I):
            nn.init.normal_(e.weight, std=0.1)
        nn.init.zeros_(self.ub.weight); nn.init.zeros_(self.ib.weight)

    def forward(self, u, i):
        return (self.U(u) * self.I(i)).sum(-1) + self.ub(u).squeeze(-1) + self.ib(i).squeeze(-1) + self.mu


mf = MF()
print([(n, tuple(p.shape)) for n, p in mf.named_parameters()])
opt = torch.optim.SGD(mf.parameters(), lr=0.5)
for step in range(6):
    u, i = obs[:, 0], obs[:, 1]
    pred = mf(u, i)
    loss = F.mse_loss(pred, R[u, i]) + 1e-3 * (mf.U.weight.pow(2).sum() + mf.I.weight.pow(2).sum())
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(mf.parameters(), 0.2)
    opt.step()
    print(f"mf step {step} loss {loss.item():.5f} mu {mf.mu.item():.4f}")
print(mf.U.weight.grad.abs().max(), mf.mu.grad)
try:
    mf(torch.tensor([users]), torch.tensor([0]))
except Exception as e:
    print(type(e).__name__, e)
try:
    crit(pos, neg[:3], torch.ones(3))
except Exception as e:
    print(type(e).__name__, e)
