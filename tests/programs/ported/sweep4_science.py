"""Scientific autograd: autograd.functional (hvp/vhp/jacobian/hessian), linalg factorizations
and their errors, torch.func.jvp/vjp through a network's parameters, functional_call keys."""
import torch
import torch.nn as nn
from torch.autograd.functional import hvp, vhp, jacobian, hessian, jvp, vjp
from torch.func import functional_call
import torch.func as tf

torch.manual_seed(0)


def f(x):
    return (x ** 3).sum() + (x[0] * x[1]) ** 2


x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
v = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)
print("hvp", hvp(f, x, v))
print("vhp", vhp(f, x, v)[1])
print("hessian", hessian(f, x))
a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, -1.0])


def g(a, b):
    return torch.stack([a.sum() * b[0], (a * a).sum() + b[1], a[0] * b.prod()])


J = jacobian(g, (a, b))
print("jacobian", type(J).__name__, len(J), J[0], J[1])
Jc = jacobian(g, (a, b), create_graph=True)
print("create_graph", Jc[0].requires_grad, Jc[0].grad_fn is not None)
print("hvp tuple", hvp(lambda p, q: (p * q).sum() ** 2, (a, b), (torch.ones(2), torch.ones(2))))
print("jvp tuple out", jvp(lambda t: (t ** 3, t * 2), torch.tensor(2.0)))
print("vjp", vjp(lambda t: t * t, a, torch.tensor([1.0, -1.0])))
req = torch.tensor([1.0, 2.0], requires_grad=True)
for cg in (False, True):
    o, hv = hvp(lambda t: (t ** 3).sum(), req, torch.ones(2), create_graph=cg)
    print("create_graph", cg, o.requires_grad, hv.requires_grad)
bad_calls = [
    lambda: jacobian(g, (a, b), strategy="forward-mode"),
    lambda: jacobian(g, (a, b), strategy="fwd"),
    lambda: jacobian(g, (a, b), strict=True, vectorize=True),
    lambda: jacobian(lambda t: torch.ones(2), a, strict=True),
    lambda: jacobian(lambda p, q: p * 2, (a, b), strict=True),
    lambda: hessian(lambda t: t.sum() * 2, a, strict=True),
    lambda: hvp(f, x, torch.ones(2, dtype=torch.float64)),
    lambda: hvp(lambda t: t * 2, a, a),
    lambda: vjp(lambda t: t * 2, a),
    lambda: jvp(lambda p, q: p * q, (a, b), (a,)),
    lambda: jacobian(lambda t: t, [a]),
]
for bad in bad_calls:
    try:
        bad()
        print("no error")
    except Exception as e:
        print(type(e).__name__, e)

M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], dtype=torch.float64)
for mode in ("reduced", "complete", "r"):
    res = torch.linalg.qr(M, mode=mode)
    print(type(res).__name__, mode, res.Q.shape, res.R.diagonal().abs())
print(torch.linalg.qr(M, mode="r"))
for mode in ("r", "complete"):
    Mg = M.clone().requires_grad_(True)
    try:
        torch.linalg.qr(Mg, mode=mode).R.sum().backward()
    except Exception as e:
        print(type(e).__name__, e)
bad = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
sing = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
for call in [lambda: torch.linalg.cholesky(bad), lambda: torch.linalg.cholesky(torch.stack([torch.eye(2), bad])),
             lambda: sing.inverse(), lambda: torch.linalg.solve(torch.ones(3, 3), torch.ones(4)),
             lambda: torch.linalg.eigh(torch.ones(2, 3)), lambda: torch.linalg.inv(torch.ones(2, 2, dtype=torch.int64)),
             lambda: torch.linalg.qr(M, mode="x")]:
    try:
        call()
    except Exception as e:
        print(type(e).__name__, isinstance(e, RuntimeError), e)
print(torch.linalg.cholesky_ex(bad).info, torch.linalg.inv_ex(sing).info)

net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
xs = torch.rand(3, 2)
u, u_x = tf.jvp(net, (xs,), (torch.tensor([[1.0, 0.0]]).expand(3, 2),))
print("u_x", u_x.squeeze(1), u_x.requires_grad)
(u_x ** 2).mean().backward()
print("grad through jvp", net[0].weight.grad)
print(torch.func.vjp(lambda z: net(z).sum(), xs)[1](torch.tensor(1.0))[0].requires_grad)
for d, kw in [({"0.weight": torch.zeros(4, 2), "bogus": torch.zeros(1)}, dict(strict=True)),
              (({"0.weight": torch.zeros(4, 2)}, {"0.weight": torch.ones(4, 2)}), {})]:
    try:
        print(functional_call(net, d, (xs,), **kw).squeeze(1))
    except Exception as e:
        print(type(e).__name__, e)
