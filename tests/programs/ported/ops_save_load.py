"""torch.save/torch.load of dicts of tensors, modules and optimizer state; in-memory buffers."""
import io
import os
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
d = {"a": torch.arange(4), "b": torch.randn(2, 3), "c": [torch.tensor(1.5), 3, "x"], "d": {"e": torch.ones(2, dtype=torch.float16)}}
buf = io.BytesIO()
torch.save(d, buf)
buf.seek(0)
back = torch.load(buf)
print(sorted(back.keys()), back["a"], back["b"], back["c"], back["d"])
x = torch.arange(10.0)
view = x[2:5]
buf = io.BytesIO()
torch.save({"x": x, "view": view}, buf)
buf.seek(0)
out = torch.load(buf)
out["view"][0] = -1
print(out["x"], out["view"], out["view"].storage_offset())
model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
model(torch.randn(5, 3)).pow(2).mean().backward()
opt.step()
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ckpt.pt")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
    ck = torch.load(path, map_location="cpu")
    print(list(ck["model"].keys()), ck["epoch"])
    m2 = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    print(m2.load_state_dict(ck["model"]))
    o2 = torch.optim.Adam(m2.parameters(), lr=0.5)
    o2.load_state_dict(ck["opt"])
    print(o2.param_groups[0]["lr"], o2.state_dict()["state"][0]["exp_avg"])
    print(torch.equal(m2[0].weight, model[0].weight), m2[1].running_mean, m2[1].num_batches_tracked)
    torch.save(torch.tensor([1, 2, 3], dtype=torch.int32), path)
    print(torch.load(path, weights_only=True))
    torch.save(model, path)
    try:
        torch.load(path)
    except Exception as e:
        print(type(e).__name__)
    full = torch.load(path, weights_only=False)
    print(full)
r = m2.load_state_dict({k: v for k, v in ck["model"].items() if not k.startswith("2.")}, strict=False)
print(r.missing_keys, r.unexpected_keys)
try:
    m2.load_state_dict({"0.weight": torch.zeros(4, 3)})
except RuntimeError as e:
    print(str(e).splitlines()[0])
try:
    m2.load_state_dict({**ck["model"], "0.weight": torch.zeros(2, 2)})
except RuntimeError as e:
    print(e)
