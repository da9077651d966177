"""Gradient penalties and the graph create_graph builds: which gradients require grad, their
grad_fn names, unused inputs, .grad left None by a penalty, and an optimizer after it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

# grad_fn names of first gradients (the gradient graph is made of the formulas' ops)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
b = torch.tensor(0.3, requires_grad=True)
for text, f in [("x**3", lambda: x ** 3), ("sin", lambda: x.sin()), ("tanh", lambda: x.tanh()),
                ("sigmoid", lambda: x.sigmoid()), ("relu", lambda: x.relu()),
                ("x*w", lambda: x * w), ("log", lambda: x.log()), ("x/w", lambda: x / w),
                ("x-w", lambda: x - w), ("mean", lambda: (x * x).mean()),
                ("sum*2", lambda: x.sum() * 2), ("softplus", lambda: F.softplus(x)),
                ("gelu", lambda: F.gelu(x)), ("softmax", lambda: x.softmax(0) * w)]:
    (g,) = torch.autograd.grad(f().sum(), x, create_graph=True)
    print(text, g.requires_grad, g.grad_fn.name() if g.grad_fn is not None else None)

# unused inputs of a second differentiation
gx, gw, gb = torch.autograd.grad((x * w + b).sum(), [x, w, b], create_graph=True)
print(gx.grad_fn.name(), gw.grad_fn.name(), gb.grad_fn, gb)
print(torch.autograd.grad(gx.sum(), [x, w, b], allow_unused=True, retain_graph=True))
try:
    torch.autograd.grad(gx.sum(), [x, w])
except RuntimeError as e:
    print("RuntimeError:", e)

# second and third derivatives
(d1,) = torch.autograd.grad((x.tanh() * w).sum(), x, create_graph=True)
d2 = torch.autograd.grad(d1.sum(), [x, w], create_graph=True)
d3 = torch.autograd.grad(d2[0].sum(), [x, w])
print(d1, d2, d3)

# WGAN-GP with a linear critic: the bias does not reach the penalty
torch.manual_seed(0)
lin = nn.Linear(3, 1)
inp = torch.randn(4, 3, requires_grad=True)
(gi,) = torch.autograd.grad(lin(inp).sum(), inp, create_graph=True)
gp = ((gi.norm(dim=1) - 1) ** 2).mean()
gp.backward()
print(gp, lin.weight.grad, lin.bias.grad)

# ... and an MLP critic trained two steps with Adam
torch.manual_seed(1)
D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.Adam(D.parameters(), lr=0.01)
real, fake = torch.randn(6, 4), torch.randn(6, 4)
for step in range(2):
    opt.zero_grad()
    alpha = torch.rand(6, 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = D(interp)
    (g,) = torch.autograd.grad(out, interp, torch.ones_like(out), create_graph=True)
    print(g.grad_fn.name())
    penalty = 10 * ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = D(fake).mean() - D(real).mean() + penalty
    loss.backward()
    print(step, penalty.item(), [p.grad is None for p in D.parameters()])
    opt.step()
print(D[4].weight)

# Hessian-vector product
v = torch.tensor([0.3, -1.2, 2.0], requires_grad=True)
(gv,) = torch.autograd.grad((v.sin() * v.roll(1)).sum() * v.exp().sum(), v, create_graph=True)
print(torch.autograd.grad(gv, v, grad_outputs=torch.tensor([1.0, 0.0, -1.0])))
