"""Mixed precision on CPU: autocast(device_type="cpu", dtype=torch.bfloat16) for the forward,
which ops run in bfloat16 and which stay in float32, losses computed in float32, a GradScaler
(disabled on CPU-style usage), and nested/disabled autocast regions."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.LayerNorm(16), nn.Linear(16, 4))
conv = nn.Conv2d(1, 2, 3)
opt = torch.optim.Adam(list(model.parameters()) + list(conv.parameters()), lr=1e-2)
scaler = torch.amp.GradScaler("cpu", enabled=False)
x = torch.randn(16, 8)
y = torch.randint(0, 4, (16,))
img = torch.randn(2, 1, 5, 5)

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    h = model[0](x)
    print(h.dtype, model[0].weight.dtype, torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    n = model[2](F.relu(h))
    print(n.dtype, F.softmax(h, -1).dtype, (h @ h.t()).dtype, torch.mm(x, x.t()).dtype)
    print(conv(img).dtype, torch.bmm(x[None], x.t()[None]).dtype, h.sum().dtype, (h + 1).dtype)
    print(F.cross_entropy(model(x), y).dtype, torch.exp(h).dtype, F.mse_loss(h, h).dtype)
    with torch.autocast(device_type="cpu", enabled=False):
        print(model[0](x).dtype, torch.is_autocast_enabled("cpu"))
    print(F.layer_norm(h, (16,)).dtype, F.gelu(h).dtype, torch.cat([h, h.float()]).dtype)
print(torch.is_autocast_enabled("cpu"))

# PyTorch's bf16 LayerNorm backward sums weight/bias grads in bfloat16 per thread, so those
# depend on the thread count: train a model without one
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
        loss = F.cross_entropy(out.float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"step {step} loss {loss.item():.3f} out {out.dtype} grad {model[0].weight.grad.dtype} "
          f"gnorm {model[0].weight.grad.norm().item():.2f}")

with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    logits = model(x)
print(logits.dtype, logits[:2], (logits.float().argmax(1) == y).sum())
print(torch.tensor([1.0, 2.0, 3.0009765625]).bfloat16(), torch.tensor(1 / 3).to(torch.bfloat16).item())


@torch.autocast("cpu", dtype=torch.bfloat16)
def decorated(a, b):
    return a @ b


print(decorated(x, x.t()).dtype, scaler.is_enabled(), scaler.get_scale())
s2 = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
w = torch.zeros(3, requires_grad=True)
o2 = torch.optim.SGD([w], lr=0.1)
for i in range(4):
    o2.zero_grad()
    l = ((w - torch.tensor([1.0, 2.0, float("inf") if i == 1 else 3.0])) ** 2).sum()
    s2.scale(l).backward()
    s2.unscale_(o2)
    gn = torch.nn.utils.clip_grad_norm_([w], 10.0)
    s2.step(o2)
    s2.update()
    print(i, s2.get_scale(), w.detach(), gn)
print(s2.state_dict())
