# Forward-mode AD: dual tensors through layers and losses, torch.func.jvp/linearize/jacfwd,
# a custom Function with a jvp rule, and the errors PyTorch raises.
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
lin = nn.Linear(3, 2)
conv = nn.Conv1d(2, 2, 3, padding=1)
x = torch.randn(2, 3)
tx = torch.randn(2, 3)
target = torch.tensor([1, 0])
for prm in list(lin.parameters()) + list(conv.parameters()):
    prm.requires_grad_(False)   # forward AD over the data only

with fwAD.dual_level():
    dx = fwAD.make_dual(x, tx)
    h = lin(dx)
    p, t = fwAD.unpack_dual(h)
    print("linear", p, t)
    a = F.gelu(h) + torch.sigmoid(h) * F.softplus(h)
    print("act tangent", fwAD.unpack_dual(a).tangent)
    c = conv(a.unsqueeze(0).transpose(1, 2).repeat(1, 1, 2))
    print("conv tangent", fwAD.unpack_dual(c).tangent)
    loss = F.cross_entropy(h, target) + F.mse_loss(a, torch.zeros_like(a))
    print("loss", fwAD.unpack_dual(loss))
    sm = h.log_softmax(-1).exp().sum(-1)
    print("softmax sum tangent ~ 0:", fwAD.unpack_dual(sm).tangent.abs().max().item() < 1e-5)
    buf = torch.zeros(2, 4)   # writes into a plain buffer carry the tangent over
    buf[:, 1:] = h.repeat(1, 2)[:, :3]
    print("buffer tangent", fwAD.unpack_dual(buf).tangent)
    print("is dual", fwAD.unpack_dual(x).tangent is None, dx.requires_grad)
    try:
        fwAD.make_dual(x, torch.randn(3))
    except RuntimeError as e:
        print(type(e).__name__, e)
with fwAD.dual_level():
    wd = fwAD.make_dual(torch.ones(2, requires_grad=True), torch.ones(2))
    p, t = fwAD.unpack_dual(wd * 3)
    print("primal view", p, p.grad_fn.name(), [f.name() for f, _ in p.grad_fn.next_functions])
print("outside level", fwAD.unpack_dual(h).tangent)
try:
    fwAD.make_dual(x, tx)
except RuntimeError as e:
    print(type(e).__name__, e)


def f(w, b):
    return torch.tanh(x @ w + b).sum(0)


w0, b0 = torch.randn(3, 2), torch.randn(2)
out, jv = torch.func.jvp(f, (w0, b0), (torch.ones(3, 2), torch.zeros(2)))
print("func.jvp", out, jv)
out2, jvp_fn = torch.func.linearize(f, w0, b0)
print("linearize", jvp_fn(torch.ones(3, 2), torch.zeros(2)))
print("jacfwd", torch.func.jacfwd(f, argnums=1)(w0, b0))
print("jacfwd==jacrev", torch.allclose(torch.func.jacfwd(f)(w0, b0), torch.func.jacrev(f)(w0, b0)))


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g

    @staticmethod
    def jvp(ctx, tx):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * tx


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


v = torch.tensor([1.0, 2.0, -1.0])
with fwAD.dual_level():
    y = Cube.apply(fwAD.make_dual(v, torch.ones(3)))
    print("custom jvp", fwAD.unpack_dual(y))
    try:
        NoJvp.apply(fwAD.make_dual(v, torch.ones(3)))
    except NotImplementedError as e:
        print(type(e).__name__, e)
vr = v.clone().requires_grad_()
Cube.apply(vr).sum().backward()
print("custom backward", vr.grad)
