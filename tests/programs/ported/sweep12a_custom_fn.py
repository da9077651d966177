# Custom autograd Functions: mark_dirty, non-differentiable/None grads, setup_context, errors.
import torch
from torch.autograd.function import once_differentiable
from torch.utils.checkpoint import checkpoint


class ScaleInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        x.mul_(k)
        ctx.mark_dirty(x)
        ctx.k = k
        return x

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
c = ScaleInplace.apply(b, 3.0)
print("dirty:", c is b, c.grad_fn.name(), b._version, c)
d = a * 1
e = ScaleInplace.apply(d[1:], 5.0)   # a view: its base gets CopySlices
print("dirty view:", e.grad_fn.name(), d.grad_fn.name(), d, d._version)
(c.sum() + (d * d).sum()).backward()
print("a.grad", a.grad)
for bad in (a, torch.ones(2, requires_grad=True).mul(2).unbind(0)[0]):
    try:
        ScaleInplace.apply(bad, 2.0)
    except RuntimeError as err:
        print(type(err).__name__, err)


class SortWithIdx(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        vals, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.set_materialize_grads(False)   # unused outputs' grads come as None
        ctx.save_for_backward(idx)
        ctx.scale = scale
        return vals * scale, idx, "tag"

    @staticmethod
    @once_differentiable
    def backward(ctx, gv, gi, gtag):
        (idx,) = ctx.saved_tensors
        print("  grads None:", gv is None, gi is None, gtag)
        out = torch.zeros_like(gv)
        out[idx] = gv * ctx.scale
        return out, None


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx, tag = SortWithIdx.apply(x, 2.0)
print(vals, idx, tag, idx.requires_grad, vals.grad_fn.name())
(vals * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print("sort grad", x.grad)


class ExpSaveOut(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    generate_vmap_rule = True


x = torch.tensor([0.0, 0.5, 1.0])  # torch.func over the setup_context style
print("func.grad", torch.func.grad(lambda t: ExpSaveOut.apply(t).sum())(x))
print("vmap", torch.func.vmap(ExpSaveOut.apply)(x.reshape(3, 1)))
xr = x.clone().requires_grad_()
y = checkpoint(lambda t: ExpSaveOut.apply(t * 2).sum(), xr, use_reentrant=False)
y.backward()
print("checkpoint", y.item(), xr.grad)


def bad_function(name, grad):
    return type(name, (torch.autograd.Function,), {
        "forward": staticmethod(lambda ctx, *xs: xs[0] * 1),
        "backward": staticmethod(lambda ctx, g: grad(g))})


leaf = torch.ones(2, requires_grad=True)
for fn, extra in [(bad_function("BadCount", lambda g: g), (torch.ones(2),)),
                  (bad_function("BadShape", lambda g: torch.ones(4)), ()),
                  (bad_function("Broadcast", lambda g: g.expand(3, 2)), ()),
                  (bad_function("NotTensor", lambda g: (g, g)), (2.0,))]:
    try:
        fn.apply(leaf, *extra).sum().backward()
        print(fn.__name__, "grad", leaf.grad)
    except RuntimeError as err:
        print(type(err).__name__, err)
(g,) = torch.autograd.grad((SortWithIdx.apply(leaf * torch.tensor([2.0, 1.0]), 3.0)[0] ** 2).sum(),
                           leaf, create_graph=True)
print("once_diff grad:", g, g.requires_grad, g.grad_fn.name())
try:
    g.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)
