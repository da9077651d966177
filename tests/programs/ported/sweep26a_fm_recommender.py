"""A factorization-machine click model over multi-hot categorical features: the field
embeddings looked up with F.embedding(sparse=True) on a raw Parameter, a bag of tags pooled by
nn.EmbeddingBag (offsets, per_sample_weights, sparse grads), Adagrad on the sparse tables and
Adam on the dense head; sparse gradient accumulation across two backward calls inspected;
the clicks kept as a sparse user x item matrix, indexed by user and permuted by item."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_users, n_items, n_tags, dim = 20, 16, 12, 4


class FM(nn.Module):
    def __init__(self):
        super().__init__()
        # one table for both fields, items offset after users (as DLRM-style code packs them)
        self.table = nn.Parameter(torch.randn(n_users + n_items, dim) * 0.1)
        self.linear = nn.Parameter(torch.zeros(n_users + n_items, 1))
        self.tags = nn.EmbeddingBag(n_tags, dim, mode="sum", sparse=True)
        self.head = nn.Sequential(nn.Linear(3 * dim, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, user, item, tag_ids, tag_offsets, tag_w):
        idx = torch.stack([user, item + n_users], dim=1)                  # (B, 2)
        v = F.embedding(idx, self.table, sparse=True)                     # (B, 2, d)
        t = self.tags(tag_ids, tag_offsets, per_sample_weights=tag_w)     # (B, d)
        fields = torch.cat([v, t.unsqueeze(1)], dim=1)                    # (B, 3, d)
        # pairwise interactions: 0.5 * ((sum v)^2 - sum v^2)
        inter = 0.5 * (fields.sum(1).pow(2) - fields.pow(2).sum(1)).sum(1, keepdim=True)
        lin = F.embedding(idx, self.linear, sparse=True).sum(1)
        deep = self.head(fields.flatten(1))
        return (inter + lin + deep).squeeze(1)


def batch(n):
    user = torch.randint(0, n_users, (n,))
    item = torch.randint(0, n_items, (n,))
    # 2n tags per batch split into n bags at random cut points (some bags come out empty)
    cuts = torch.randint(0, 2 * n, (n - 1,)).sort().values
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), cuts])
    tag_ids = torch.randint(0, n_tags, (2 * n,))
    tag_w = torch.rand(2 * n)
    click = ((user % 3 == item % 3) | (item < 5)).float()
    return user, item, tag_ids, offsets, tag_w, click


model = FM()
sparse_params = [model.table, model.linear, model.tags.weight]
dense_params = list(model.head.parameters())
opt_sparse = torch.optim.Adagrad(sparse_params, lr=0.1)
opt_dense = torch.optim.Adam(dense_params, lr=0.01)
print([n for n, _ in model.named_parameters()])
print(model.tags)

B = 16
user, item, tag_ids, offsets, tag_w, click = batch(B)
logits = model(user, item, tag_ids, offsets, tag_w)
loss = F.binary_cross_entropy_with_logits(logits, click)
print("logits", logits.shape, logits.dtype, logits.grad_fn.name())
print("loss", round(loss.item(), 4), loss.grad_fn.name())
loss.backward()
g = model.table.grad
print("table grad", g.layout, g.is_sparse, g.shape, g.is_coalesced())
gc = g.coalesce()
print("nnz", g._nnz(), "->", gc._nnz(), "rows", gc.indices().shape, gc.values().shape)
print("rows touched match", torch.equal(gc.indices()[0], torch.unique(torch.cat([user, item + n_users]))))
print("dense grad norm", round(g.to_dense().norm().item(), 5))
print("tags grad", model.tags.weight.grad.is_sparse, model.tags.weight.grad.coalesce().indices().shape)
print("linear grad", model.linear.grad.is_sparse, round(torch.sparse.sum(model.linear.grad).item(), 5))
print("head grad", model.head[0].weight.grad.is_sparse, model.head[0].weight.grad.shape)

# a second backward accumulates: the sparse grads concatenate their entries
before = model.table.grad._nnz()
user2, item2, tag_ids2, offsets2, tag_w2, click2 = batch(B)
logits2 = model(user2, item2, tag_ids2, offsets2, tag_w2)
F.binary_cross_entropy_with_logits(logits2, click2).backward()
print("accumulated nnz", before, "->", model.table.grad._nnz())
opt_sparse.zero_grad(set_to_none=True)
opt_dense.zero_grad(set_to_none=True)
print("after zero_grad", model.table.grad)

for step in range(20):
    user, item, tag_ids, offsets, tag_w, click = batch(B)
    logits = model(user, item, tag_ids, offsets, tag_w)
    loss = F.binary_cross_entropy_with_logits(logits, click)
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss.backward()
    opt_sparse.step()
    opt_dense.step()
    if step % 5 == 4:
        print(f"step {step + 1} loss {loss.item():.4f}")

st = opt_sparse.state[model.table]
print(sorted(st.keys()), st["sum"].shape, st["sum"].is_sparse)
print("untouched rows keep zero state", int((st["sum"].sum(1) == 0).sum()))

# Adam refuses sparse gradients; a program probes it and falls back to SparseAdam
user, item, tag_ids, offsets, tag_w, click = batch(B)
probe = torch.optim.Adam([model.table], lr=0.01)
model(user, item, tag_ids, offsets, tag_w).sum().backward()
try:
    probe.step()
except RuntimeError as e:
    print("RuntimeError:", e)
sp = torch.optim.SparseAdam([model.table], lr=0.01)
sp.step()
print("SparseAdam state", sorted(sp.state[model.table].keys()), sp.state[model.table]["exp_avg"].is_sparse)

# the last batch's clicks as a sparse user x item matrix: one user's row, item popularity
inter = torch.sparse_coo_tensor(torch.stack([user, item]), click, (n_users, n_items))
row = inter[int(user[0])]
print("user", int(user[0]), "row", row.layout, row.shape, row.coalesce().indices().tolist())
print("popularity", torch.sparse.sum(inter, 0).to_dense())
by_item = inter.coalesce().permute(1, 0)
print("by item", by_item.shape, by_item.is_coalesced(), (by_item @ torch.ones(n_users, 1)).flatten()[:6])

# recommend: score every item for user 0 with the learned factors
with torch.no_grad():
    model.eval()
    users = torch.zeros(n_items, dtype=torch.long)
    items = torch.arange(n_items)
    empty_tags = torch.zeros(0, dtype=torch.long)
    offs = torch.zeros(n_items, dtype=torch.long)
    scores = model(users, items, empty_tags, offs, torch.zeros(0))
    top = scores.topk(5)
    print("top items", top.indices.tolist())
    print("scores", top.values)
    print("empty bags pool to zero", model.tags(empty_tags, offs[:2]).abs().sum().item())
