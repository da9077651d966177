"""In-place ops in autograd graphs: version counter checks, saved tensors, CopySlices."""
import torch

# classic: saved output modified in place
a = torch.randn(3, requires_grad=True)
torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = a.sigmoid()
b.mul_(2)
try:
    b.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

c = a.exp()
c += 1
try:
    c.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# saved input modified in place
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 1
out = h * h
h.add_(1)
try:
    out.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# relu_ in a chain is fine because ReluBackward saves the result
x = torch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.relu_()
print(h.grad_fn.name(), h._version)
h.sum().backward()
print(x.grad)

# in-place ops that are fine: add_ (nothing saved)
x.grad = None
h = x * 3
h.add_(5).mul_(2)
print(h, h.grad_fn.name(), h._version)
h.sum().backward()
print(x.grad)

# many in-place ops on a non-leaf
x = torch.arange(6.0, requires_grad=True)
y = x.clone()
y.clamp_(1, 4)
print(y.grad_fn.name(), y._version)
y.masked_fill_(y > 3, 0.0)
print(y.grad_fn.name(), y._version)
y.index_add_(0, torch.tensor([0, 2]), torch.tensor([10.0, 20.0]))
print(y.grad_fn.name(), y)
y.scatter_(0, torch.tensor([5]), torch.tensor([-1.0]))
print(y.grad_fn.name(), y._version)
(y * torch.arange(6.0)).sum().backward()
print(x.grad)

# __setitem__ with a tensor that requires grad
x = torch.zeros(4, requires_grad=True)
src = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 1
y[1:3] = src * 2
print(y.grad_fn.name(), y)
(y * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(x.grad, src.grad)

# boolean-mask assignment
x = torch.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
y = x.clone()
y[y < 0] = 0
print(y.grad_fn.name(), y)
y.sum().backward()
print(x.grad)

# copy_ into a non-leaf from a requires-grad source
x = torch.tensor([1.0, 2.0], requires_grad=True)
buf = torch.zeros(2)
buf.copy_(x * 3)
print(buf.requires_grad, buf.grad_fn.name(), buf.is_leaf)
buf.sum().backward()
print(x.grad)

# zero_ and fill_ break the dependency
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 2
y.zero_()
print(y.grad_fn.name())
y.sum().backward()
print(x.grad)
x.grad = None
y = x * 2
y.fill_(3.0)
print(y.grad_fn.name())
(y * x).sum().backward()
print(x.grad)

# in-place on an intermediate used by two branches
x = torch.tensor([0.5, 1.5], requires_grad=True)
h = x.tanh()
branch = h * 3
h.add_(1)
try:
    (branch + h).sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# the error names the right version after several writes
x = torch.ones(2, requires_grad=True)
y = x.pow(2)
z = y.pow(2)
y.add_(1)
y.add_(1)
try:
    z.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# in-place on a leaf that requires grad
w = torch.ones(2, requires_grad=True)
for op in [lambda: w.add_(1), lambda: w.zero_(), lambda: w.fill_(2), lambda: w.clamp_(0, 1),
           lambda: w.copy_(torch.zeros(2)), lambda: w.masked_fill_(torch.tensor([True, False]), 0.0)]:
    try:
        op()
    except RuntimeError as e:
        print(type(e).__name__, e)
try:
    w += 1
except RuntimeError as e:
    print(type(e).__name__, e)
print(w._version)
