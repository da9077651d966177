"""Graph neural networks without a graph library: edge_index message passing with index_add_,
scatter_reduce (amax / mean, include_self=False), segment_reduce over CSR-sorted edges,
symmetric degree normalisation with bincount and pow(-0.5) where isolated nodes' inf becomes 0,
a GAT-style softmax over each node's incoming edges (exp + index_add_ sums), and node
classification trained on a mask."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, FEAT, CLASSES = 7, 5, 3
# directed edges src -> dst; node 6 is isolated
edge_index = torch.tensor([[0, 1, 1, 2, 3, 3, 4, 5, 2, 0],
                           [1, 0, 2, 1, 4, 2, 3, 4, 5, 3]])
x = torch.randn(N, FEAT)
y = torch.tensor([0, 0, 1, 1, 2, 2, 0])
train_mask = torch.tensor([True, False, True, False, True, True, False])
src, dst = edge_index

deg = torch.bincount(dst, minlength=N).float()
print("in-degree", deg.tolist(), torch.bincount(src, minlength=N).tolist())
norm_d = deg.pow(-0.5)
norm_d = norm_d.masked_fill(torch.isinf(norm_d), 0.0)
edge_weight = norm_d[src] * norm_d[dst]
print("edge weights", [round(w, 4) for w in edge_weight.tolist()])


class GCNLayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin = nn.Linear(fin, fout)

    def forward(self, h):
        h = self.lin(h)
        msg = h[src] * edge_weight[:, None]
        return torch.zeros_like(h).index_add_(0, dst, msg) + h


class GATLayer(nn.Module):
    def __init__(self, fin, fout):
        super().__init__()
        self.lin = nn.Linear(fin, fout, bias=False)
        self.att = nn.Parameter(torch.randn(2 * fout) * 0.3)

    def forward(self, h):
        h = self.lin(h)
        score = F.leaky_relu(torch.cat([h[src], h[dst]], dim=1) @ self.att, 0.2)
        peak = torch.full((N,), float("-inf")).scatter_reduce(0, dst, score, "amax",
                                                               include_self=False)
        e = torch.exp(score - peak[dst])
        denom = torch.zeros(N).index_add_(0, dst, e)
        alpha = e / denom[dst]
        out = torch.zeros_like(h).index_add_(0, dst, alpha[:, None] * h[src])
        return out, alpha


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gcn = GCNLayer(FEAT, 8)
        self.gat = GATLayer(8, 8)
        self.head = nn.Linear(16, CLASSES)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        h = F.relu(self.gcn(x))
        g, alpha = self.gat(self.drop(h))
        pooled = torch.zeros(N, 8).scatter_reduce(0, dst[:, None].expand(-1, 8), h[src],
                                                 "mean", include_self=False)
        return self.head(torch.cat([g + h, pooled], dim=1)), alpha


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(4):
    model.train()
    logits, alpha = model(x)
    loss = F.cross_entropy(logits[train_mask], y[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == y)[~train_mask].float().mean()
    print(f"epoch {epoch}: loss {loss.item():.5f} val acc {acc.item():.3f} "
          f"grad norm {model.gat.att.grad.norm().item():.5f}")

alpha_sum = torch.zeros(N).index_add_(0, dst, alpha.detach())
print("attention sums", [round(a, 4) for a in alpha_sum.tolist()])
print(loss.grad_fn.name(), alpha.grad_fn.name(), logits.grad_fn.name())
feats = x[src[torch.argsort(dst, stable=True)]].requires_grad_()  # CSR order
seg_max = torch.segment_reduce(feats, "max", lengths=deg.long(), initial=0.0)
seg_mean = torch.segment_reduce(feats, "mean", lengths=torch.bincount(dst, minlength=N))
print("segment max", seg_max[:, 0], seg_max.grad_fn.name())
print("segment mean", seg_mean[:, 1], torch.autograd.grad(seg_max.sum(), feats)[0][:, 0])
vals = torch.tensor([1.0, 5.0, 2.0, 4.0])
idx = torch.tensor([0, 0, 2, 2])
for reduce in ("sum", "prod", "mean", "amax", "amin"):
    for include_self in (True, False):
        out = torch.full((3,), 3.0).scatter_reduce(0, idx, vals, reduce, include_self=include_self)
        print(reduce, include_self, out)
print(torch.zeros(3, dtype=torch.long).scatter_reduce(0, idx, idx + 3, "mean", include_self=False))
print(torch.bincount(idx, weights=torch.tensor([1.0, 2.0, 0.5, 1.5])),
      torch.bincount(torch.tensor([], dtype=torch.long)))
try:
    torch.zeros(3).index_add_(0, idx, torch.ones(3))
except (RuntimeError, IndexError) as e:
    print(type(e).__name__, e)
try:
    torch.bincount(torch.tensor([-1, 2]))
except RuntimeError as e:
    print("RuntimeError", e)
