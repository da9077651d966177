"""A small "kernels" module the way libraries ship fused ops: a scaled-residual custom op
declared with torch.library.custom_op (type hints give the schema), a fake (meta) kernel, a
hand-written backward through register_autograd, an in-place clamp op that mutates its input,
and aten calls through torch.ops.aten inside a model's forward; a few training steps, and the
errors a user hits when a custom op is declared wrongly."""
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.library.custom_op("sweeplib::scaled_residual", mutates_args=())
def scaled_residual(x: torch.Tensor, h: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * h


@scaled_residual.register_fake
def _(x, h, alpha):
    torch._check(x.shape == h.shape)
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    _, _, alpha = inputs
    ctx.alpha = alpha


def _backward(ctx, grad):
    return grad, grad * ctx.alpha, None


scaled_residual.register_autograd(_backward, setup_context=_setup)


@torch.library.custom_op("sweeplib::clamp_inplace", mutates_args={"x"})
def clamp_inplace(x: torch.Tensor, bound: float) -> None:
    x.clamp_(-bound, bound)


@torch.library.custom_op("sweeplib::rms_scale", mutates_args=())
def rms_scale(x: torch.Tensor, weight: Optional[torch.Tensor], eps: float = 1e-6) -> torch.Tensor:
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if weight is None else y * weight


x0 = torch.randn(2, 4, requires_grad=True)
try:
    rms_scale(x0, None).sum().backward()
except RuntimeError as e:
    print("RuntimeError", e)


def _rms_setup(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _rms_backward(ctx, grad):
    x, weight = ctx.saved_tensors
    r = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + ctx.eps)
    y = x * r
    gy = grad if weight is None else grad * weight
    gx = r * (gy - y * (gy * y).mean(-1, keepdim=True))
    gw = None if weight is None else (grad * y).reshape(-1, y.shape[-1]).sum(0)
    return gx, gw, None


rms_scale.register_autograd(_rms_backward, setup_context=_rms_setup)
out = rms_scale(x0, torch.full((4,), 2.0, requires_grad=True))
(out * torch.linspace(-1, 1, 4)).sum().backward()
print("rms grad", x0.grad.abs().sum().item(), type(out.grad_fn).__name__)

print("op", torch.ops.sweeplib.scaled_residual)
print("overload", torch.ops.sweeplib.scaled_residual.default)
print("schema", torch.ops.sweeplib.scaled_residual.default._schema)
print("schema", torch.ops.sweeplib.clamp_inplace.default._schema)

a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, 3, requires_grad=True)
out = scaled_residual(a, b, 0.5)
print("eager", out.shape, out.dtype, type(out.grad_fn).__name__)
same = torch.ops.sweeplib.scaled_residual(a, b, 0.5)
print("same through torch.ops", torch.allclose(out, same))
out.sum().backward()
print("grads", a.grad.tolist(), b.grad[0].tolist())

t = torch.tensor([-3.0, -0.5, 0.25, 2.0])
ret = clamp_inplace(t, 1.0)
print("clamped in place", t.tolist(), ret)
print("rms no weight", rms_scale(torch.ones(2, 4) * 3, None).tolist())


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.norm_weight = nn.Parameter(torch.ones(dim))
        self.alpha = 0.7

    def forward(self, x):
        torch._check(x.dim() == 2, lambda: f"Block expects (batch, dim) input, got {x.dim()}-D")
        h = torch.ops.aten.relu.default(self.fc1(x))
        h = torch.ops.aten.mm.default(h, self.fc2.weight.t())
        h = torch.ops.aten.add.Tensor(h, self.fc2.bias)
        x = torch.ops.sweeplib.scaled_residual(x, h, self.alpha)
        return rms_scale(x, self.norm_weight)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 8)
        self.blocks = nn.ModuleList([Block(8) for _ in range(2)])
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        x = self.embed(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(torch.ops.aten.mean.dim(x.unsqueeze(1), [1]))


net = Net()
opt = torch.optim.AdamW(net.parameters(), lr=1e-2, weight_decay=0.01)
x = torch.randn(16, 6)
y = torch.randint(0, 3, (16,))
for step in range(6):
    logits = net(x)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    with torch.no_grad():
        for p in net.parameters():
            clamp_inplace(p.grad, 0.5)
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
print("norm weight grad", net.blocks[1].norm_weight.grad.tolist())
print("param count", sum(p.numel() for p in net.parameters()))
print("aten sum", torch.ops.aten.sum.dim_IntList(x, [1]).shape,
      torch.ops.aten.sum.default(x).shape)
print("aten grad_fn", torch.ops.aten.mul.Tensor(a, b).grad_fn.name())
print("packet", torch.ops.aten.addmm, torch.ops.aten.addmm.default.name())

with torch.no_grad():
    preds = net(x).argmax(1)
print("train accuracy", (preds == y).float().mean().item())

try:
    net(x.unsqueeze(0))
except RuntimeError as e:
    print("RuntimeError", e)

# mistakes people make when declaring ops
try:
    @torch.library.custom_op("sweeplib::nohints", mutates_args=())
    def nohints(x):
        return x
except ValueError as e:
    print("ValueError", str(e).split(".")[0])

try:
    torch.ops.sweeplib.does_not_exist
except AttributeError as e:
    print("AttributeError", e)
try:
    torch.ops.aten.add.NoSuchOverload
except AttributeError as e:
    print("AttributeError", e)
