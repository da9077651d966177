"""Message passing on a random graph: edge_index, index_add_, scatter_reduce ("amax"/"mean",
include_self=False), degrees by bincount, a GAT-style softmax over each node's neighbours, and
a mixture density head (MixtureSameFamily of Categorical and Normal) trained with Adam."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal

torch.manual_seed(0)
N, E, D = 12, 40, 8
src = torch.randint(0, N, (E,))
dst = torch.randint(0, N, (E,))
edge_index = torch.stack([src, dst])
x = torch.randn(N, D)
y = torch.randn(N)
print("edge_index", edge_index.shape, edge_index.dtype, edge_index[:, :5])
deg = torch.bincount(dst, minlength=N)
print("in-degree", deg, deg.dtype)
print("isolated", (deg == 0).nonzero().flatten())
print("weighted deg", torch.bincount(dst, weights=torch.ones(E) * 0.5, minlength=N))

agg_sum = torch.zeros(N, D).index_add_(0, dst, x[src])
agg_max = torch.zeros(N, D).scatter_reduce(0, dst.unsqueeze(1).expand(-1, D), x[src],
                                           reduce="amax", include_self=False)
agg_mean = torch.zeros(N, D).scatter_reduce(0, dst.unsqueeze(1).expand(-1, D), x[src],
                                            reduce="mean", include_self=False)
print("sum", agg_sum[:2])
print("max", agg_max[:2])
print("mean", agg_mean[:2])
print("mean check", torch.allclose(agg_mean[deg > 0],
                                   agg_sum[deg > 0] / deg[deg > 0].unsqueeze(1)))
print("include_self", torch.ones(3).scatter_reduce(0, torch.tensor([0, 0, 2]),
                                                   torch.tensor([5.0, 2.0, -1.0]), "mean"))
print("amin", torch.full((3,), 9.0).scatter_reduce(0, torch.tensor([1, 1, 2]),
                                                   torch.tensor([4.0, 2.0, 7.0]), "amin"))
print("prod", torch.ones(3).scatter_reduce(0, torch.tensor([1, 1, 2]),
                                          torch.tensor([4.0, 2.0, 7.0]), "prod",
                                          include_self=False))


def segment_softmax(scores, index, n):
    smax = torch.full((n,), float("-inf")).scatter_reduce(0, index, scores, "amax",
                                                          include_self=False)
    ex = (scores - smax[index]).exp()
    denom = torch.zeros(n).index_add(0, index, ex)
    return ex / denom[index]


class GATLayer(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.att_src = nn.Parameter(torch.randn(d_out) * 0.1)
        self.att_dst = nn.Parameter(torch.randn(d_out) * 0.1)

    def forward(self, x, edge_index):
        s, d = edge_index
        h = self.lin(x)
        e = F.leaky_relu((h * self.att_src).sum(-1)[s] + (h * self.att_dst).sum(-1)[d], 0.2)
        alpha = segment_softmax(e, d, x.shape[0])
        out = torch.zeros_like(h).index_add(0, d, alpha.unsqueeze(-1) * h[s])
        return F.elu(out + h), alpha


class MDNGraph(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.g1 = GATLayer(D, 16)
        self.g2 = GATLayer(16, 16)
        self.head = nn.Linear(16, 3 * k)

    def forward(self, x, edge_index):
        h, _ = self.g1(x, edge_index)
        h, alpha = self.g2(h, edge_index)
        logits, mu, log_sigma = self.head(h).chunk(3, dim=-1)
        mix = MixtureSameFamily(Categorical(logits=logits),
                                Normal(mu, log_sigma.clamp(-5, 3).exp()))
        return mix, alpha


model = MDNGraph()
mix, alpha = model(x, edge_index)
print("alpha sums", torch.zeros(N).index_add(0, dst, alpha)[deg > 0][:4])
print("mixture", mix.batch_shape, mix.event_shape, mix.mixture_distribution.probs.shape)
print("mixture repr", mix)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(15):
    mix, alpha = model(x, edge_index)
    loss = -mix.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} nll {loss.item():.5f}")
print("grad_fn", loss.grad_fn.name(), alpha.grad_fn.name())
print("att grad", model.g1.att_src.grad.shape, model.g1.att_src.grad.abs().sum().item() > 0)
with torch.no_grad():
    mix, _ = model(x, edge_index)
    print("mean", mix.mean[:4])
    print("variance", mix.variance[:4])
    s = mix.sample((5,))
    print("sample", s.shape, s.requires_grad)
    print("cdf", mix.cdf(torch.zeros(N))[:4])

# scatter_reduce backward for mean and amax (ties split the gradient in amax)
src_v = torch.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
idx = torch.tensor([0, 0, 0, 1])
out = torch.zeros(2).scatter_reduce(0, idx, src_v, "amax", include_self=False)
out.sum().backward()
print("amax grad", src_v.grad, out.grad_fn.name())
src_v.grad = None
out = torch.zeros(2).scatter_reduce(0, idx, src_v, "mean", include_self=False)
(out * torch.tensor([1.0, 2.0])).sum().backward()
print("mean grad", src_v.grad)
try:
    torch.zeros(2).scatter_reduce(0, idx, src_v, "maximum")
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.bincount(torch.tensor([-1, 2]))
except RuntimeError as e:
    print("RuntimeError", e)
