"""jacrev, jacfwd, hessian and torch.autograd.functional."""
import torch
from torch.func import jacrev, jacfwd, hessian
import torch.autograd.functional as AF

torch.manual_seed(0)
x = torch.randn(3)
A = torch.randn(2, 3)


def f(x):
    return A @ x.sin()


print(jacrev(f)(x))
print(jacfwd(f)(x))
print(hessian(lambda v: (v ** 3).sum())(x))
print(jacrev(lambda a, b: a * b, argnums=(0, 1))(x, x + 1))
j, aux = jacrev(lambda v: (v.exp(), v.sum()), has_aux=True)(x)
print(j.shape, aux)
print(jacfwd(jacrev(lambda v: v.norm()))(x).shape)

print(AF.jacobian(f, x))
print(AF.jacobian(lambda a, b: a * b.exp(), (x, x)))
print(AF.jacobian(f, x, strategy="forward-mode", vectorize=True))
print(AF.hessian(lambda v: v.pow(4).sum(), x))
print(AF.hessian(lambda a, b: (a * b).sum(), (x, x)))
out, v = AF.vjp(f, x, torch.ones(2))
print(out, v)
out, v = AF.jvp(f, x, torch.ones(3))
print(out, v)
out, v = AF.hvp(lambda v: (v ** 3).sum(), x, torch.ones(3))
print(out, v)
out, v = AF.vhp(lambda v: (v ** 3).sum(), x, torch.ones(3))
print(out, v)
print(AF.vjp(lambda v: v.sum(), x))
