"""A GShard/Switch-style mixture-of-experts feed-forward layer with batched expert weights:
noisy top-k gating (torch.topk, scatter into a -inf mask, softmax over the kept logits),
capacity-limited dispatch and combine tensors built from F.one_hot and cumsum and applied with
torch.einsum, the importance/load cv^2 loss, a router z-loss (logsumexp), expert statistics with
scatter_add / scatter_reduce / scatter(reduce=...) (which has no derivative), trained a few
steps with AdamW; plus the errors one_hot and topk raise."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def cv_squared(v, eps=1e-10):
    # squared coefficient of variation: pushes the experts towards equal use
    return v.float().var() / (v.float().mean() ** 2 + eps)


class MoEFFN(nn.Module):
    def __init__(self, d=8, hidden=12, n_experts=4, k=2, capacity_factor=1.25):
        super().__init__()
        self.n, self.k, self.cf = n_experts, k, capacity_factor
        self.w_gate = nn.Parameter(torch.zeros(d, n_experts))
        self.w_noise = nn.Parameter(torch.zeros(d, n_experts))
        self.w1 = nn.Parameter(torch.randn(n_experts, d, hidden) * d ** -0.5)
        self.b1 = nn.Parameter(torch.zeros(n_experts, 1, hidden))
        self.w2 = nn.Parameter(torch.randn(n_experts, hidden, d) * hidden ** -0.5)
        nn.init.normal_(self.w_gate, std=0.1)

    def gates(self, x):
        clean = x @ self.w_gate
        if self.training:
            noise_std = F.softplus(x @ self.w_noise) + 1e-2
            logits = clean + torch.randn_like(clean) * noise_std
        else:
            logits = clean
        top_vals, top_idx = logits.topk(self.k, dim=1)
        masked = torch.full_like(logits, float("-inf")).scatter(1, top_idx, top_vals)
        return F.softmax(masked, dim=1), top_idx, logits

    def forward(self, x):
        n_tok = x.shape[0]
        capacity = int(self.cf * n_tok * self.k / self.n)
        gates, top_idx, logits = self.gates(x)                         # (N, E)
        # slot-major: every token's first choice is queued before any second choice
        choice = F.one_hot(top_idx.t().reshape(-1), self.n)             # (k*N, E)
        pos = (torch.cumsum(choice, 0) - 1).masked_fill(choice == 0, 0)
        within = (pos < capacity) & (choice == 1)
        pos = pos.reshape(self.k, n_tok, self.n).sum(0)                 # (N, E)
        kept = within.reshape(self.k, n_tok, self.n).any(0)            # (N, E)
        slot = F.one_hot(pos * kept, capacity).to(x.dtype) * kept.unsqueeze(-1)
        dispatch = slot                                                # (N, E, C)
        combine = gates.unsqueeze(-1) * dispatch
        expert_in = torch.einsum("nec,nd->ecd", dispatch, x)            # (E, C, d)
        h = F.relu(torch.bmm(expert_in, self.w1) + self.b1)
        expert_out = torch.bmm(h, self.w2)                              # (E, C, d)
        y = torch.einsum("nec,ecd->nd", combine, expert_out)
        importance = gates.sum(0)
        load = (gates > 0).sum(0)
        aux = cv_squared(importance) + cv_squared(load)
        z_loss = torch.logsumexp(logits, dim=1).pow(2).mean()
        stats = {"kept": int(kept.sum()), "capacity": capacity, "load": load.tolist(),
                 "dropped": int(self.k * n_tok - kept.sum())}
        return y, aux, z_loss, stats


moe = MoEFFN()
x = torch.randn(10, 8)
target = torch.tanh(x.roll(1, dims=1)) * 0.5
moe.eval()
gates, idx, logits = moe.gates(x)
print("gates", gates.shape, gates.grad_fn.name(), (gates > 0).sum(1).tolist())
print("top idx", idx.tolist()[:4], idx.dtype)
print(f"row sums {gates.sum(1).min().item():.6f} {gates.sum(1).max().item():.6f}")
y, aux, z, stats = moe(x)
print("y", y.shape, y.grad_fn.name(), f"{y.abs().sum().item():.5f}")
print("stats", stats, f"aux {aux.item():.5f} z {z.item():.5f}")

# per-expert statistics with scatter_add / scatter_reduce over the flat routing
flat_e = idx.reshape(-1)
flat_p = gates.gather(1, idx).reshape(-1)
counts = torch.zeros(4, dtype=torch.long).scatter_add_(0, flat_e, torch.ones_like(flat_e))
max_p = torch.zeros(4).scatter_reduce(0, flat_e, flat_p, reduce="amax", include_self=False)
mean_p = torch.zeros(4).scatter_reduce(0, flat_e, flat_p, reduce="mean", include_self=False)
hits = torch.zeros(4).scatter_(0, flat_e, 1.0, reduce="add")   # the older spelling
print("counts", counts.tolist(), torch.bincount(flat_e, minlength=4).tolist(), hits.tolist())
# routed probability mass per expert: scatter's `reduce` overloads have no derivative, the
# out-of-place scatter_add does
mass = torch.zeros(4).scatter(0, flat_e, flat_p, reduce="add")
print("mass", [round(v, 4) for v in mass.tolist()], mass.grad_fn.name())
try:
    mass.var().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
mass = torch.zeros(4).scatter_add(0, flat_e, flat_p)
mass.var().backward()
print("mass grad", mass.grad_fn.name(), f"{moe.w_gate.grad.abs().sum().item():.6f}")
moe.zero_grad()
try:
    torch.zeros(4).scatter_(0, flat_e, 1.0, reduce="sum")
except RuntimeError as e:
    print("RuntimeError:", e)
print("max p", [round(v, 4) for v in max_p.tolist()], "mean p", [round(v, 4) for v in mean_p.tolist()])

moe.train()
head = nn.Linear(8, 8)
opt = torch.optim.AdamW([{"params": moe.parameters(), "weight_decay": 0.01},
                         {"params": head.parameters(), "weight_decay": 0.0}], lr=2e-2)
for step in range(6):
    y, aux, z, stats = moe(x)
    pred = head(y + x)
    mse = F.mse_loss(pred, target)
    loss = mse + 1e-2 * aux + 1e-3 * z
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} mse {mse.item():.5f} aux {aux.item():.4f} "
          f"kept {stats['kept']} load {stats['load']}")
print("grad w_gate", moe.w_gate.grad.shape, f"{moe.w_gate.grad.norm().item():.5f}",
      "w_noise", f"{moe.w_noise.grad.norm().item():.5f}")
print("grad w1 per expert", [f"{g:.4f}" for g in moe.w1.grad.flatten(1).norm(dim=1).tolist()])

# top-k semantics used above
v, i = torch.topk(torch.tensor([[1.0, 3.0, 3.0, 2.0]]), 2)
print("ties", v, i)
v, i = torch.tensor([5.0, 1.0, 4.0, 2.0]).topk(2, largest=False, sorted=True)
print("smallest", v.tolist(), i.tolist())
for bad in (torch.tensor([0, -1, 2]), torch.tensor([0, 3])):
    try:
        F.one_hot(bad, num_classes=3)
    except RuntimeError as e:
        print("RuntimeError:", e)
capacity = 1.25 * 10 * 2 / 4   # a float: the int() in forward is easy to forget
try:
    F.one_hot(torch.tensor([0, 2]), capacity)
except TypeError as e:
    print("TypeError:", e)
try:
    torch.topk(torch.randn(3), 5)
except RuntimeError as e:
    print("RuntimeError:", e)
print(F.one_hot(torch.tensor([[1], [0]])).shape, F.one_hot(torch.tensor([2, 0]), -1).tolist())
