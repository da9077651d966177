"""autograd.grad / backward API: grad_outputs, retain_graph, allow_unused, inputs=, errors."""
import torch

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
w = torch.randn(3, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)

y = w @ x + b
print(y.grad_fn.name(), [type(f).__name__ for f, _ in y.grad_fn.next_functions])
print([(type(f).__name__, i) for f, i in y.grad_fn.next_functions[0][0].next_functions])

# vector-Jacobian product with explicit grad_outputs
v = torch.tensor([1.0, 0.5, -1.0])
gx, gw = torch.autograd.grad(y, (x, w), grad_outputs=v, retain_graph=True)
print(gx)
print(gw)

# backward with gradient=
y.backward(v, retain_graph=True)
print(x.grad, b.grad)
y.backward(v)
print(x.grad, b.grad)

# backward twice without retain_graph
z = (x.sigmoid() * 2).sum()
z.backward()
try:
    z.backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# non-scalar implicit gradient
try:
    (x * 2).backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# allow_unused
u = torch.randn(2, requires_grad=True)
out = (x ** 2).sum()
try:
    torch.autograd.grad(out, [x, u], retain_graph=True)
except RuntimeError as e:
    print(type(e).__name__, e)
gx, gu = torch.autograd.grad(out, [x, u], allow_unused=True, retain_graph=True)
print(gx, gu)
gx, gu = torch.autograd.grad(out, [x, u], materialize_grads=True)
print(gx, gu)

# inputs= restricts accumulation
x.grad = None
w.grad = None
b.grad = None
loss = (w @ x + b).pow(2).sum()
loss.backward(inputs=[w])
print(x.grad, b.grad is None, w.grad.shape)

# input that does not require grad
c = torch.ones(3)
try:
    torch.autograd.grad((c * x).sum(), c)
except RuntimeError as e:
    print(type(e).__name__, e)

# output that does not require grad
try:
    torch.ones(2).sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# several outputs at once
a = torch.tensor([1.0, 2.0], requires_grad=True)
o1 = a * 3
o2 = a ** 2
torch.autograd.backward([o1.sum(), o2.sum()])
print(a.grad)
o1 = a * 3
o2 = a ** 2
g = torch.autograd.grad([o1, o2], a, grad_outputs=[torch.ones(2), torch.full((2,), 0.5)])
print(g)

# grad through integer-valued output is impossible
try:
    torch.autograd.grad(a.sum(), a, grad_outputs=torch.ones(3))
except RuntimeError as e:
    print(type(e).__name__, e)

# shape mismatch of gradient
try:
    (a * 2).backward(torch.ones(3))
except RuntimeError as e:
    print(type(e).__name__, e)

# accumulation and zeroing
p = torch.tensor(2.0, requires_grad=True)
for _ in range(3):
    (p * p).backward()
print(p.grad)
p.grad.zero_()
print(p.grad)
(p ** 3).backward()
print(p.grad, p.grad.requires_grad, p.grad.grad_fn)
