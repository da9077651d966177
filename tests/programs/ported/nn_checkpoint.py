"""state_dict save/load round trips through io.BytesIO and a temp file, plus optimizer state."""
import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


model = MLP()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
x, y = torch.randn(16, 6), torch.randint(0, 2, (16,))
for step in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.4f}")

sd = model.state_dict()
print(type(sd).__name__, list(sd.keys()))
for k, v in sd.items():
    print(k, tuple(v.shape), v.dtype, v.requires_grad)

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
loaded = torch.load(buf)
m2 = MLP()
result = m2.load_state_dict(loaded)
print(result)
model.eval()
m2.eval()
print(torch.equal(model(x), m2(x)), m2.bn.num_batches_tracked)

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "ckpt.pt")
    torch.save({"epoch": 3, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": opt.state_dict(), "scheduler": sched.state_dict(),
                "loss": loss.item()}, path)
    ckpt = torch.load(path, weights_only=False)
print(sorted(ckpt.keys()), ckpt["epoch"], f"{ckpt['loss']:.4f}")
osd = ckpt["optimizer_state_dict"]
print(osd["param_groups"][0]["lr"], osd["param_groups"][0]["params"], sorted(osd["state"][0].keys()))
print(osd["state"][0]["step"], osd["state"][3]["exp_avg"].shape)
print(ckpt["scheduler"]["last_epoch"], ckpt["scheduler"]["_last_lr"])

m3 = MLP()
opt3 = torch.optim.Adam(m3.parameters(), lr=1e-2)
sched3 = torch.optim.lr_scheduler.ExponentialLR(opt3, gamma=0.5)
m3.load_state_dict(ckpt["model_state_dict"])
opt3.load_state_dict(ckpt["optimizer_state_dict"])
sched3.load_state_dict(ckpt["scheduler"])
print(opt3.param_groups[0]["lr"], sched3.get_last_lr())
model.train()
m3.train()
for m, o in ((model, opt), (m3, opt3)):
    o.zero_grad()
    loss = F.cross_entropy(m(x), y)
    loss.backward()
    o.step()
    print(f"resumed loss {loss.item():.4f}")
print(all(torch.equal(a, b) for a, b in zip(model.parameters(), m3.parameters())))

sd = model.state_dict()
del sd["fc2.bias"]
sd["extra.weight"] = torch.zeros(1)
res = m3.load_state_dict(sd, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    m3.load_state_dict(sd)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
bad = model.state_dict()
bad["fc1.weight"] = torch.zeros(3, 3)
try:
    m3.load_state_dict(bad)
except RuntimeError as e:
    print(str(e).splitlines()[-1].strip())
buf = io.BytesIO()
torch.save(model, buf)
buf.seek(0)
whole = torch.load(buf, weights_only=False)
print(type(whole).__name__, whole.fc1)
t = torch.arange(6.0).view(2, 3)
buf = io.BytesIO()
torch.save({"t": t, "view": t[1]}, buf)
buf.seek(0)
back = torch.load(buf)
print(back["t"], back["view"], back["view"].storage_offset())
