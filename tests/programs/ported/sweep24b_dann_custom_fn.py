"""Domain-adversarial training (DANN) on two shifted toy domains, built from hand-written
autograd.Functions: a gradient reversal layer, a straight-through sign estimator for a binary
bottleneck, and a clamp whose backward uses save_for_backward and needs_input_grad. Also the
checks people run on such functions: gradcheck, grad_fn names, and the errors a backward with
the wrong number or shape of gradients raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


class GradReverse(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class SignSTE(Function):
    """sign() forward; gradient passed straight through where |x| <= 1 (hardtanh STE)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x >= 0, torch.ones_like(x), -torch.ones_like(x))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1).to(g.dtype)


class SoftClamp(Function):
    """clamp(x, lo, hi) with a leaky gradient outside the range; lo/hi may be tensors."""

    @staticmethod
    def forward(ctx, x, lo, hi, leak=0.01):
        ctx.save_for_backward(x, lo, hi)
        ctx.leak = leak
        return torch.minimum(torch.maximum(x, lo), hi)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        inside = (x >= lo) & (x <= hi)
        gx = glo = ghi = None
        if ctx.needs_input_grad[0]:
            gx = torch.where(inside, g, g * ctx.leak)
        if ctx.needs_input_grad[1]:
            glo = torch.where(x < lo, g, torch.zeros_like(g)).sum(0)
        if ctx.needs_input_grad[2]:
            ghi = torch.where(x > hi, g, torch.zeros_like(g)).sum(0)
        return gx, glo, ghi, None


def grad_reverse(x, alpha=1.0):
    return GradReverse.apply(x, alpha)


# --- the functions on their own -------------------------------------------------------
x = torch.tensor([-1.5, -0.3, 0.0, 0.4, 2.0], requires_grad=True)
y = SignSTE.apply(x)
print("sign", y.tolist(), type(y.grad_fn).__name__, y.requires_grad)
y.sum().backward()
print("ste grad", x.grad.tolist())

x.grad = None
r = grad_reverse(x * 2, alpha=0.5)
print("reverse", type(r.grad_fn).__name__, [type(f[0]).__name__ for f in r.grad_fn.next_functions])
r.pow(2).sum().backward()
print("reversed grad", x.grad.tolist())

lo = torch.full((3,), -0.5, requires_grad=True)
hi = torch.tensor([0.5, 1.0, 1.5])
z = torch.tensor([[-1.0, 0.2, 2.0], [0.7, -0.7, 1.2]], requires_grad=True)
out = SoftClamp.apply(z, lo, hi)
print("clamp", out.tolist(), out.grad_fn.__class__.__name__)
out.backward(torch.ones_like(out))
print("clamp grads", z.grad.tolist(), lo.grad.tolist(), hi.grad)

torch.manual_seed(3)
zd = torch.randn(4, 3, dtype=torch.double) * 2
lod = torch.full((3,), -0.9, dtype=torch.double, requires_grad=True)
hid = torch.full((3,), 0.9, dtype=torch.double)
# leak=0 makes the backward the true derivative; keep inputs away from the kinks so finite differences see a smooth function
zd = torch.where((zd.abs() - 0.9).abs() < 0.05, zd * 1.2, zd).detach().requires_grad_()
print("gradcheck SoftClamp", torch.autograd.gradcheck(
    lambda a, b: SoftClamp.apply(a, b, hid, 0.0), (zd, lod), eps=1e-6, atol=1e-4))


# --- errors from ill-formed backward methods ------------------------------------------
class TooFew(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g


class BadShape(Function):
    @staticmethod
    def forward(ctx, a):
        return a.sum()

    @staticmethod
    def backward(ctx, g):
        return g.expand(5)


a = torch.ones(2, 3, requires_grad=True)
for fn, args in [(TooFew, (a, a)), (BadShape, (a,))]:
    try:
        fn.apply(*args).sum().backward()
    except RuntimeError as e:
        print(f"{fn.__name__}: RuntimeError: {e}")
try:
    GradReverse()(a, 1.0)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])


# --- DANN on two domains --------------------------------------------------------------
torch.manual_seed(0)
n = 64
xs = torch.randn(n, 2)
ys = (xs[:, 0] + 0.5 * xs[:, 1] > 0).long()
rot = torch.tensor([[0.8, -0.6], [0.6, 0.8]])
xt = torch.randn(n, 2) @ rot.T + torch.tensor([1.0, -0.5])
yt = ((xt - torch.tensor([1.0, -0.5])) @ rot)[:, 0].add(
    0.5 * ((xt - torch.tensor([1.0, -0.5])) @ rot)[:, 1]).gt(0).long()


class DANN(nn.Module):
    def __init__(self, hidden=16, code=8):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, code))
        self.label_head = nn.Linear(code, 2)
        self.domain_head = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.register_buffer("lo", torch.full((code,), -2.0))
        self.register_buffer("hi", torch.full((code,), 2.0))

    def forward(self, x, alpha=1.0, binary=False):
        h = SoftClamp.apply(self.features(x), self.lo, self.hi)
        if binary:
            h = SignSTE.apply(h)
        return self.label_head(h), self.domain_head(grad_reverse(h, alpha)).squeeze(-1)


model = DANN()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
steps = 20
for step in range(steps):
    p = step / steps
    alpha = 2.0 / (1.0 + torch.exp(torch.tensor(-10.0 * p)).item()) - 1.0
    logits_s, dom_s = model(xs, alpha)
    _, dom_t = model(xt, alpha)
    cls = F.cross_entropy(logits_s, ys)
    dom = F.binary_cross_entropy_with_logits(
        torch.cat([dom_s, dom_t]), torch.cat([torch.zeros(n), torch.ones(n)]))
    loss = cls + dom
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0 or step == steps - 1:
        print(f"step {step:2d} alpha {alpha:.3f} cls {cls.item():.4f} dom {dom.item():.4f}")

print("lo/hi grads", model.lo.grad, model.hi.requires_grad)
head_grad = model.domain_head[0].weight.grad
print("domain head grad shape", tuple(head_grad.shape), head_grad.abs().sum().item() > 0)

with torch.no_grad():
    acc_s = (model(xs)[0].argmax(1) == ys).float().mean().item()
    acc_t = (model(xt)[0].argmax(1) == yt).float().mean().item()
    print(f"source acc {acc_s:.4f} target acc {acc_t:.4f}")
    out, _ = model(xt[:4], binary=True)
    print("binary code logits", out.shape, out.grad_fn, out.requires_grad)

# binary bottleneck fine-tune: gradients reach the features only through the STE
model.zero_grad()
logits, _ = model(xs, binary=True)
F.cross_entropy(logits, ys).backward()
g = model.features[2].weight.grad
print("ste feature grad", tuple(g.shape), f"{g.norm().item():.5f}")
