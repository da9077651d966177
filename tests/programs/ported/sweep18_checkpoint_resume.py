"""Checkpoint and resume: model, optimizer, scheduler and a disabled GradScaler saved in one dict
through torch.save to BytesIO and loaded with weights_only=True; a strict=False load with its
missing/unexpected keys; named_buffers with a non-persistent buffer; model.to(float64) and
back; clip_grad_norm_(foreach=True); the resumed run's losses equal the uninterrupted run's."""
import copy
import io

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 5)
        self.bn = nn.BatchNorm1d(5)
        self.fc2 = nn.Linear(5, 1)
        self.register_buffer("scale", torch.tensor(2.0))
        self.register_buffer("cache", torch.zeros(5), persistent=False)

    def forward(self, x):
        h = torch.relu(self.bn(self.fc1(x)))
        self.cache = h.detach().mean(0)
        return self.fc2(h) * self.scale


def make():
    torch.manual_seed(0)
    m = Net()
    o = torch.optim.AdamW(m.parameters(), lr=0.05, weight_decay=0.01)
    s = torch.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5)
    return m, o, s, torch.amp.GradScaler("cpu", enabled=False)


def train(m, o, s, scaler, steps, x, y):
    losses = []
    for _ in range(steps):
        o.zero_grad()
        loss = nn.functional.mse_loss(m(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(o)
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True)
        scaler.step(o)
        scaler.update()
        s.step()
        losses.append(round(loss.item(), 5))
    return losses


torch.manual_seed(1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
m, o, s, scaler = make()
print([n for n, _ in m.named_buffers()], list(m.state_dict().keys()))
first = train(m, o, s, scaler, 2, x, y)
buf = io.BytesIO()
torch.save({"model": m.state_dict(), "optim": o.state_dict(), "sched": s.state_dict(),
            "scaler": scaler.state_dict(), "epoch": 2, "losses": first}, buf)
print("bytes > 0:", buf.tell() > 0, scaler.state_dict(), s.state_dict())
rest = train(m, o, s, scaler, 2, x, y)

buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print(sorted(ckpt), ckpt["epoch"], ckpt["optim"]["param_groups"][0]["lr"],
      sorted(ckpt["optim"]["state"][0]))
m2, o2, s2, scaler2 = make()
print(m2.load_state_dict(ckpt["model"]))
o2.load_state_dict(ckpt["optim"])
s2.load_state_dict(ckpt["sched"])
scaler2.load_state_dict(ckpt["scaler"])
print(ckpt["losses"], rest, train(m2, o2, s2, scaler2, 2, x, y) == rest)
print(s2.get_last_lr(), o2.state[m2.fc1.weight]["step"])

sd = copy.deepcopy(ckpt["model"])
sd.pop("fc2.bias")
sd["head.weight"] = torch.ones(1)
res = m2.load_state_dict(sd, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    m2.load_state_dict(sd)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0], len(str(e).splitlines()))

m2.to(torch.float64)
print(m2.fc1.weight.dtype, m2.bn.running_var.dtype, m2.bn.num_batches_tracked.dtype,
      m2.scale.dtype, m2.cache.dtype)
m2.eval()
print(m2(x.double()).dtype, m2(x.double()).shape)
m2.float()
print(m2.fc1.weight.dtype, {k: v.dtype for k, v in m2.named_buffers()})
print(torch.nn.utils.clip_grad_norm_(m2.parameters(), 0.1, foreach=True))
