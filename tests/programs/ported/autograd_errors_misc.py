"""Errors PyTorch raises around views, leaves, .grad assignment and anomaly detection."""
import torch


def attempt(label, fn):
    try:
        out = fn()
        print(label, "ok", out)
    except (RuntimeError, TypeError) as e:
        print(label, type(e).__name__, e)


x = torch.arange(12.0).reshape(3, 4).requires_grad_()

# outputs of split / chunk / unbind cannot be modified in place (nor their base, then used)
def split_inplace():
    y = x * 1
    first, second = y.split(2, dim=1)
    second.mul_(2)
attempt("split", split_inplace)

def chunk_base_modified():
    y = x * 1
    parts = y.chunk(3, dim=0)
    y.add_(1)
    return parts[1].sum()
attempt("chunk", chunk_base_modified)

def unbind_row():
    y = x * 1
    rows = y.unbind(0)
    rows[2][1:].zero_()
attempt("unbind", unbind_row)

def unbind_nograd():
    with torch.no_grad():
        y = x * 1
        rows = y.unbind(0)
        rows[0].add_(1)
    return y[0]
attempt("unbind under no_grad", unbind_nograd)

# a view made in no_grad mode, modified with grad enabled
def nograd_view():
    y = x * 1
    with torch.no_grad():
        v = y[0]
    v.mul_(2)
attempt("no_grad view", nograd_view)

def nograd_view_ok():
    y = x * 1
    with torch.no_grad():
        v = y[0]
        v.mul_(2)
    return y[0]
attempt("no_grad view in no_grad", nograd_view_ok)

# writing into an expanded tensor
attempt("expand add_", lambda: torch.zeros(1).expand(3).add_(1))
attempt("expand copy_", lambda: torch.zeros(3, 1).expand(3, 2).copy_(torch.ones(3, 2)))
attempt("expand fill_", lambda: torch.zeros(3, 1).expand(3, 2).fill_(1))
attempt("expand clone", lambda: torch.zeros(3, 1).expand(3, 2).clone().add_(1))

# requires_grad on non-leaves
def set_false():
    y = x * 2
    y.requires_grad = False
attempt("set False", set_false)

def set_true():
    y = x * 2
    y.requires_grad = True
attempt("set True", set_true)
attempt("requires_grad_", lambda: (x * 2).requires_grad_().is_leaf)
attempt("int requires_grad_", lambda: torch.arange(3).requires_grad_())
attempt("int factory", lambda: torch.zeros(2, dtype=torch.long, requires_grad=True))
attempt("bool full", lambda: torch.full((2,), True, requires_grad=True))

# assigning .grad
p = torch.zeros(3, requires_grad=True)
def bad_size():
    p.grad = torch.zeros(4)
attempt("grad size", bad_size)
def bad_dtype():
    p.grad = torch.zeros(3, dtype=torch.float64)
attempt("grad dtype", bad_dtype)
def bad_type():
    p.grad = [0.0, 0.0, 0.0]
attempt("grad type", bad_type)
def good():
    p.grad = torch.ones(3)
    (p * 2).sum().backward()
    return p.grad
attempt("grad accumulate", good)

# fill_ / zero_ on non-leaves
y = x * 1
y.fill_(2.0)
print(y.grad_fn.name(), y._version)
y = x * 1
y.fill_(torch.tensor(3.0))
print(y.grad_fn.name(), y._version)
y = x * 1
y.zero_()
print(y.grad_fn.name(), type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)
y = x * 1
y[1].fill_(0)
print(y.grad_fn.name(), y[1].grad_fn.name(), y._version)
attempt("fill_ 1-d value", lambda: torch.zeros(3).fill_(torch.ones(2)))

# anomaly detection names the node that produced NaN
with torch.autograd.detect_anomaly():
    q = torch.tensor([0.0, 1.0], requires_grad=True)
    attempt("anomaly", lambda: (q.sqrt() * 0).sum().backward())
print(torch.is_anomaly_enabled())
q = torch.tensor([0.0, 1.0], requires_grad=True)
(q.sqrt() * 0).sum().backward()
print(q.grad)

# grad_fn classes
z = (x * 2).sum()
print(type(z.grad_fn).__name__, isinstance(z.grad_fn, torch.autograd.graph.Node))
print([type(f).__name__ for f, _ in z.grad_fn.next_functions])
c = torch.zeros(3)
c.copy_(torch.ones(3, requires_grad=True))
print(c.grad_fn.name(), type(c.grad_fn).__name__)
