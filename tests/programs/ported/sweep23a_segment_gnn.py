# Node classification on a small synthetic citation-style graph without torch_scatter:
# messages gathered along an edge list, aggregated per destination with index_add_ (sum and
# degree-normalised mean), scatter_reduce (mean / amax with include_self=False) and
# index_reduce_, a symmetric-normalised GCN step through a sparse COO adjacency, then a
# two-layer GraphSAGE-style model trained with train/val/test masks.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, C, D = 24, 3, 6
labels = torch.arange(N) % C
feats = F.one_hot(labels, C).float() @ torch.randn(C, D) + 0.8 * torch.randn(N, D)
# mostly intra-class edges, a few across classes, made undirected
src = torch.randint(0, N, (40,))
dst = (src + C * torch.randint(1, 4, (40,))) % N
noise = torch.randint(0, N, (8,))
src = torch.cat([src, noise])
dst = torch.cat([dst, (noise + 1) % N])
edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
edge_index = torch.unique(edge_index, dim=1)
edge_index = edge_index[:, edge_index[0] != edge_index[1]]
print("edges", edge_index.shape, edge_index.dtype, edge_index[:, :5].tolist())

deg = torch.zeros(N).index_add_(0, edge_index[1], torch.ones(edge_index.size(1)))
print("degree", deg.long().tolist(), "bincount agrees",
      torch.equal(deg.long(), torch.bincount(edge_index[1], minlength=N)))
isolated = (deg == 0).nonzero().flatten()
print("isolated", isolated.tolist())

# the same neighbourhood mean three ways
msg = feats[edge_index[0]]
summed = torch.zeros(N, D).index_add_(0, edge_index[1], msg)
mean_a = summed / deg.clamp(min=1).unsqueeze(1)
mean_b = torch.zeros(N, D).scatter_reduce(0, edge_index[1].unsqueeze(1).expand(-1, D), msg,
                                          reduce="mean", include_self=False)
mean_c = torch.zeros(N, D).index_reduce_(0, edge_index[1], msg, "mean", include_self=False)
print("means agree", torch.allclose(mean_a, mean_b, atol=1e-6), torch.allclose(mean_b, mean_c, atol=1e-6))
amax = torch.full((N, D), -1e4).scatter_reduce(0, edge_index[1].unsqueeze(1).expand(-1, D), msg,
                                               reduce="amax", include_self=False)
print("amax row 0", amax[0], "\nsum row 0", summed[0])
prod = torch.ones(N).scatter_reduce(0, edge_index[1], msg[:, 0], reduce="prod")
print("prod", prod[:4])

# symmetric normalisation D^-1/2 (A + I) D^-1/2 as a sparse matrix
loops = torch.arange(N).repeat(2, 1)
full = torch.cat([edge_index, loops], dim=1)
d = torch.zeros(N).index_add_(0, full[1], torch.ones(full.size(1)))
w = d[full[0]].rsqrt() * d[full[1]].rsqrt()
adj = torch.sparse_coo_tensor(full.flip(0), w, (N, N)).coalesce()
print("adj", adj.layout, adj._nnz(), adj.is_coalesced(), adj.to_dense().sum(1)[:4])
gcn_out = torch.sparse.mm(adj, feats)
dense_out = adj.to_dense() @ feats
print("sparse == dense", torch.allclose(gcn_out, dense_out, atol=1e-6), gcn_out.shape)


class SAGELayer(nn.Module):
    def __init__(self, d_in, d_out, aggr):
        super().__init__()
        self.aggr = aggr
        self.self_lin = nn.Linear(d_in, d_out)
        self.neigh_lin = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x, edge_index):
        msg = x[edge_index[0]]
        idx = edge_index[1].unsqueeze(1).expand_as(msg)
        out = torch.zeros_like(x).scatter_reduce(0, idx, msg, reduce=self.aggr,
                                                 include_self=False)
        return self.self_lin(x) + self.neigh_lin(out)


class SAGE(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = SAGELayer(D, 16, "mean")
        self.l2 = SAGELayer(16, C, "amax")
        self.drop = nn.Dropout(0.3)

    def forward(self, x, edge_index):
        h = self.drop(F.relu(self.l1(x, edge_index)))
        return self.l2(h, edge_index)


perm = torch.randperm(N, generator=torch.Generator().manual_seed(3))
train_mask = torch.zeros(N, dtype=torch.bool)
val_mask = torch.zeros(N, dtype=torch.bool)
train_mask[perm[:12]] = True
val_mask[perm[12:18]] = True
test_mask = ~(train_mask | val_mask)
print("masks", train_mask.sum().item(), val_mask.sum().item(), test_mask.sum().item())

model = SAGE()
print(model)
opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
best = (0.0, None)
for epoch in range(12):
    model.train()
    out = model(feats, edge_index)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        pred = model(feats, edge_index).argmax(1)
        accs = [(pred[m] == labels[m]).float().mean().item() for m in (train_mask, val_mask, test_mask)]
    if accs[1] > best[0]:
        best = (accs[1], {k: v.clone() for k, v in model.state_dict().items()})
    if epoch % 3 == 0 or epoch == 11:
        print(f"epoch {epoch:2d} loss {loss.item():.4f} train {accs[0]:.3f} val {accs[1]:.3f} "
              f"test {accs[2]:.3f}", out.grad_fn.name())
print("best val", best[0], sorted(best[1])[:3])
grad = model.l1.neigh_lin.weight.grad
print("grad", grad.shape, f"{grad.norm().item():.5f}", model.l2.self_lin.bias.grad)
emb = F.relu(model.l1(feats, edge_index)).detach()
centroids = torch.zeros(C, 16).index_add_(0, labels, emb) / torch.bincount(labels).unsqueeze(1)
print("centroid distances\n", torch.cdist(centroids, centroids))
