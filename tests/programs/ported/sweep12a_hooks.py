# Autograd hooks as training code uses them: module backward hooks, post-accumulate-grad
# optimizer steps, grad_fn hooks, retain_grad, saved-tensor hooks, removal and ordering.
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(5, 3)
log = []


def full_hook(mod, grad_input, grad_output):
    log.append(("full", type(mod).__name__,
                [None if g is None else tuple(g.shape) for g in grad_input],
                [tuple(g.shape) for g in grad_output]))
    if isinstance(mod, nn.Tanh):
        return (grad_input[0] * 0.5,)


def pre_hook(mod, grad_output):
    log.append(("pre", type(mod).__name__, round(grad_output[0].abs().sum().item(), 4)))
    return (grad_output[0] * 2,)


handles = [m.register_full_backward_hook(full_hook) for m in net]
handles.append(net[2].register_full_backward_pre_hook(pre_hook))
net(x).pow(2).sum().backward()
print(*log, sep="\n")
print("w0 grad", net[0].weight.grad.sum().item(), "w2 grad", net[2].weight.grad.sum().item())
for h in handles:
    h.remove()
net.zero_grad()
log.clear()
net(x).pow(2).sum().backward()
print("after remove", len(log), net[0].weight.grad.sum().item())

class Split(nn.Module):
    def forward(self, a, b):
        return a * b, a - b


split = Split()  # q unused, b needs no grad: None in grad_output, zeros in grad_input
split.register_full_backward_hook(lambda m, gi, go: print("split hook", gi, go))
p, q = split(torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0]))
p.sum().backward()
print(p.requires_grad, q.requires_grad, p.grad_fn.name())

# optimizer step fused into backward
params = list(net.parameters())
opts = {p: torch.optim.SGD([p], lr=0.1) for p in params}
steps = []


def step_hook(p):
    steps.append(tuple(p.shape))
    opts[p].step()
    opts[p].zero_grad()


for p in params:
    p.register_post_accumulate_grad_hook(step_hook)
before = net[2].bias.detach().clone()
net(x).sum().backward()
print("steps", steps)
print("bias moved", (net[2].bias - before).tolist(), net[2].bias.grad)

# grad_fn hooks and hook order
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 3
c = b.exp()
c.retain_grad()
b.retain_grad()
order = []
b.register_hook(lambda g: order.append("tensor1") or g * 10)
b.register_hook(lambda g: order.append("tensor2"))
c.grad_fn.register_prehook(lambda gout: order.append("prehook") or (gout[0] + 1,))
c.grad_fn.register_hook(lambda gin, gout: order.append(("post", c.grad_fn.name())))
h = b.grad_fn.register_hook(lambda gin, gout: order.append("removed"))
h.remove()
c.sum().backward()
print(order)
print("b.grad", b.grad, "c.grad", c.grad, "a.grad", a.grad)
print([(f.name(), i) for f, i in c.grad_fn.next_functions], b.is_leaf, b.requires_grad)

# saved tensor hooks
packed = []


def pack(t):
    packed.append(tuple(t.shape))
    return t * 1


def unpack(t):
    packed.append("unpack")
    return t


w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (w * w).sin().sum()
y.backward()
print("packed", packed, w.grad)
w.grad = None
with torch.autograd.graph.save_on_cpu():
    y = (w.exp() * w).sum()
y.backward()
print("save_on_cpu", w.grad)
try:
    y.backward()
except RuntimeError as e:
    print(type(e).__name__, e)
