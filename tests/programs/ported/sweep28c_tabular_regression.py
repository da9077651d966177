"""Tabular regression on a synthetic house-price table: categorical columns through nn.Embedding
(one table per column, concatenated with standardized numeric columns), an MLP with
BatchNorm1d, HuberLoss, AdamW with two parameter groups (no weight decay on biases and norm
parameters), ReduceLROnPlateau on the validation loss, early stopping that keeps
copy.deepcopy of the best state_dict, a checkpoint round trip through torch.save/torch.load
on a BytesIO, and evaluation metrics from torch.quantile, median and std_mean."""
import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
CARDS = [5, 3, 7]          # categories per categorical column
N_NUM = 4
N = 160


def make_table(n):
    cats = torch.stack([torch.randint(0, c, (n,)) for c in CARDS], dim=1)
    nums = torch.randn(n, N_NUM) * torch.tensor([1.0, 10.0, 0.1, 3.0]) + torch.tensor(
        [0.0, 50.0, 1.0, -2.0])
    effect = torch.tensor([0.5, -1.0, 0.0, 2.0, 1.0])[cats[:, 0]] \
        + torch.tensor([0.0, 0.3, -0.3])[cats[:, 1]] + 0.1 * cats[:, 2].float()
    y = effect + 0.8 * nums[:, 0] + 0.05 * (nums[:, 1] - 50) + torch.randn(n) * 0.2
    y[::37] += 6.0                      # a few outliers, which is why the loss is Huber
    return cats, nums, y


cats, nums, y = make_table(N)
print("table", cats.shape, cats.dtype, nums.shape, y.shape, f"{y.mean().item():.5f}")
perm = torch.randperm(N)
tr, va = perm[:120], perm[120:]
num_mean, num_std = nums[tr].mean(0), nums[tr].std(0, unbiased=True)
print("num stats", num_mean, num_std)
nums_z = (nums - num_mean) / num_std
y_mean, y_std = y[tr].mean(), y[tr].std()
y_z = (y - y_mean) / y_std

train_ds = TensorDataset(cats[tr], nums_z[tr], y_z[tr])
val_ds = TensorDataset(cats[va], nums_z[va], y_z[va])
print("dataset", len(train_ds), len(val_ds), [t.shape for t in train_ds[0]])
loader = DataLoader(train_ds, batch_size=32, shuffle=True,
                    generator=torch.Generator().manual_seed(3), drop_last=False)


class TabularNet(nn.Module):
    def __init__(self, cards, n_num, hidden=32):
        super().__init__()
        self.embeds = nn.ModuleList(
            [nn.Embedding(c, min(4, (c + 1) // 2)) for c in cards])
        emb_dim = sum(e.embedding_dim for e in self.embeds)
        self.emb_drop = nn.Dropout(0.05)
        self.bn_num = nn.BatchNorm1d(n_num)
        self.mlp = nn.Sequential(
            nn.Linear(emb_dim + n_num, hidden), nn.ReLU(), nn.BatchNorm1d(hidden),
            nn.Linear(hidden, hidden // 2), nn.LayerNorm(hidden // 2), nn.GELU(),
            nn.Linear(hidden // 2, 1))

    def forward(self, cat, num):
        e = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embeds)], dim=1)
        x = torch.cat([self.emb_drop(e), self.bn_num(num)], dim=1)
        return self.mlp(x).squeeze(-1)


model = TabularNet(CARDS, N_NUM)
print(model)
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim <= 1 or "embeds" in name else decay).append((name, p))
print("decay", [n for n, _ in decay])
print("no_decay", len(no_decay), [n for n, _ in no_decay][:5])
optimizer = torch.optim.AdamW([
    {"params": [p for _, p in decay], "weight_decay": 0.01},
    {"params": [p for _, p in no_decay], "weight_decay": 0.0},
], lr=2e-2, betas=(0.9, 0.99))
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=1, threshold=1e-3)
criterion = nn.HuberLoss(delta=1.0)
print([(g["lr"], g["weight_decay"], len(g["params"])) for g in optimizer.param_groups])


def evaluate(m):
    m.eval()
    with torch.no_grad():
        c, x, t = val_ds.tensors
        pred = m(c, x)
        return criterion(pred, t).item(), pred


best_loss, best_state, best_epoch, bad_epochs, PATIENCE = float("inf"), None, -1, 0, 3
for epoch in range(20):
    model.train()
    total, count = 0.0, 0
    for step, (c, x, t) in enumerate(loader):
        pred = model(c, x)
        loss = criterion(pred, t)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(t)
        count += len(t)
        if epoch == 0 and step == 0:
            print("batch", c.shape, x.dtype, pred.shape, pred.grad_fn.name(),
                  loss.grad_fn.name())
            print("emb grad", model.embeds[0].weight.grad.abs().sum(1))
            print("state", sorted(optimizer.state[model.mlp[0].weight].keys()))
    val_loss, _ = evaluate(model)
    scheduler.step(val_loss)
    lrs = [g["lr"] for g in optimizer.param_groups]
    improved = val_loss < best_loss - 1e-4
    if improved:
        best_loss, best_epoch, bad_epochs = val_loss, epoch, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad_epochs += 1
    print(f"epoch {epoch} train {total / count:.5f} val {val_loss:.5f} lr {lrs[0]:.5f} "
          f"{'*' if improved else ''} bad {bad_epochs} bn_batches "
          f"{model.bn_num.num_batches_tracked.item()}")
    if bad_epochs >= PATIENCE:
        print("early stop at", epoch)
        break

print("best epoch", best_epoch, f"{best_loss:.5f}")
print("deepcopy is a copy", best_state["mlp.0.weight"].data_ptr()
      != model.state_dict()["mlp.0.weight"].data_ptr(),
      torch.equal(best_state["mlp.0.weight"], model.mlp[0].weight) or best_epoch != epoch)
model.load_state_dict(best_state)
print("restored", f"{evaluate(model)[0]:.5f}")

# checkpoint round trip through memory
buffer = io.BytesIO()
torch.save({"epoch": best_epoch, "model": model.state_dict(),
            "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
            "norm": (num_mean, num_std, y_mean, y_std)}, buffer)
print("bytes written", buffer.tell() > 1000)
buffer.seek(0)
ckpt = torch.load(buffer, weights_only=True)
print("ckpt keys", sorted(ckpt.keys()), ckpt["epoch"], type(ckpt["norm"]).__name__)
restored = TabularNet(CARDS, N_NUM)
result = restored.load_state_dict(ckpt["model"])
print("load result", result)
opt2 = torch.optim.AdamW(restored.parameters(), lr=1.0)
try:
    opt2.load_state_dict(ckpt["optimizer"])
except ValueError as e:
    print("ValueError", e)
opt2 = torch.optim.AdamW([
    {"params": [p for n, p in restored.named_parameters() if n in dict(decay)]},
    {"params": [p for n, p in restored.named_parameters() if n not in dict(decay)]}])
opt2.load_state_dict(ckpt["optimizer"])
print("opt2 groups", [(g["lr"], g["weight_decay"]) for g in opt2.param_groups])
print("sched state", {k: v for k, v in ckpt["scheduler"].items()
                      if k in ("best", "num_bad_epochs", "patience", "mode", "_last_lr")})
s0 = opt2.state[restored.mlp[0].weight]
print("exp_avg", s0["exp_avg"].shape, s0["step"], s0["exp_avg_sq"].dtype)
_, pred_a = evaluate(model)
_, pred_b = evaluate(restored)
print("same predictions", torch.allclose(pred_a, pred_b), torch.equal(pred_a, pred_b))

# metrics in original units
c, x, t = val_ds.tensors
pred = pred_a * y_std + y_mean
target = t * y_std + y_mean
err = pred - target
abs_err = err.abs()
print("mae", f"{abs_err.mean().item():.5f}", "rmse", f"{err.pow(2).mean().sqrt().item():.5f}")
print("median abs err", f"{abs_err.median().item():.5f}", "nanmedian",
      f"{abs_err.nanmedian().item():.5f}")
q = torch.quantile(abs_err, torch.tensor([0.1, 0.5, 0.9]))
print("quantiles", q)
for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
    print(" ", interp, f"{torch.quantile(abs_err, 0.75, interpolation=interp).item():.5f}")
s, m = torch.std_mean(err)
print("std_mean", f"{s.item():.5f}", f"{m.item():.5f}")
s2, m2 = torch.std_mean(torch.stack([pred, target]), dim=1, correction=0, keepdim=True)
print("std_mean dim", s2.shape, s2.squeeze(), m2.squeeze())
v, m3 = torch.var_mean(err, unbiased=False)
print("var_mean", f"{v.item():.5f}", f"{m3.item():.5f}")
ss_res = (err ** 2).sum()
ss_tot = ((target - target.mean()) ** 2).sum()
print("r2", f"{(1 - ss_res / ss_tot).item():.5f}")
print("per-category mae", [f"{abs_err[c[:, 0] == k].mean().item():.4f}"
                           if (c[:, 0] == k).any() else "nan" for k in range(CARDS[0])])
vals, idx = abs_err.median(dim=0)
print("median with index", f"{vals.item():.5f}", abs_err[idx].item() == vals.item())
print("quantile dim", torch.quantile(torch.stack([abs_err, abs_err * 2]), 0.5, dim=1,
                                     keepdim=True).shape)
print("huber vs mse", f"{F.huber_loss(pred, target, delta=0.5).item():.5f}",
      f"{F.mse_loss(pred, target).item():.5f}",
      f"{F.smooth_l1_loss(pred, target, beta=2.0).item():.5f}")
try:
    torch.quantile(abs_err, 1.5)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.quantile(abs_err.double(), torch.tensor([0.5]))
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.quantile(abs_err, 0.5, interpolation="cubic")
except RuntimeError as e:
    print("RuntimeError", e)
try:
    model.embeds[0](torch.tensor([5]))
except IndexError as e:
    print("IndexError", e)
try:
    model.train()
    model(cats[:1], nums_z[:1])
except ValueError as e:
    print("ValueError", e)
try:
    torch.load(io.BytesIO(b"not a checkpoint"))
except Exception as e:
    print(type(e).__name__, str(e)[:60])
