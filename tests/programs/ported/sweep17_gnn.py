"""A message-passing graph network written without graph libraries: an edge_index LongTensor,
degree normalisation with bincount, aggregation with index_add_/scatter_add_ and with
torch.sparse.mm on a sparse_coo_tensor adjacency whose edge weights are learnt, a two-head
GAT-style attention whose softmax over each node's incoming edges uses 2-D
scatter_reduce('amax', include_self=False), torch.unique with inverse and counts, and global
mean and max (index_reduce_) pooling per graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
# two graphs: nodes 0-3 and 4-6
edge_index = torch.tensor([[0, 1, 1, 2, 3, 2, 4, 5, 6, 6, 4],
                           [1, 0, 2, 3, 0, 0, 5, 6, 4, 5, 6]])
batch = torch.tensor([0, 0, 0, 0, 1, 1, 1])
n = batch.numel()
src, dst = edge_index
deg = torch.bincount(dst, minlength=n).float()
print("deg", deg.tolist(), edge_index.dtype, edge_index.shape)
graphs, inverse, counts = torch.unique(batch, return_inverse=True, return_counts=True)
print(graphs, inverse, counts)
print(torch.unique(src, sorted=True, return_counts=True))


class GCNLayer(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin = nn.Linear(i, o)

    def forward(self, x):
        h = self.lin(x)
        norm = (deg[src].clamp(min=1) * deg[dst].clamp(min=1)).rsqrt()
        out = torch.zeros_like(h).index_add_(0, dst, h[src] * norm[:, None])
        return F.relu(out + h)


class MultiHeadGAT(nn.Module):
    def __init__(self, i, o, heads=2):
        super().__init__()
        self.heads, self.o = heads, o
        self.lin = nn.Linear(i, heads * o, bias=False)
        self.att_src = nn.Parameter(torch.randn(heads, o) * 0.3)
        self.att_dst = nn.Parameter(torch.randn(heads, o) * 0.3)

    def forward(self, x):
        h = self.lin(x).view(n, self.heads, self.o)
        score = F.leaky_relu((h[src] * self.att_src).sum(-1) + (h[dst] * self.att_dst).sum(-1),
                             0.2)
        index = dst[:, None].expand(-1, self.heads)
        top = torch.zeros(n, self.heads).scatter_reduce(0, index, score, "amax",
                                                         include_self=False)
        e = (score - top.gather(0, index)).exp()
        alpha = e / torch.zeros(n, self.heads).scatter_add_(0, index, e)[dst]
        out = torch.zeros_like(h).index_add_(0, dst, alpha[..., None] * h[src])
        return out.mean(1), alpha


gcn, gat, head = GCNLayer(3, 4), MultiHeadGAT(4, 4), nn.Linear(8, 2)
opt = torch.optim.Adam([*gcn.parameters(), *gat.parameters(), *head.parameters()], lr=0.05)
x = torch.randn(n, 3)
y = torch.tensor([0, 1])
edge_weight = torch.ones(src.numel(), requires_grad=True)
for step in range(3):
    adj = torch.sparse_coo_tensor(torch.stack([dst, src]), edge_weight, (n, n))
    if step == 0:
        print(adj.is_sparse, adj.layout, adj.coalesce().indices().shape, adj.to_dense().sum(1))
    h = gcn(x)
    h2, alpha = gat(h)
    h2 = h2 + torch.sparse.mm(adj, h) / deg.clamp(min=1)[:, None]
    mean_pool = torch.zeros(len(graphs), 4).index_add_(0, inverse, h2) / counts[:, None]
    max_pool = torch.zeros(len(graphs), 4).index_reduce_(0, inverse, h2, "amax",
                                                         include_self=False)
    pooled = torch.cat([mean_pool, max_pool], dim=1)
    loss = F.cross_entropy(head(pooled), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 5), pooled.grad_fn.name(), h2.shape, adj.grad_fn.name())
    print("  alpha", [round(a, 4) for a in alpha[:, 0].tolist()], alpha.shape)
print(gat.att_src.grad, gat.att_dst.grad.shape)
print(edge_weight.grad)
print(torch.sparse.sum(adj.detach().coalesce(), dim=1), adj.detach().coalesce().values()[:4])
seg_max = torch.full((n,), -1.0).scatter_reduce(0, dst, x[src, 0], "amax", include_self=True)
print(seg_max)
print(torch.zeros(2, 3).scatter_reduce(1, torch.tensor([[0, 0, 2], [1, 1, 1]]),
                                       torch.arange(6.).view(2, 3), "mean"))
try:
    torch.zeros(3).index_add_(0, torch.tensor([0, 5]), torch.ones(2))
except (IndexError, RuntimeError) as e:
    print(type(e).__name__, e)
