# Higher-order autograd: Hessian-vector products, torch.autograd.functional, SAM steps,
# gradient-norm penalties with create_graph, and torch.autograd.grad options.
import torch
import torch.nn as nn
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp

torch.manual_seed(0)


def f(x):
    return (x ** 3).sum() + (x[0] * x[1]).sin()


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
v = torch.tensor([1.0, 0.0, -1.0])
(g,) = torch.autograd.grad(f(x), x, create_graph=True)
print("grad", g, g.grad_fn.name())
(hv,) = torch.autograd.grad(g @ v, x)
print("hvp by double backward", hv)
xd = x.detach()
print("hvp", hvp(f, xd, v)[1])
print("vhp", vhp(f, xd, v)[1])
print("hessian", hessian(f, xd))


def g2(x):
    return torch.stack([x.sum() * x[0], x.prod(), (x * 2)[2]])


print("jac", jacobian(g2, xd, vectorize=True))
print("jac fwd", jacobian(g2, xd, vectorize=True, strategy="forward-mode"))
out, jv = jvp(g2, xd, v)
print("jvp", out, jv)

# SAM: ascend to w + e_w, take the gradient there, step from the original point
model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(6, 2), torch.randn(6, 1)
rho = 0.05
for step in range(2):
    loss = nn.functional.mse_loss(model(data), target)
    loss.backward()
    norm = torch.norm(torch.stack([p.grad.norm(2) for p in model.parameters()]), 2)
    e_ws = []
    with torch.no_grad():
        for p in model.parameters():
            e_w = p.grad * (rho / (norm + 1e-12))
            p.add_(e_w)
            e_ws.append(e_w)
    opt.zero_grad()
    loss2 = nn.functional.mse_loss(model(data), target)
    loss2.backward()
    with torch.no_grad():
        for p, e_w in zip(model.parameters(), e_ws):
            p.sub_(e_w)
    opt.step()
    opt.zero_grad()
    print(f"sam step {step}: loss {loss.item():.6f} perturbed {loss2.item():.6f} "
          f"norm {norm.item():.6f}")
print("version", model[0].weight._version, model[0].weight.is_leaf)

# gradient-norm penalty
w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
inp = torch.tensor([[0.3, -0.7]], requires_grad=True)
out = (inp @ w).tanh().sum()
(gi,) = torch.autograd.grad(out, inp, create_graph=True)
penalty = (gi.norm(2, dim=1) - 1).pow(2).mean()
print("penalty", penalty, penalty.grad_fn.name())
penalty.backward()
print("w.grad", w.grad)

# allow_unused / materialize_grads
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
try:
    torch.autograd.grad(a * 2, [a, b])
except RuntimeError as e:
    print(type(e).__name__, e)
print(torch.autograd.grad(a * 2, [a, b], allow_unused=True))
print(torch.autograd.grad(a * 2, [a, b], materialize_grads=True))
try:
    torch.autograd.grad(a * 2, [a, b], allow_unused=False, materialize_grads=True)
except ValueError as e:
    print(type(e).__name__, e)
(ga,) = torch.autograd.grad(a ** 3, a, create_graph=True)
(gga,) = torch.autograd.grad(ga, a, create_graph=True)
(ggga,) = torch.autograd.grad(gga, a)
print("third derivative", ga.item(), gga.item(), ggga.item(), gga.grad_fn.name())
