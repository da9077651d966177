"""A tiny Mamba-style selective state-space model: input-dependent step sizes through
F.softplus, a discretised scan written with exp / cumsum / cumprod / einsum (no loop over
time), a depthwise causal nn.Conv1d(groups=channels) after F.pad, nn.RMSNorm, weights set
with torch.nn.init, trained with AdamW and a linear-warmup + cosine schedule."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, T, D, N = 2, 6, 4, 3


class SelectiveSSM(nn.Module):
    def __init__(self, d, n, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Conv1d(d, d, k, groups=d)
        self.in_proj = nn.Linear(d, 2 * d)
        self.dt_proj = nn.Linear(d, d)
        self.bc_proj = nn.Linear(d, 2 * n, bias=False)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1).float()).repeat(d, 1))
        self.D = nn.Parameter(torch.ones(d))
        self.norm = nn.RMSNorm(d, eps=1e-5)
        self.out = nn.Linear(d, d)
        nn.init.xavier_uniform_(self.in_proj.weight)
        nn.init.kaiming_normal_(self.out.weight, nonlinearity="linear")
        nn.init.constant_(self.dt_proj.bias, -1.0)
        nn.init.zeros_(self.out.bias)

    def forward(self, x):
        u, gate = self.in_proj(self.norm(x)).chunk(2, dim=-1)
        u = F.silu(self.conv(F.pad(u.transpose(1, 2), (self.k - 1, 0))).transpose(1, 2))
        dt = F.softplus(self.dt_proj(u))                       # (B, T, D)
        Bm, Cm = self.bc_proj(u).split(N, dim=-1)              # (B, T, N)
        A = -torch.exp(self.A_log)                             # (D, N)
        log_decay = torch.einsum("btd,dn->btdn", dt, A)
        cum = torch.cumsum(log_decay, dim=1)
        # h_t = sum_{s<=t} exp(cum_t - cum_s) * dt_s * B_s * u_s
        drive = torch.einsum("btd,btn->btdn", dt * u, Bm)
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        diff = cum.unsqueeze(2) - cum.unsqueeze(1)             # (B, t, s, D, N)
        weights = torch.exp(diff.masked_fill(~mask[None, :, :, None, None], -math.inf))
        h = torch.einsum("btsdn,bsdn->btdn", weights, drive)
        y = torch.einsum("btdn,btn->btd", h, Cm) + self.D * u
        return x + self.out(y * F.silu(gate)), h


model = SelectiveSSM(D, N)
print(model.norm, model.conv)
print("conv weight", tuple(model.conv.weight.shape), "groups", model.conv.groups)
x = torch.randn(B, T, D)
y, h = model(x)
print("out", tuple(y.shape), y.grad_fn.name(), "state", tuple(h.shape))

# the closed-form scan agrees with the recurrence written step by step
with torch.no_grad():
    A = -torch.exp(model.A_log)
    decay = torch.exp(torch.einsum("d,dn->dn", torch.ones(D), A))
    print("cumprod", torch.cumprod(decay[0], dim=0))
    state = torch.zeros(D, N)
    for t in range(3):
        state = state * decay + t
    print("recurrence", state[0])

opt = torch.optim.AdamW(model.parameters(), lr=3e-2, weight_decay=0.05)
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=1)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2, eta_min=1e-3)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[1])
target = torch.roll(x, 1, dims=1)
for step in range(3):
    y, _ = model(x)
    loss = F.mse_loss(y, target)
    opt.zero_grad()
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    print(step, f"{loss.item():.5f}", f"{gnorm.item():.5f}", f"{sched.get_last_lr()[0]:.6f}")
print("A_log grad", model.A_log.grad.shape, model.norm.weight.grad.abs().sum() > 0)
print("softplus", F.softplus(torch.tensor([-30.0, 0.0, 25.0]), beta=2, threshold=10))
print(nn.init.calculate_gain("leaky_relu", 0.2), nn.init._calculate_fan_in_and_fan_out(model.conv.weight))
