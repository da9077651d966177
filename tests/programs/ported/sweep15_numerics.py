"""Mixed precision and numerics: autocast to bfloat16 around a small MLP and conv, a GradScaler
on CPU, half/bfloat16 parameters, finfo/iinfo, nan_to_num, isfinite checks, clamped logits and
set_printoptions."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
    fi = torch.finfo(dt)
    print(dt, fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.resolution)
print(torch.finfo(), torch.iinfo(torch.int8))
for dt in (torch.uint8, torch.int16, torch.int32, torch.int64):
    ii = torch.iinfo(dt)
    print(dt, ii.bits, ii.min, ii.max)

x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf"), 1e30, -2.5])
print(torch.isfinite(x), torch.isinf(x), torch.isnan(x), torch.isposinf(x), torch.isneginf(x))
print(torch.nan_to_num(x), torch.nan_to_num(x, nan=0.0, posinf=1e4, neginf=-1e4))
print(x.half(), x.bfloat16(), x.to(torch.float16).isfinite().all())
print(torch.nan_to_num(x.half()), torch.nan_to_num(x.bfloat16(), posinf=7.0))

model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=1)
img = torch.randn(4, 1, 4, 4)
y = torch.tensor([0, 2, 1, 0])
for step in range(3):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(img)
        loss = F.cross_entropy(logits.float().clamp(-20, 20), y)
    print(step, logits.dtype, loss.dtype, f"{loss.item():.3f}")
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    scaler.step(opt)
    scaler.update()
    print(scaler.get_scale(), torch.isfinite(gn).item(), model[0].weight.grad.dtype)

# a step whose gradients overflow is skipped and the scale backs off
w = nn.Parameter(torch.ones(2))
opt2 = torch.optim.SGD([w], lr=1.0)
scaler2 = torch.amp.GradScaler("cpu", init_scale=4.0)
try:
    scaler2.step(opt2)
except AssertionError as e:
    print("AssertionError:", e)
scaler2.scale((w * float("inf")).sum()).backward()
scaler2.step(opt2)
scaler2.update()
print(w, scaler2.get_scale())

half = nn.Linear(3, 2).half()
bf = nn.Linear(3, 2).to(torch.bfloat16)
print(half.weight.dtype, bf.bias.dtype, half(torch.ones(1, 3).half()).dtype)
print(bf(torch.ones(2, 3, dtype=torch.bfloat16)).float().shape)
try:
    half(torch.ones(1, 3))
except RuntimeError as e:
    print("RuntimeError:", e)

t = torch.tensor([1.123456789, 2.5e-5, 12345.678])
torch.set_printoptions(precision=2)
print(t, t.double())
torch.set_printoptions(precision=6, sci_mode=True)
print(t)
torch.set_printoptions(profile="default")
print(t, torch.tensor([65504.0]).half() * 2, torch.tensor([3.0e38]).bfloat16())
print(torch.tensor([0.1, 0.2]).bfloat16().float(), torch.tensor([1000.5]).half())
