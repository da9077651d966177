# Quantization-aware training the way small repos hand-roll it: symmetric per-channel int8
# fake quantization with a straight-through estimator, a learned-step-size (LSQ) activation
# quantizer as a custom autograd.Function, then a real int8 export with int4 nibble packing
# (bitwise ops), a dequantized matmul and the error it costs.
import torch
import torch.nn as nn
import torch.nn.functional as F

# float64 keeps the rounding decisions away from float32 noise while we debug the quantizer
torch.set_default_dtype(torch.float64)
torch.manual_seed(0)


def fake_quant_per_channel(w, bits=8):
    qmax = 2 ** (bits - 1) - 1
    scale = w.detach().abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / qmax
    q = torch.clamp(torch.round(w / scale), -qmax - 1, qmax)
    # straight-through: forward uses the rounded value, backward the identity
    return w + (q * scale - w).detach()


class LSQ(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step, qmin, qmax):
        ctx.save_for_backward(x, step)
        ctx.other = (qmin, qmax)
        return torch.round(x / step).clamp(qmin, qmax) * step

    @staticmethod
    def backward(ctx, grad_out):
        x, step = ctx.saved_tensors
        qmin, qmax = ctx.other
        v = x / step
        low, high = v < qmin, v > qmax
        middle = ~(low | high)
        grad_x = grad_out * middle.to(grad_out.dtype)
        g = 1.0 / (x.numel() * qmax) ** 0.5
        grad_step = torch.where(middle, torch.round(v) - v,
                                torch.where(low, torch.full_like(v, qmin),
                                            torch.full_like(v, qmax)))
        grad_step = (grad_out * grad_step).sum().reshape(step.shape) * g
        return grad_x, grad_step, None, None


class QLinear(nn.Linear):
    def __init__(self, in_f, out_f, bits=8):
        super().__init__(in_f, out_f)
        self.bits = bits
        self.act_step = nn.Parameter(torch.tensor([0.05]))

    def forward(self, x):
        xq = LSQ.apply(x, self.act_step, 0, 2 ** self.bits - 1)
        return F.linear(xq, fake_quant_per_channel(self.weight, self.bits), self.bias)

    def extra_repr(self):
        return super().extra_repr() + f", bits={self.bits}"


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), QLinear(16, 8), nn.ReLU(), QLinear(8, 3, bits=4))
print(model)
x = torch.randn(64, 6)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(12):
    opt.zero_grad()
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(f"step {step} loss {loss.item():.5f} out.grad_fn {out.grad_fn.name()}")
print("act steps", [round(m.act_step.item(), 5) for m in model if isinstance(m, QLinear)])
print("act_step grad", model[2].act_step.grad)

# gradient of the STE path equals the plain gradient inside the clipping range
w = torch.randn(4, 5, requires_grad=True)
fq = fake_quant_per_channel(w)
print("fq grad_fn", fq.grad_fn.name(), fq.grad_fn.next_functions[0][0].name())
fq.pow(2).sum().backward()
print("ste grad matches 2*fq", torch.allclose(w.grad, 2 * fq.detach()))
print("distinct levels per row", [torch.unique(r).numel() for r in fake_quant_per_channel(w).detach()])

# export: real int8 weights with per-channel scales
layer = model[2]
with torch.no_grad():
    info = torch.iinfo(torch.int8)
    amin, amax = torch.aminmax(layer.weight, dim=1)
    print("aminmax", amin.shape, amax.dtype, info.min, info.max, info.bits)
    scale = torch.maximum(amax.abs(), amin.abs()) / info.max
    q = torch.round(layer.weight / scale[:, None]).clamp(info.min, info.max).to(torch.int8)
    print("q", q.dtype, q.shape, q[0, :6].tolist(), q.abs().max().item())
    deq = q.float() * scale.unsqueeze(1)
    print("max abs err", f"{(deq - layer.weight).abs().max().item():.6f}",
          "rel", f"{((deq - layer.weight).norm() / layer.weight.norm()).item():.6f}")
    h = torch.relu(model[0](x))
    ref = F.linear(h, layer.weight, layer.bias)
    # integer matmul with int32 accumulation
    hq_scale = h.abs().max() / 127
    hq = torch.round(h / hq_scale).clamp(-128, 127).to(torch.int8)
    acc = hq.to(torch.int32) @ q.to(torch.int32).t()
    print("acc", acc.dtype, acc.shape, acc[0, :4].tolist())
    approx = acc.float() * hq_scale * scale + layer.bias
    print("int matmul err", f"{(approx - ref).abs().max().item():.5f}")

    # int4: pack two signed nibbles per uint8
    head = model[4]
    s4 = head.weight.abs().amax(dim=1, keepdim=True) / 7
    q4 = torch.round(head.weight / s4).clamp(-8, 7).to(torch.int8)
    flat = q4.flatten()
    if flat.numel() % 2:
        flat = torch.cat([flat, flat.new_zeros(1)])
    lo = flat[0::2].to(torch.uint8) & 0x0F
    hi = (flat[1::2].to(torch.uint8) & 0x0F) << 4
    packed = lo | hi
    print("packed", packed.dtype, packed.shape, packed[:6].tolist())
    u_lo = (packed & 0x0F).to(torch.int8)
    u_hi = (packed >> 4).to(torch.int8)
    u_lo = torch.where(u_lo > 7, u_lo - 16, u_lo)
    u_hi = torch.where(u_hi > 7, u_hi - 16, u_hi)
    unpacked = torch.stack([u_lo, u_hi], dim=1).flatten()[: q4.numel()].view_as(q4)
    print("roundtrip", torch.equal(unpacked, q4), unpacked.dtype, int((q4 == -8).sum()))
    bits = torch.bitwise_xor(packed, packed.roll(1))
    print("xor popcount-ish", bits.bitwise_and(1).sum().item(), torch.bitwise_not(packed[:3]).tolist())
    print("bytes fp32 vs int4", head.weight.numel() * head.weight.element_size(),
          packed.numel() * packed.element_size())

# a check people add: quantizer is idempotent
w2 = torch.randn(3, 8)
once = fake_quant_per_channel(w2)
print("idempotent", torch.allclose(once, fake_quant_per_channel(once), atol=1e-6))
print("round half even", torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5])).tolist())
print("round decimals", torch.round(torch.tensor([1.2345, -2.5551]), decimals=2).tolist())

# PyTorch's built-in fake-quant ops (what torch.ao's FakeQuantize modules call) agree with
# the hand-rolled quantizer and carry the same straight-through gradient
w3 = torch.randn(4, 6, dtype=torch.float32, requires_grad=True)
scale3 = (w3.detach().abs().amax(dim=1) / 127).float()
zp3 = torch.zeros(4, dtype=torch.int32)
fq3 = torch.fake_quantize_per_channel_affine(w3, scale3, zp3, 0, -128, 127)
print("builtin per-channel", fq3.grad_fn.name(), fq3.dtype,
      torch.allclose(fq3, fake_quant_per_channel(w3.detach()), atol=1e-6))
g3, = torch.autograd.grad((fq3 * torch.linspace(-1, 1, 6)).sum(), w3)
print("builtin grad", g3[0].tolist())
act = torch.linspace(-0.3, 1.2, 9, dtype=torch.float32, requires_grad=True)
fa = torch.fake_quantize_per_tensor_affine(act, 0.1, 2, 0, 10)
print("per-tensor", fa.tolist(), fa.grad_fn.name())
ga, = torch.autograd.grad(fa.sum(), act)
print("clipped mask", ga.tolist())
fb = torch.fake_quantize_per_tensor_affine(act, torch.tensor([0.1]), torch.tensor([2], dtype=torch.int32), 0, 10)
print("tensor qparams", torch.equal(fa, fb), fb.grad_fn.name())
try:
    torch.fake_quantize_per_tensor_affine(act, 0.1, 12, 0, 10)
except RuntimeError as e:
    print("RuntimeError:", e)
