"""Custom autograd.Function: ctx API, setup_context style, mark_dirty, once_differentiable."""
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class MyExp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
y = MyExp.apply(x)
print(y, y.grad_fn.name(), type(y.grad_fn).__name__)
print([type(f).__name__ for f, _ in y.grad_fn.next_functions])
y.sum().backward()
print(x.grad)


VERBOSE = True


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        if VERBOSE:
            print("needs_input_grad", ctx.needs_input_grad)
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


torch.manual_seed(0)
inp = torch.randn(4, 3, dtype=torch.double)
weight = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
bias = torch.randn(2, dtype=torch.double, requires_grad=True)
out = LinearFunction.apply(inp, weight, bias)
out.sum().backward()
print(weight.grad)
print(bias.grad)
inp.requires_grad_()
VERBOSE = False
print(torch.autograd.gradcheck(LinearFunction.apply, (inp, weight, bias), eps=1e-6, atol=1e-4))


# setup_context style
class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = MulConstant.apply(a, 5.0)
print(b.grad_fn.name())
b.sum().backward()
print(a.grad)


# mark_non_differentiable: sort values + indices
class Sort(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g_values)
        return grad_input


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx = Sort.apply(x)
print(vals.requires_grad, idx.requires_grad, idx.grad_fn)
(vals * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)


# set_materialize_grads(False): unused outputs arrive as None
class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x.clone(), x.clone()

    @staticmethod
    def backward(ctx, g1, g2):
        print("got", g1 is None, g2 is None)
        grad = torch.zeros(3)
        if g1 is not None:
            grad = grad + g1
        if g2 is not None:
            grad = grad + 2 * g2
        return grad


x = torch.ones(3, requires_grad=True)
o1, o2 = SimpleFunc.apply(x)
o1.sum().backward()
print(x.grad)


class Materialized(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    def backward(ctx, g1, g2):
        print("got", g1, g2)
        return g1 + g2


x.grad = None
o1, o2 = Materialized.apply(x)
o2.sum().backward()
print(x.grad)


# mark_dirty: in-place custom op
class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


leaf = torch.ones(3, requires_grad=True)
h = leaf * 2
r = AddOneInplace.apply(h)
print(r is h, r, r._version, r.grad_fn.name())
(r * r).sum().backward()
print(leaf.grad)


# once_differentiable
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


x = torch.tensor([2.0], requires_grad=True)
y = Cube.apply(x)
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g, g.requires_grad)


# returning None for an input that needs grad -> zero contribution
class IgnoreSecond(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, None


a = torch.ones(2, requires_grad=True)
b = torch.ones(2, requires_grad=True)
IgnoreSecond.apply(a, b).sum().backward()
print(a.grad, b.grad)

# wrong number of gradients
class Wrong(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, g):
        return g


try:
    Wrong.apply(a, b).sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# no grad needed -> no graph
r = MyExp.apply(torch.ones(2))
print(r.requires_grad, r.grad_fn)
with torch.no_grad():
    r = MyExp.apply(x)
print(r.requires_grad, r.grad_fn)

# saved tensor modified after forward
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 1
y = MyExp.apply(h)
y.add_(1)
try:
    y.sum().backward()
except RuntimeError as e:
    print(type(e).__name__, e)

# double backward through a custom Function written with differentiable ops
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


x = torch.tensor([3.0], requires_grad=True, dtype=torch.double)
print(torch.autograd.gradgradcheck(Square.apply, (x,)))
g, = torch.autograd.grad(Square.apply(x), x, create_graph=True)
g2, = torch.autograd.grad(g, x)
print(g, g2)
