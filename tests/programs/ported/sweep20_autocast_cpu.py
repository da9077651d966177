# Mixed precision on CPU the way people try it before moving to a GPU: torch.autocast with
# bfloat16 (and float16) around a small CNN + MLP, which ops run in low precision and which
# stay in float32, nested autocast(enabled=False) regions, a GradScaler loop on CPU, manual
# .half()/.bfloat16() models, integer and boolean tensor arithmetic, and dtype promotion.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        h = self.ln(F.gelu(self.fc1(h.flatten(1))))
        return self.fc2(h)


net = Net()
x = torch.randn(6, 1, 8, 8)
y = torch.randint(0, 3, (6,))
print(torch.amp.is_autocast_available("cpu"), torch.get_autocast_dtype("cpu"))
with torch.autocast("cpu", dtype=torch.bfloat16):
    print(torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled())
    c = net.conv(x)
    b = net.bn(c)
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    mm = x.flatten(1) @ torch.randn(64, 5)
    soft = logits.softmax(-1)
    s = logits.sum()
    with torch.autocast("cpu", enabled=False):
        full = net.fc2(torch.randn(2, 16))
    print(c.dtype, b.dtype, logits.dtype, loss.dtype, mm.dtype, soft.dtype, s.dtype, full.dtype)
    print(logits.grad_fn.name(), loss.grad_fn.name(), c.grad_fn.name())
print(f"{loss.item():.3f}", torch.is_autocast_enabled("cpu"))
loss.backward()
print(net.conv.weight.grad.dtype, net.fc1.weight.grad.dtype, f"{net.fc2.bias.grad.abs().sum().item():.3f}")

with torch.autocast(device_type="cpu", dtype=torch.float16):
    h = net.fc1(torch.randn(3, 64))
    a = torch.addmm(torch.zeros(3, 2), torch.randn(3, 4), torch.randn(4, 2))
    bmm = torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    ex = torch.exp(h)
    print(h.dtype, a.dtype, bmm.dtype, ex.dtype, torch.get_autocast_dtype("cpu"))

# a short training loop with a CPU GradScaler (growth every 2 clean steps) and bf16 autocast
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=2)
print(scaler.is_enabled(), scaler.get_scale())
for step in range(4):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(net(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    gn = nn.utils.clip_grad_norm_(net.parameters(), 5.0)
    scaler.step(opt)
    scaler.update()
    print(step, f"{loss.item():.2f}", loss.dtype, scaler.get_scale(), f"{gn.item():.1f}")
print(sorted(scaler.state_dict()))

# whole-model low precision
net16 = Net().bfloat16().eval()
with torch.no_grad():
    o = net16(x.bfloat16())
print(o.dtype, net16.bn.running_mean.dtype, o.float().abs().sum().item() > 0)
half_lin = nn.Linear(4, 2).half()
print(half_lin.weight.dtype, half_lin(torch.ones(1, 4, dtype=torch.half)).dtype)

# integer / bool arithmetic and promotion
i = torch.arange(-4, 5, dtype=torch.int32)
print(i // 3, i % 3, torch.div(i, 3, rounding_mode="trunc"), i / 2, (i / 2).dtype)
print(i.to(torch.int8) * 40, (i.to(torch.uint8)), i >> 1, i & 6, ~i[:3])
bm = i > 0
print(bm.sum(), bm.dtype, bm.float().mean(), (bm & (i % 2 == 0)), bm.int().cumsum(0))
print((i + 1.5).dtype, (i.short() + torch.tensor(3)).dtype, (torch.ones(2, dtype=torch.bfloat16) +
      torch.ones(2, dtype=torch.float16)).dtype, torch.result_type(i, 2.0),
      torch.promote_types(torch.int64, torch.bfloat16), torch.can_cast(torch.float32, torch.int32))
hb = torch.tensor([1.0, 2.0 ** -10, 1000.0, 70000.0])
print(hb.half(), hb.bfloat16(), hb.half().float() - hb, torch.finfo(torch.bfloat16))
print(torch.tensor([0.1, 0.2]).bfloat16().sum(), torch.tensor([300], dtype=torch.int16).to(torch.int8))
