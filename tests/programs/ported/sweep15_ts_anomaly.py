"""Time-series anomaly detection: sliding windows with Tensor.unfold, an LSTM autoencoder,
per-window reconstruction error, quantile/kthvalue thresholds, where/nonzero/bincount masks and
scores ranked with argsort(descending=True)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
t = torch.arange(40, dtype=torch.float32)
series = torch.sin(t * 0.5) + 0.05 * torch.randn(40)
series[[13, 27]] += torch.tensor([3.0, -2.5])
windows = series.unfold(0, 8, 4)
print(windows.shape, windows.stride(), windows.is_contiguous(), windows[1, :3])
mean, std = series.mean(), series.std(unbiased=True)
x = ((windows - mean) / std).unsqueeze(-1)
print(x.shape, f"{mean.item():.4f}", f"{std.item():.4f}")


class LSTMAutoencoder(nn.Module):
    def __init__(self, hidden=6):
        super().__init__()
        self.encoder = nn.LSTM(1, hidden, batch_first=True)
        self.decoder = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        _, (h, c) = self.encoder(x)
        z = h[-1].unsqueeze(1).repeat(1, x.size(1), 1)
        y, _ = self.decoder(z)
        return self.out(y)


model = LSTMAutoencoder()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(3):
    recon = model(x)
    loss = nn.functional.mse_loss(recon, x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(epoch, f"{loss.item():.5f}", recon.grad_fn.name())

with torch.no_grad():
    recon = model(x)
    _, (h, c) = model.encoder(x)
    ref = model.out(h)
# (autocast of the LSTM itself needs oneDNN's bf16 kernels, which AVX2-only CPUs lack)
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    h16, c16 = model.out(h), model.out(c)
    r16 = h16.transpose(1, 2) @ c16
print(h16.dtype, c16.dtype, r16.dtype, f"{(h16.float() - ref).abs().max().item():.1f}")
err = ((recon - x) ** 2).squeeze(-1)
score = err.mean(dim=1)
print(err.shape, score)
q = torch.quantile(score, 0.75)
q_all = torch.quantile(score, torch.tensor([0.1, 0.5, 0.9]), interpolation="nearest")
kth = torch.kthvalue(score, 7)
print(f"{q.item():.5f}", q_all, kth.indices, torch.quantile(err, 0.5, dim=1, keepdim=True).shape)
print(torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5), score.median())
flag = torch.where(score > q, 1, 0)
print(flag, flag.dtype, torch.nonzero(flag), torch.nonzero(flag, as_tuple=True))
print(torch.nonzero_static(flag, size=3).flatten(), score.nonzero_static(size=1, fill_value=9))
point_err = torch.where(err > err.mean() + 2 * err.std(), err, torch.zeros_like(err))
rows, cols = point_err.nonzero(as_tuple=True)
print(rows, cols, (cols + rows * 4).unique())
print(torch.bincount(rows, minlength=windows.size(0)), torch.bincount(flag))
print(torch.bincount(rows, weights=point_err[rows, cols]).shape)
order = score.argsort(descending=True)
ranked, idx = torch.sort(score, descending=True, stable=True)
print(order, torch.equal(order, idx), ranked[:3])
print(score.topk(2).indices, torch.argsort(score, dim=0, descending=True, stable=True)[:2])
try:
    torch.quantile(score, 1.5)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.quantile(score[score > 100], 0.5)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    series.unfold(0, 50, 1)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.bincount(torch.tensor([1, -1]))
except RuntimeError as e:
    print("RuntimeError:", e)
