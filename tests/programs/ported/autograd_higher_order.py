"""Higher-order gradients: create_graph, Hessians, gradient penalties, gradgradcheck."""
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(dy,) = torch.autograd.grad(y, x, create_graph=True)
print(dy.detach(), dy.requires_grad, dy.grad_fn is not None)
(d2y,) = torch.autograd.grad(dy, x, create_graph=True)
print(d2y.item(), d2y.requires_grad)
(d3y,) = torch.autograd.grad(d2y, x)
print(d3y, d3y.requires_grad)

# backward(create_graph=True) leaves a differentiable .grad
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w ** 2).sum() * w.prod()
loss.backward(create_graph=True)
print(w.grad.detach(), w.grad.requires_grad, w.grad.grad_fn is not None)
g_norm = w.grad.norm()
w.grad = None
g_norm.backward()
print(w.grad)

# Hessian of a scalar function, row by row
torch.manual_seed(0)
v = torch.randn(3, requires_grad=True)
f = (v.sin() * v.roll(1)).sum()
(grad,) = torch.autograd.grad(f, v, create_graph=True)
rows = [torch.autograd.grad(grad[i], v, retain_graph=True)[0] for i in range(3)]
print(torch.stack(rows))
H = torch.autograd.functional.hessian(lambda t: (t.sin() * t.roll(1)).sum(), v.detach())
print(H)

# Hessian-vector product
vec = torch.tensor([1.0, 0.0, -1.0])
(hvp,) = torch.autograd.grad(grad, v, grad_outputs=vec)
print(hvp)

# WGAN-GP style gradient penalty
torch.manual_seed(1)
D = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
real = torch.randn(5, 4)
fake = torch.randn(5, 4)
alpha = torch.rand(5, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
out = D(interp)
grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                            create_graph=True, retain_graph=True)[0]
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
print(gp)
gp.backward()
print(D[0].weight.grad.abs().sum(), D[2].weight.grad.abs().sum())

# Jacobian
J = torch.autograd.functional.jacobian(lambda t: t ** 2 + t.sum(), torch.tensor([1.0, 2.0]))
print(J)

# double backward of common ops
for name, fn in [("tanh", torch.tanh), ("sigmoid", torch.sigmoid), ("exp", torch.exp),
                 ("log", torch.log), ("sqrt", torch.sqrt), ("softplus", torch.nn.functional.softplus)]:
    t = torch.tensor([0.5, 1.5], requires_grad=True)
    (g1,) = torch.autograd.grad(fn(t).sum(), t, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), t)
    print(name, g1.requires_grad, g2)

# gradcheck / gradgradcheck on builtin ops
inp = torch.randn(3, 3, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(lambda t: (t @ t).tanh(), (inp,)))
print(torch.autograd.gradgradcheck(lambda t: (t @ t).tanh(), (inp,)))

# create_graph with an unused-then-used input
a = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
out = a * b ** 2
ga, gb = torch.autograd.grad(out, (a, b), create_graph=True)
print(ga.detach(), gb.detach(), ga.requires_grad, gb.requires_grad)
(gab,) = torch.autograd.grad(ga, b, retain_graph=True)
print(gab)

# higher-order through in-place ops
c = torch.tensor([1.0, 2.0], requires_grad=True)
d = c * c
d.mul_(3)
(gc,) = torch.autograd.grad(d.sum(), c, create_graph=True)
print(gc.detach(), gc.requires_grad)
(gcc,) = torch.autograd.grad(gc.sum(), c)
print(gcc)
