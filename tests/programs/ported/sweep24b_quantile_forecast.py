"""Multi-horizon quantile forecasting of a noisy seasonal series with gaps: windows cut with
Tensor.unfold, NaN-aware normalisation (nanmean / nanquantile), drawdown features from
cummax, a pinball loss, a Dataset with a custom collate_fn that pads missing values, and a
WeightedRandomSampler that oversamples volatile windows. Ends with an empirical coverage check
of the predicted intervals via torch.quantile."""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

torch.manual_seed(0)
T, LOOKBACK, HORIZON = 160, 16, 4
QUANTILES = torch.tensor([0.1, 0.5, 0.9])

t = torch.arange(T, dtype=torch.float32)
series = 2.0 + torch.sin(2 * math.pi * t / 24) + 0.01 * t + 0.3 * torch.randn(T)
series[torch.tensor([5, 17, 18, 60, 61, 62, 101])] = float("nan")
print("nan count", series.isnan().sum().item(), "nanmean", f"{series.nanmean().item():.4f}")
print("mean with nan", series.mean())

lo_q, med, hi_q = torch.nanquantile(series, torch.tensor([0.05, 0.5, 0.95])).tolist()
print(f"robust scale q05 {lo_q:.4f} median {med:.4f} q95 {hi_q:.4f}")
scaled = (series - med) / (hi_q - lo_q)

# windows: (num_windows, LOOKBACK + HORIZON), stride 2
windows = scaled.unfold(0, LOOKBACK + HORIZON, 2)
print("windows", tuple(windows.shape), windows.stride(), windows.is_contiguous())
past, future = windows[:, :LOOKBACK], windows[:, LOOKBACK:]

# drawdown feature: distance below the running maximum (NaN filled forward first)
filled = scaled.clone()
for i in range(1, T):
    if torch.isnan(filled[i]):
        filled[i] = filled[i - 1]
running = torch.cummax(filled, dim=0)
print(type(running).__name__, running.values.shape, running.indices.dtype, running.indices[:8].tolist())
drawdown = filled - running.values
print(f"max drawdown {drawdown.min().item():.4f} at {drawdown.argmin().item()}")
dd_windows = drawdown.unfold(0, LOOKBACK + HORIZON, 2)[:, :LOOKBACK]

# volatility per window (ignoring gaps) decides the sampling weight
diffs = past.diff(dim=1)
vol = diffs.abs().nanmean(dim=1)
weights = (vol / vol.nanmean()).nan_to_num(1.0).clamp(0.5, 3.0)
print("weights", tuple(weights.shape), f"{weights.min().item():.4f} {weights.max().item():.4f}")


class WindowSet(Dataset):
    def __init__(self, past, dd, future):
        self.past, self.dd, self.future = past, dd, future

    def __len__(self):
        return self.past.size(0)

    def __getitem__(self, i):
        return {"past": self.past[i], "dd": self.dd[i], "future": self.future[i], "idx": i}


def collate(items):
    past = torch.stack([it["past"] for it in items])
    mask = ~torch.isnan(past)
    # impute gaps with the per-window mean of observed values
    fill = past.nanmean(dim=1, keepdim=True).nan_to_num(0.0)
    past = torch.where(mask, past, fill)
    x = torch.stack([past, torch.stack([it["dd"] for it in items]), mask.float()], dim=-1)
    y = torch.stack([it["future"] for it in items])
    return x, y, torch.tensor([it["idx"] for it in items])


data = WindowSet(past, dd_windows, future)
n_train = 56
train = torch.utils.data.Subset(data, range(n_train))
sampler = WeightedRandomSampler(weights[:n_train].tolist(), num_samples=n_train, replacement=True,
                                generator=torch.Generator().manual_seed(3))
loader = DataLoader(train, batch_size=8, sampler=sampler, collate_fn=collate)
x0, y0, idx0 = next(iter(loader))
print("batch", tuple(x0.shape), x0.dtype, tuple(y0.shape), idx0.tolist())
print("len", len(loader), len(sampler), "any nan in x", x0.isnan().any().item())
counts = torch.bincount(torch.tensor(list(sampler)), minlength=n_train)
print("resampled counts: max", counts.max().item(), "unused", (counts == 0).sum().item())


def pinball(pred, target, q):
    """pred (..., H, Q), target (..., H) possibly with NaNs which are skipped."""
    err = target.unsqueeze(-1) - pred
    loss = torch.maximum(q * err, (q - 1) * err)
    return loss.nanmean()


class QuantileMLP(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(LOOKBACK * 3, hidden), nn.SiLU(),
                                 nn.Linear(hidden, HORIZON * len(QUANTILES)))

    def forward(self, x):
        raw = self.net(x).view(-1, HORIZON, len(QUANTILES))
        # monotone quantiles: base + cumulative softplus increments
        base, inc = raw[..., :1], nn.functional.softplus(raw[..., 1:])
        return torch.cat([base, base + inc.cumsum(-1)], dim=-1)


model = QuantileMLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(4):
    total = 0.0
    for x, y, _ in loader:
        loss = pinball(model(x), y, QUANTILES)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} pinball {total / len(loader):.4f}")

test = [data[i] for i in range(n_train, len(data))]
x, y, _ = collate(test)
model.eval()
with torch.no_grad():
    pred = model(x)
print("pred", tuple(pred.shape), pred.dtype, "monotone", bool((pred.diff(dim=-1) >= 0).all()))
observed = ~y.isnan()
inside = (y >= pred[..., 0]) & (y <= pred[..., 2])
cover = inside[observed].float().mean().item()
print(f"test pinball {pinball(pred, y, QUANTILES).item():.4f} 80% coverage {cover:.4f}")
resid = (y - pred[..., 1])[observed]
print("residual quantiles", torch.quantile(resid, QUANTILES).round(decimals=4).tolist())
for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print(mode, f"{torch.quantile(resid, 0.25, interpolation=mode).item():.4f}")
per_h = torch.nanquantile(torch.where(observed, (y - pred[..., 1]).abs(), torch.nan), 0.5, dim=0)
print("median abs err per horizon", per_h.round(decimals=4).tolist())
print("keepdim", torch.quantile(pred[..., 1], QUANTILES, dim=1, keepdim=True).shape)
try:
    torch.quantile(resid, torch.tensor([0.5, 1.5]))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.quantile(resid.long(), 0.5)
except RuntimeError as e:
    print("RuntimeError:", e)
