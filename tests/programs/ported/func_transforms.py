"""torch.func: grad, grad_and_value (has_aux), vjp, jvp, argnums and pytrees."""
import torch
from torch.func import grad, grad_and_value, vjp, jvp

torch.manual_seed(0)
x = torch.randn(5)
w = torch.randn(5)


def f(x):
    return (x.sin() ** 2).sum()


print(grad(f)(x))
print(grad(grad(lambda t: t.sin().sum()))(torch.tensor(0.3)))


def loss(w, x):
    pred = (w * x).sum()
    return (pred - 1.0) ** 2, {"pred": pred}


g, (value, aux) = grad_and_value(loss, has_aux=True)(w, x)
print(g, value, aux["pred"])
gw, gx = grad(lambda w, x: loss(w, x)[0], argnums=(0, 1))(w, x)
print(gw, gx)
params = {"a": torch.tensor(2.0), "b": torch.tensor([1.0, -1.0])}
print(grad(lambda p: (p["a"] * p["b"] ** 3).sum())(params))

out, pull = vjp(torch.tanh, x)
print(out)
(ct,) = pull(torch.ones(5))
print(ct)
out, pull, aux = vjp(lambda a, b: ((a * b).exp(), a.sum()), x, w, has_aux=True)
ga, gb = pull(torch.ones(5))
print(ga, gb, aux)
value, tangent = jvp(lambda a: a.exp() * 2, (x,), (torch.ones(5),))
print(value, tangent)
value, tangent = jvp(lambda a, b: a * b, (x, w), (w, x))
print(tangent)
print(type(g).__name__, g.requires_grad, g.grad_fn)
