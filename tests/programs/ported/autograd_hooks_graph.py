"""Tensor hooks, retain_grad, walking grad_fn.next_functions, graph structure."""
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
seen = []
h = x.register_hook(lambda g: seen.append(g.clone()))
y = x * 2
y.register_hook(lambda g: print("y hook", g))
y2 = y.pow(2)
y2.retain_grad()
y2.register_hook(lambda g: g * 10)
y2.sum().backward()
print(x.grad, seen, y2.grad, y.grad)
h.remove()
x.grad = None
(x * 2).sum().backward()
print(x.grad, len(seen))


# hook that doubles the gradient of a leaf
def double_grad(grad):
    return grad * 2


w = torch.ones(2, requires_grad=True)
handle = w.register_hook(double_grad)
(w * torch.tensor([3.0, 4.0])).sum().backward()
print(w.grad)
handle.remove()
(w * torch.tensor([3.0, 4.0])).sum().backward()
print(w.grad)

# register_hook on a tensor that does not require grad
try:
    torch.ones(2).register_hook(lambda g: g)
except RuntimeError as e:
    print(type(e).__name__, e)

# retain_grad on a leaf is a no-op; .grad of a non-leaf warns and gives None
a = torch.ones(2, requires_grad=True)
a.retain_grad()
b = a * 3
c = b.sum()
c.backward()
print(a.grad, b.grad, b.retains_grad, a.retains_grad)

# walk the graph
torch.manual_seed(0)
W = torch.randn(3, 2, requires_grad=True)
bias = torch.zeros(2, requires_grad=True)
inp = torch.randn(4, 3)
loss = torch.relu(inp @ W + bias).mean()


def walk(fn, depth=0):
    if fn is None:
        return
    name = type(fn).__name__
    extra = ""
    if hasattr(fn, "variable"):
        extra = " " + str(tuple(fn.variable.shape))
    print("  " * depth + name + extra)
    for nxt, _ in fn.next_functions:
        walk(nxt, depth + 1)


walk(loss.grad_fn)
print(loss.grad_fn.next_functions[0][1])
acc = W.grad_fn
print(acc, W.is_leaf)
print(bias.grad_fn)

# the AccumulateGrad of a leaf is shared across graphs
p = torch.ones(1, requires_grad=True)
n1 = (p * 2).grad_fn.next_functions[0][0]
n2 = (p * 3).grad_fn.next_functions[0][0]
print(type(n1).__name__, n1 is n2, n1.variable is p)

# hooks on grad_fn nodes
q = torch.tensor([1.0, 2.0], requires_grad=True)
r = q.exp()
calls = []
r.grad_fn.register_hook(lambda gin, gout: calls.append((len(gin), len(gout))))
r.grad_fn.register_prehook(lambda gout: calls.append("pre"))
r.sum().backward()
print(calls)

# gradient clipping inside a hook
v = torch.tensor([10.0, -10.0], requires_grad=True)
v.register_hook(lambda g: g.clamp(-1, 1))
(v * 5).sum().backward()
print(v.grad)

# post-accumulate-grad hook
z = torch.ones(2, requires_grad=True)
z.register_post_accumulate_grad_hook(lambda t: print("accumulated", t.grad))
(z * 4).sum().backward()

# hooks see grads in order from output to input
order = []
s = torch.tensor(1.0, requires_grad=True)
t1 = s * 2
t2 = t1 * 3
t3 = t2 * 4
for name, t in [("t1", t1), ("t2", t2), ("t3", t3)]:
    t.register_hook(lambda g, name=name: order.append((name, g.item())))
t3.backward()
print(order, s.grad)

# is_leaf rules
print(torch.ones(2).is_leaf, torch.ones(2, requires_grad=True).is_leaf,
      (torch.ones(2, requires_grad=True) * 2).is_leaf, (torch.ones(2) * 2).is_leaf)
cuda_like = torch.rand(3, requires_grad=True).double()
print(cuda_like.is_leaf, cuda_like.grad_fn.name())
