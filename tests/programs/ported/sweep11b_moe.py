"""Mixture-of-experts layer: top-k softmax gating, F.one_hot, a load-balancing auxiliary loss,
token dispatch with index_select / index_add_ / scatter_add_, expert capacity enforced with
cumsum masks, torch.bincount for expert counts, Adam on a toy regression."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoE(nn.Module):
    def __init__(self, d=8, n_experts=4, k=2, capacity=5):
        super().__init__()
        self.k, self.n, self.capacity = k, n_experts, capacity
        self.gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 16), nn.GELU(), nn.Linear(16, d)) for _ in range(n_experts))

    def forward(self, x):
        probs = F.softmax(self.gate(x), dim=-1)                      # (N, E)
        top_p, top_i = probs.topk(self.k, dim=-1)                    # (N, k)
        top_p = top_p / top_p.sum(-1, keepdim=True)
        onehot = F.one_hot(top_i, self.n)                            # (N, k, E) int64
        # position of each (token, slot) within its expert's queue, slot-major like GShard
        flat = onehot.transpose(0, 1).reshape(-1, self.n)            # (k*N, E)
        pos = (torch.cumsum(flat, dim=0) - 1) * flat
        keep = (pos < self.capacity) & (flat > 0)
        keep = keep.reshape(self.k, -1, self.n).transpose(0, 1).any(-1)  # (N, k)
        # load balancing: fraction routed (first choice) times mean gate probability
        frac = onehot[:, 0].float().mean(0)
        aux = self.n * (frac * probs.mean(0)).sum()
        out = torch.zeros_like(x)
        for e in range(self.n):
            sel = (top_i == e) & keep
            tok = sel.any(-1).nonzero().squeeze(-1)
            if tok.numel() == 0:
                continue
            w = (top_p * sel).sum(-1).index_select(0, tok)
            y = self.experts[e](x.index_select(0, tok)) * w[:, None]
            out = out.index_add(0, tok, y)
        counts = torch.bincount(top_i[keep], minlength=self.n)
        return out, aux, counts, keep


moe = MoE()
head = nn.Linear(8, 1)
params = list(moe.parameters()) + list(head.parameters())
opt = torch.optim.Adam(params, lr=1e-2)
x = torch.randn(12, 8)
target = torch.sin(x.sum(-1, keepdim=True))

for step in range(6):
    out, aux, counts, keep = moe(x)
    pred = head(out + x)
    loss = F.mse_loss(pred, target)
    total = loss + 0.01 * aux
    opt.zero_grad()
    total.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} aux {aux.item():.5f} counts {counts.tolist()} "
          f"dropped {int((~keep).sum())}")

print(out.grad_fn.name(), aux.grad_fn.name(), counts.dtype, keep.dtype, keep.shape)
print(moe.gate.weight.grad.norm().item() > 0, [round(float(p.grad.abs().sum()), 4)
                                               for p in moe.experts[0].parameters()])

# scatter_add_ dispatch into a (E, capacity, d) buffer, then combine back
with torch.no_grad():
    probs = F.softmax(moe.gate(x), -1)
    top1 = probs.argmax(-1)
    oh = F.one_hot(top1, moe.n)
    slot = ((oh.cumsum(0) - 1) * oh).sum(-1)
    ok = slot < moe.capacity
    flat_idx = (top1 * moe.capacity + slot)[ok]
    buf = torch.zeros(moe.n * moe.capacity, 8)
    buf.scatter_add_(0, flat_idx[:, None].expand(-1, 8), x[ok])
    buf = buf.view(moe.n, moe.capacity, 8)
    print("buffer", buf.shape, buf.abs().sum(dim=(1, 2)))
    print("slots", slot.tolist(), ok.sum().item())
    best = torch.full((moe.n,), -1.0).index_reduce_(0, top1, probs.max(-1).values, "amax")
    mean_p = torch.zeros(moe.n).index_reduce(0, top1, probs.max(-1).values, "mean", include_self=False)
    print("max gate per expert", best, mean_p)
    print("first token's expert", torch.zeros(moe.n).scatter(0, top1[:1], torch.tensor(1.0)))
    print("bincount", torch.bincount(top1, minlength=moe.n), torch.bincount(top1, weights=probs.max(-1).values))
    y = torch.stack([moe.experts[e](buf[e]) for e in range(moe.n)])
    back = y.view(-1, 8)[flat_idx]
    print("combined", back.shape, round(back.sum().item(), 4))

try:
    torch.bincount(torch.tensor([1, -1]))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    F.one_hot(torch.tensor([0, 5]), 4)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.zeros(3).index_add_(0, torch.tensor([0, 1]), torch.ones(3))
except (RuntimeError, IndexError) as e:
    print(type(e).__name__, e)
