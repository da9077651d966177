"""A two-tower retrieval model: a user tower pooling the watch history with nn.EmbeddingBag
(mode="mean", include_last_offset=True, padding_idx, scale_grad_by_freq) plus F.embedding_bag with per-sample
weights, an item tower over id + category embeddings, L2-normalised towers, an in-batch
softmax with a learnable temperature and a logQ popularity correction from torch.bincount,
duplicate-item masking, and recall@k / MRR evaluation with topk, argsort and searchsorted."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_USERS, N_ITEMS, N_CATS, DIM = 40, 30, 5, 16
item_cat = torch.randint(0, N_CATS, (N_ITEMS,))
# each user prefers one category; histories are variable-length lists of item ids
user_pref = torch.randint(0, N_CATS, (N_USERS,))
histories, targets = [], []
for u in range(N_USERS):
    liked = (item_cat == user_pref[u]).nonzero().flatten()
    if len(liked) == 0:
        liked = torch.arange(N_ITEMS)
    n = int(torch.randint(2, 6, ()).item())
    pick = liked[torch.randint(0, len(liked), (n + 1,))]
    histories.append(pick[:-1])
    targets.append(pick[-1])
targets = torch.stack(targets)
lengths = torch.tensor([len(h) for h in histories])
flat = torch.cat(histories)
offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
print("flat", flat.shape, flat.dtype, "offsets", offsets[:6].tolist(), offsets[-1].item())

pop = torch.bincount(flat, minlength=N_ITEMS).float() + 1.0
log_q = torch.log(pop / pop.sum())
print("popularity", pop.shape, pop.max().item(), round(log_q.min().item(), 4))


class UserTower(nn.Module):
    def __init__(self):
        super().__init__()
        # scale_grad_by_freq: items repeated in a batch's histories do not dominate updates
        self.hist = nn.EmbeddingBag(N_ITEMS + 1, DIM, mode="mean", include_last_offset=True,
                                    padding_idx=N_ITEMS, scale_grad_by_freq=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM))

    def forward(self, flat, offsets):
        return F.normalize(self.mlp(self.hist(flat, offsets)), dim=-1)


class ItemTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.item = nn.Embedding(N_ITEMS, DIM)
        self.cat = nn.Embedding(N_CATS, DIM)
        self.proj = nn.Linear(2 * DIM, DIM)

    def forward(self, ids):
        h = torch.cat([self.item(ids), self.cat(item_cat[ids])], dim=-1)
        return F.normalize(self.proj(h), dim=-1)


users, items = UserTower(), ItemTower()
print(users.hist)
log_temp = nn.Parameter(torch.tensor(0.05).log())
opt = torch.optim.Adam([*users.parameters(), *items.parameters(), log_temp], lr=0.02)

# padding: a bag made only of padding ids pools to zeros
pad_bag = users.hist(torch.tensor([N_ITEMS, N_ITEMS, 3]), torch.tensor([0, 2, 3]))
print("padding bag", pad_bag.shape, pad_bag[0].abs().sum().item(), pad_bag[1].norm().item() > 0)
w = torch.rand(len(flat))
weighted = F.embedding_bag(flat, users.hist.weight, offsets[:-1], mode="sum", per_sample_weights=w)
print("weighted bags", weighted.shape, weighted.grad_fn.name())
try:
    F.embedding_bag(flat, users.hist.weight, offsets[:-1], mode="mean", per_sample_weights=w)
except NotImplementedError as e:
    print("NotImplementedError:", e)

B = 8
for epoch in range(3):
    perm = torch.randperm(N_USERS)
    total = 0.0
    for start in range(0, N_USERS, B):
        idx = perm[start:start + B]
        bags = [histories[i] for i in idx.tolist()]
        b_flat = torch.cat(bags)
        b_off = torch.tensor([0] + [len(b) for b in bags]).cumsum(0)
        u = users(b_flat, b_off)
        pos = targets[idx]
        v = items(pos)
        logits = u @ v.T / log_temp.exp() - log_q[pos][None, :]
        # the same item twice in a batch is not a negative for itself
        dup = (pos[:, None] == pos[None, :]) & ~torch.eye(len(pos), dtype=torch.bool)
        logits = logits.masked_fill(dup, float("-inf"))
        loss = F.cross_entropy(logits, torch.arange(len(pos)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            log_temp.clamp_(min=torch.tensor(0.01).log().item())
        total += loss.item() * len(pos)
    print(f"epoch {epoch} loss {total / N_USERS:.4f} temp {log_temp.exp().item():.4f}")

print("grad", log_temp.grad is not None, users.hist.weight.grad[N_ITEMS].abs().sum().item())
with torch.no_grad():
    u_all = users(flat, offsets)
    v_all = items(torch.arange(N_ITEMS))
    scores = u_all @ v_all.T
print("scores", scores.shape, round(scores.max().item(), 4), round(scores.min().item(), 4))
for k in (1, 5, 10):
    topk = scores.topk(k, dim=1).indices
    hit = (topk == targets[:, None]).any(dim=1)
    print(f"recall@{k} {hit.float().mean().item():.4f}")
rank = (scores.argsort(dim=1, descending=True) == targets[:, None]).int().argmax(dim=1) + 1
print("mrr", round((1.0 / rank.float()).mean().item(), 4), "ranks", rank[:8].tolist())
# bucket the ranks for a report
edges = torch.tensor([1, 5, 10, N_ITEMS])
buckets = torch.searchsorted(edges, rank)
print("rank buckets", torch.bincount(buckets, minlength=len(edges)).tolist())
same_cat = (item_cat[scores.topk(5, dim=1).indices] == user_pref[:, None]).float().mean()
print("category precision@5", round(same_cat.item(), 4))
