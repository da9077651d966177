"""Anomaly detection on tabular data with a small autoencoder: BatchNorm1d layers switched
between train and eval, a reconstruction-error threshold from torch.quantile on clean
validation data, and a report built with torch.histc, torch.histogram and torch.bucketize."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)
N_FEAT = 8

# correlated "normal" rows from a low-rank model, anomalies break the correlation
mixing = torch.randn(3, N_FEAT)
def normal_rows(n):
    return torch.randn(n, 3) @ mixing + 0.1 * torch.randn(n, N_FEAT)

train = normal_rows(384)
valid = normal_rows(128)
test_normal = normal_rows(90)
test_anom = torch.randn(10, N_FEAT) * 1.5
test = torch.cat([test_normal, test_anom])
labels = torch.cat([torch.zeros(90, dtype=torch.long), torch.ones(10, dtype=torch.long)])

mean, std = train.mean(0), train.std(0)
scale = lambda x: (x - mean) / std


class AE(nn.Module):
    # no bias before BatchNorm: it cancels out, and Adam would amplify its ~1e-8 gradient noise
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(N_FEAT, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(),
                                     nn.Linear(16, 3), nn.Tanh())
        self.decoder = nn.Sequential(nn.Linear(3, 16, bias=False), nn.BatchNorm1d(16, momentum=None),
                                     nn.ReLU(), nn.Linear(16, N_FEAT))

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = AE()
bn_enc, bn_dec = model.encoder[1], model.decoder[1]
print(bn_enc, bn_dec)
print("buffers", [n for n, _ in model.named_buffers()])
print("initial", bn_enc.running_mean[:3], bn_enc.running_var[:3], bn_enc.num_batches_tracked)

opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(scale(train)),
                                     batch_size=64, shuffle=True, drop_last=True)
for epoch in range(4):
    model.train()
    total = 0.0
    for (xb,) in loader:
        loss = F.mse_loss(model(xb), xb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        vloss = F.mse_loss(model(scale(valid)), scale(valid)).item()
    print(f"epoch {epoch} train {total / len(loader):.4f} valid {vloss:.4f} "
          f"tracked {bn_enc.num_batches_tracked.item()} {bn_dec.num_batches_tracked.item()}")

print("running_mean enc", bn_enc.running_mean[:4])
print("running_var dec (cumulative avg)", bn_dec.running_var[:4])

# eval mode uses running statistics: one row gives the same answer alone or in a batch
model.eval()
with torch.no_grad():
    row = scale(test[:1])
    alone = model(row)
    batched = model(scale(test[:5]))[:1]
print("eval row alone == in batch:", torch.allclose(alone, batched, atol=1e-6))
model.train()
try:
    model(row)
except ValueError as e:
    print("ValueError:", e)
model.eval()


def score(x):
    with torch.no_grad():
        return (model(scale(x)) - scale(x)).pow(2).mean(dim=1)


val_err = score(valid)
qs = torch.tensor([0.5, 0.9, 0.99])
print("valid quantiles", torch.quantile(val_err, qs))
for how in ("linear", "lower", "higher", "nearest", "midpoint"):
    print(f"  q95 {how:8s}", round(torch.quantile(val_err, 0.95, interpolation=how).item(), 5))
threshold = torch.quantile(val_err, 0.97)
per_feature = torch.quantile((model(scale(valid)) - scale(valid)).detach().abs(), 0.9, dim=0,
                             keepdim=True)
print("per-feature q90", per_feature.shape)

test_err = score(test)
pred = (test_err > threshold).long()
tp = int(((pred == 1) & (labels == 1)).sum())
fp = int(((pred == 1) & (labels == 0)).sum())
fn = int(((pred == 0) & (labels == 1)).sum())
print(f"tp {tp} fp {fp} fn {fn} precision {tp / max(tp + fp, 1):.3f} recall {tp / (tp + fn):.3f}")
print("anomaly scores > normal median:", (test_err[90:] > test_err[:90].median()).float().mean())

# histogram report of the scores
lo, hi = 0.0, float(test_err.max())
counts = torch.histc(test_err, bins=6, min=lo, max=hi)
print("histc", counts, counts.dtype)
print("histc auto range", torch.histc(val_err, bins=4))
hist, edges = torch.histogram(test_err, bins=4)
print("histogram", hist, edges.shape)
dens = torch.histogram(test_err, bins=torch.tensor([0.0, 0.1, 0.5, 2.0, 50.0]), density=True)
print("density", dens.hist, dens.bin_edges)
scores_with_nan = torch.cat([test_err, torch.tensor([float("nan")])])   # a broken input row
for values, bins in ((scores_with_nan, 4), (test_err.double(), dens.bin_edges)):
    try:
        torch.histogram(values, bins=bins)
    except RuntimeError as e:
        print("RuntimeError:", e)
print("nan-safe", torch.histogram(scores_with_nan[~scores_with_nan.isnan()], bins=4).hist)

# risk bands from fixed cut points
cuts = torch.quantile(val_err, torch.tensor([0.5, 0.9, 0.99]))
band = torch.bucketize(test_err, cuts)
band_r = torch.bucketize(test_err, cuts, right=True, out_int32=True)
print("bands", band.dtype, band_r.dtype, torch.bincount(band, minlength=4))
print("anomaly bands", band[90:].tolist())
names = ["low", "medium", "high", "critical"]
for b in range(4):
    members = band == b
    print(f"  {names[b]:8s} n={int(members.sum()):3d} true anomalies={int(labels[members].sum())}")
print("searchsorted same as bucketize:",
      torch.equal(torch.searchsorted(cuts, test_err), band),
      torch.equal(torch.searchsorted(cuts, test_err, side="right"), band_r.long()))

# BatchNorm variants people reach for with tabular data
bn_plain = nn.BatchNorm1d(4, affine=False, track_running_stats=False)
bn_plain.eval()
x = torch.randn(6, 4) * 3 + 1
print("no running stats in eval still normalizes:", bn_plain(x).mean(0).abs().max().item() < 1e-5,
      bn_plain.running_mean)
bn_seq = nn.BatchNorm1d(4)
out = bn_seq(torch.randn(5, 4, 7))
print("3-d input", out.shape, bn_seq.running_mean.shape)
bn_enc.reset_running_stats()
print("reset", bn_enc.running_var[:2], bn_enc.num_batches_tracked)
try:
    torch.quantile(val_err, 1.5)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.quantile(val_err.double(), torch.tensor([0.5]))
except RuntimeError as e:
    print("RuntimeError:", e)
