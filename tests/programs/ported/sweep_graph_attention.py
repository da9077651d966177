"""A small graph neural network: GCN-style message passing with index_add_/scatter_add_,
a GAT-style attention with scatter softmax (scatter_reduce amax), gather, einsum, node
classification with masks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_nodes, feat, classes = 12, 6, 3
x = torch.randn(num_nodes, feat)
# ring + chords, both directions
src = torch.cat([torch.arange(num_nodes), torch.tensor([0, 3, 5, 7])])
dst = torch.cat([(torch.arange(num_nodes) + 1) % num_nodes, torch.tensor([6, 9, 11, 2])])
edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
self_loops = torch.arange(num_nodes).repeat(2, 1)
edge_index = torch.cat([edge_index, self_loops], dim=1)
print(edge_index.shape, edge_index[:, :5])
y = torch.randint(0, classes, (num_nodes,))
train_mask = torch.zeros(num_nodes, dtype=torch.bool)
train_mask[torch.randperm(num_nodes)[:8]] = True
print(train_mask, y)

deg = torch.zeros(num_nodes).index_add_(0, edge_index[1], torch.ones(edge_index.size(1)))
print(deg)
norm = deg.pow(-0.5)
norm[torch.isinf(norm)] = 0


class GCNLayer(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = nn.Linear(i, o, bias=False)
        self.bias = nn.Parameter(torch.zeros(o))

    def forward(self, h, ei):
        h = self.lin(h)
        w = norm[ei[0]] * norm[ei[1]]
        msg = h[ei[0]] * w.unsqueeze(-1)
        out = torch.zeros_like(h).index_add_(0, ei[1], msg)
        return out + self.bias


def scatter_softmax(scores, index, n):
    mx = torch.full((n, scores.size(1)), -float("inf")).scatter_reduce(
        0, index.unsqueeze(-1).expand_as(scores), scores, reduce="amax", include_self=True)
    ex = (scores - mx[index]).exp()
    den = torch.zeros(n, scores.size(1)).scatter_add_(0, index.unsqueeze(-1).expand_as(ex), ex)
    return ex / den.gather(0, index.unsqueeze(-1).expand_as(ex))


class GATLayer(nn.Module):
    def __init__(self, i, o, heads=2):
        super().__init__()
        self.heads, self.o = heads, o
        self.W = nn.Parameter(torch.empty(heads, i, o))
        self.a_src = nn.Parameter(torch.empty(heads, o))
        self.a_dst = nn.Parameter(torch.empty(heads, o))
        nn.init.xavier_uniform_(self.W)
        nn.init.xavier_normal_(self.a_src)
        nn.init.xavier_normal_(self.a_dst)

    def forward(self, h, ei):
        hw = torch.einsum("ni,hio->nho", h, self.W)
        e = (hw * self.a_src).sum(-1)[ei[0]] + torch.einsum("nho,ho->nh", hw, self.a_dst)[ei[1]]
        alpha = scatter_softmax(F.leaky_relu(e, 0.2), ei[1], h.size(0))
        msg = hw[ei[0]] * alpha.unsqueeze(-1)
        out = torch.zeros(h.size(0), self.heads, self.o).index_add(0, ei[1], msg)
        return out.mean(1), alpha


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.g1 = GCNLayer(feat, 16)
        self.g2 = GATLayer(16, classes)

    def forward(self, h, ei):
        h = F.dropout(F.elu(self.g1(h, ei)), 0.2, self.training)
        return self.g2(h, ei)


model = Net()
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=1e-2)
for epoch in range(15):
    model.train()
    out, alpha = model(x, edge_index)
    loss = F.cross_entropy(out[train_mask], y[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 3 == 0:
        model.eval()
        with torch.no_grad():
            pred = model(x, edge_index)[0].argmax(1)
        tr = (pred[train_mask] == y[train_mask]).float().mean().item()
        te = (pred[~train_mask] == y[~train_mask]).float().mean().item()
        print(f"epoch {epoch:2d} loss {loss.item():.4f} train {tr:.3f} test {te:.3f}")
print(alpha.shape, f"{alpha.sum().item():.4f}")
per_node = torch.zeros(num_nodes, 2).index_add_(0, edge_index[1], alpha)
print(per_node)
print(torch.bincount(edge_index[1], minlength=num_nodes))
dense = torch.zeros(num_nodes, num_nodes).index_put_((edge_index[0], edge_index[1]),
                                                     torch.ones(edge_index.size(1)), accumulate=True)
print(dense.sum(), torch.equal(dense, dense.t()))
print((dense @ x).sum(0))
neigh = dense[0].nonzero().squeeze(1)
print(neigh, x[neigh].mean(0))
