"""Graph classification over a mini-batch of small random "molecules" merged into one disjoint
graph: node offsets from cumsum + repeat_interleave, undirected edges deduplicated with
torch.unique(dim=1), edge features, a GIN-style layer with a learnable eps and an
edge-conditioned message (index_select gathers, index_add_ sums), mean aggregation with an
in-place scatter_reduce_ (include_self=False) checked against index_reduce_, DropEdge masks from a
seeded Generator, global mean / max pooling per graph, BCE training, and index errors a graph
library would hit."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = torch.Generator().manual_seed(3)
FEAT, EDGE_FEAT, HID = 5, 2, 16


def random_graph(n):
    """A ring (so every node has a neighbour) plus a few random chords."""
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    chords = torch.randint(0, n, (2, 2), generator=gen)
    chords = chords[:, chords[0] != chords[1]]
    return torch.cat([ring, chords], dim=1)


sizes = torch.tensor([5, 7, 4, 6, 5, 7, 6, 4])
graphs = [random_graph(int(n)) for n in sizes]
offsets = torch.cumsum(sizes, 0) - sizes
batch = torch.repeat_interleave(sizes, output_size=int(sizes.sum()))   # graph id per node
print("batch check", torch.equal(batch, torch.arange(len(sizes)).repeat_interleave(sizes)))
edges = torch.cat([g + off for g, off in zip(graphs, offsets)], dim=1)
edges = torch.cat([edges, edges.flip(0)], dim=1)       # both directions
edge_index = torch.unique(edges, dim=1)
N, E = int(sizes.sum()), edge_index.size(1)
print("nodes", N, "edges before/after unique", edges.size(1), E, edge_index.dtype)
print("offsets", offsets.tolist(), "batch", batch[:12].tolist())
src, dst = edge_index
deg = torch.bincount(dst, minlength=N)
print("degree", deg.min().item(), deg.max().item(), deg.float().mean().item())
print("same graph", bool((batch[src] == batch[dst]).all()))

# node features: one-hot "atom type" plus a scalar; a label per graph from its structure
atom = torch.randint(0, FEAT - 1, (N,), generator=gen)
x = torch.cat([F.one_hot(atom, FEAT - 1).float(), torch.rand(N, 1, generator=gen)], dim=1)
edge_attr = torch.stack([(atom[src] == atom[dst]).float(), (src - dst).abs().float() / 7], 1)
per_graph_deg = torch.zeros(len(sizes)).index_add_(0, batch, deg.float()) / sizes
y = (per_graph_deg > per_graph_deg.median()).float()
print("x", x.shape, "edge_attr", edge_attr.shape, "y", y.tolist())


def mean_aggregate(h, src, dst, n):
    idx = dst[:, None].expand(-1, h.size(1))
    return h.new_zeros(n, h.size(1)).scatter_reduce_(0, idx, h.index_select(0, src), "mean",
                                                     include_self=False)


class EdgeGIN(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.edge = nn.Linear(EDGE_FEAT, d_in)
        self.mlp = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out))

    def forward(self, h, edge_index, edge_attr, edge_weight):
        src, dst = edge_index
        msg = F.relu(h.index_select(0, src) + self.edge(edge_attr)) * edge_weight[:, None]
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        return self.mlp((1 + self.eps) * h + agg)


class GraphNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([EdgeGIN(FEAT, HID), EdgeGIN(HID, HID)])
        self.norms = nn.ModuleDict({"0": nn.LayerNorm(HID), "1": nn.LayerNorm(HID)})
        self.head = nn.Linear(2 * HID, 1)

    def forward(self, x, edge_index, edge_attr, batch, n_graphs, edge_weight):
        h = x
        for i, layer in enumerate(self.layers):
            h = F.relu(self.norms[str(i)](layer(h, edge_index, edge_attr, edge_weight)))
        counts = torch.bincount(batch, minlength=n_graphs).clamp(min=1)
        mean = torch.zeros(n_graphs, h.size(1)).index_add_(0, batch, h) / counts[:, None]
        peak = torch.full((n_graphs, h.size(1)), float("-inf")).scatter_reduce(
            0, batch[:, None].expand_as(h), h, "amax", include_self=True)
        return self.head(torch.cat([mean, peak], 1)).squeeze(1)


h_mean = mean_aggregate(x, src, dst, N)
check = x.new_zeros(N, FEAT).index_reduce_(0, dst, x[src], "mean", include_self=False)
manual = torch.zeros(N, FEAT).index_add_(0, dst, x[src]) / deg[:, None]
print("mean agg", h_mean.shape, torch.allclose(h_mean, check), torch.allclose(h_mean, manual))

model = GraphNet()
print([name for name, _ in model.named_modules()])
print([k for k in model.state_dict() if k.startswith("layers.0")])
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
loss_fn = nn.BCEWithLogitsLoss()
for step in range(12):
    # DropEdge as a message mask: the edge list keeps its shape from step to step
    keep = torch.rand(E, generator=gen) > 0.2
    logits = model(x, edge_index, edge_attr, batch, len(sizes), keep.float())
    loss = loss_fn(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(f"step {step} kept {int(keep.sum())} loss {loss.item():.4f} {loss.grad_fn.name()}")

print("eps", [f"{layer.eps.item():.4f}" for layer in model.layers])
print("eps grad", model.layers[0].eps.grad.shape, model.layers[1].edge.weight.grad.shape)

with torch.inference_mode():
    logits = model(x, edge_index, edge_attr, batch, len(sizes), torch.ones(E))
    prob = torch.sigmoid(logits)
print("inference", logits.requires_grad, logits.is_inference(), prob.round(decimals=3).tolist())
print("accuracy", ((prob > 0.5).float() == y).float().mean().item())

# a node with no incoming edge: include_self=False leaves the initial value, index_add_ adds 0
lonely = torch.tensor([[0, 1], [1, 0]])
out = torch.full((3, 1), 7.0).scatter_reduce_(0, lonely[1][:, None], torch.ones(2, 1), "mean",
                                              include_self=False)
print("isolated node", out.flatten().tolist())

for bad in (lambda: x.index_select(0, src.float()),
            lambda: torch.zeros(3, 2).index_add_(0, torch.tensor([0, 1]), torch.ones(2, 2).double()),
            lambda: torch.zeros(3).scatter_reduce_(0, torch.tensor([0]), torch.ones(1), "avg"),
            lambda: torch.zeros(3, FEAT).index_add_(0, torch.tensor([0, 1]), torch.ones(3, FEAT))):
    try:
        bad()
    except (RuntimeError, IndexError) as e:
        print(type(e).__name__ + ":", str(e).splitlines()[0])

# a malformed size vector (a bug upstream) must fail loudly, not build a wrong batch
try:
    torch.repeat_interleave(torch.tensor([3, -1, 2]))
except RuntimeError as e:
    print("RuntimeError:", e)
