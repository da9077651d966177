"""Time-series forecasting with an LSTM (proj_size, batch_first) trained with teacher forcing:
sliding windows cut with Tensor.unfold, standardisation with mean/std(keepdim), a TensorDataset
DataLoader shuffled by its own Generator, clip_grad_value_, ReduceLROnPlateau and early stopping
on a validation loss, then an autoregressive rollout."""
import copy
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
t = torch.arange(0, 120, dtype=torch.float32)
series = torch.stack([torch.sin(t / 6) + 0.1 * torch.randn(120),
                      torch.cos(t / 9) * 2 + 0.5 + 0.1 * torch.randn(120)], dim=1)
print(series.shape, series[:2])
mean, std = series[:90].mean(0, keepdim=True), series[:90].std(0, keepdim=True)
print(mean, std.shape)
z = (series - mean) / std
windows = z[1:].unfold(0, 17, 3)               # (n, features, 17), a view of z
print(windows.shape, windows.stride(), windows.is_contiguous())
windows = windows.transpose(1, 2).contiguous()
inputs, targets = windows[:, :-1], windows[:, 1:]
train_x, val_x = inputs[:28], inputs[28:]
train_y, val_y = targets[:28], targets[28:]
print(train_x.shape, val_x.shape)


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(2, 16, num_layers=2, batch_first=True, proj_size=6, dropout=0.0)
        self.head = nn.Linear(6, 2)

    def forward(self, x, state=None):
        out, state = self.lstm(x, state)
        return self.head(out), state


model = Forecaster()
print([(n, tuple(p.shape)) for n, p in model.lstm.named_parameters()][:5])
gen = torch.Generator().manual_seed(7)
loader = DataLoader(TensorDataset(train_x, train_y), batch_size=8, shuffle=True, generator=gen,
                    drop_last=True)
print(len(loader), len(loader.dataset))
opt = torch.optim.Adam(model.parameters(), lr=0.02)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1,
                                                   threshold=1e-3)
loss_fn = nn.MSELoss()
best, best_state, bad, patience = math.inf, None, 0, 3
for epoch in range(6):
    model.train()
    total = 0.0
    for i, (xb, yb) in enumerate(loader):
        pred, (h, c) = model(xb)
        loss = loss_fn(pred, yb)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        total += loss.item()
        if epoch == 0 and i == 0:
            print(pred.shape, h.shape, c.shape, loss.grad_fn.name())
            print(max(p.grad.abs().max().item() for p in model.parameters()) <= 0.5)
    model.eval()
    with torch.no_grad():
        val = loss_fn(model(val_x)[0], val_y).item()
    sched.step(val)
    print(f"epoch {epoch} train {total / len(loader):.5f} val {val:.5f} "
          f"lr {opt.param_groups[0]['lr']:.4f} bad {sched.num_bad_epochs}")
    if val < best - 1e-4:
        best, bad = val, 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad += 1
        if bad >= patience:
            print("early stop at", epoch)
            break
print(f"best {best:.5f}", sorted(best_state)[:3], best_state["lstm.weight_hr_l0"].shape)

model.load_state_dict(best_state)
model.eval()
with torch.no_grad():
    context = z[:60].unsqueeze(0)
    out, state = model(context)
    step = out[:, -1:]
    preds = []
    for _ in range(10):
        preds.append(step)
        step, state = model(step, state)
    rollout = torch.cat(preds, 1) * std + mean
    err = (rollout[0] - series[60:70]).abs().mean(0)
print(rollout.shape, [s.shape for s in state], err)
print(sched.state_dict()["best"] == best, sched.state_dict()["mode"])
lstm = nn.LSTM(3, 4, proj_size=2, batch_first=True, bidirectional=True)
o, (h, c) = lstm(torch.randn(2, 5, 3))
print(o.shape, h.shape, c.shape, o.grad_fn.name())
try:
    nn.LSTM(3, 4, proj_size=4)
except ValueError as e:
    print("ValueError:", e)
