"""Module introspection and surgery: weight tying, nn.utils.parametrizations.orthogonal and
spectral_norm, a custom parametrization, forward pre-hooks / forward hooks with kwargs,
full backward hooks, module.apply init, named_modules/named_parameters/named_children,
print(model) reprs with extra_repr, requires_grad_ freezing and parameter counts."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as P
from torch.nn.utils import parametrizations

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Scaled(nn.Module):
    def __init__(self, dim, scale=2.0):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.scale = scale

    def forward(self, x):
        return self.lin(x) * self.scale

    def extra_repr(self):
        return f"scale={self.scale}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.block = nn.Sequential(Scaled(6), nn.GELU(approximate="tanh"), nn.Linear(6, 6))
        self.sym = nn.Linear(6, 6, bias=False)
        self.ortho = nn.Linear(6, 6)
        self.sn = nn.Linear(6, 4)
        self.out = nn.Linear(6, 10, bias=False)
        self.out.weight = self.emb.weight

    def forward(self, idx):
        h = self.emb(idx)
        h = self.block(h)
        h = self.sym(h) + self.ortho(h)
        return self.out(h), self.sn(h)


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        if m.bias is not None:
            nn.init.constant_(m.bias, 0.01)
    elif isinstance(m, nn.Embedding):
        nn.init.normal_(m.weight, 0.0, 0.02)


net = Net()
net.apply(init)
P.register_parametrization(net.sym, "weight", Symmetric())
parametrizations.orthogonal(net.ortho)
parametrizations.spectral_norm(net.sn)
print(net)
for name, mod in net.named_modules():
    print(repr(name), type(mod).__name__)
print([n for n, _ in net.named_parameters()])
print(sum(p.numel() for p in net.parameters()), len(list(net.parameters(recurse=False))))
print([n for n, _ in net.named_children()], [n for n, _ in net.named_buffers()])
W = net.sym.weight
print(torch.equal(W, W.T), P.is_parametrized(net.sym), P.is_parametrized(net.block))
Q = net.ortho.weight
print(torch.allclose(Q @ Q.T, torch.eye(6), atol=1e-5))
print(torch.linalg.matrix_norm(net.sn.weight, ord=2).item())

log = []
def pre_hook(mod, args):
    log.append(("pre", type(mod).__name__, tuple(args[0].shape)))
    return (args[0] * 1.0,)
def fwd_hook(mod, args, kwargs, out):
    log.append(("fwd", type(mod).__name__, sorted(kwargs)))
def bwd_hook(mod, gin, gout):
    log.append(("bwd", type(mod).__name__, [None if g is None else tuple(g.shape) for g in gin], tuple(gout[0].shape)))
def bwd_pre(mod, gout):
    log.append(("bwd_pre", type(mod).__name__, round(gout[0].abs().sum().item(), 4)))

h1 = net.block.register_forward_pre_hook(pre_hook)
h2 = net.block[0].register_forward_hook(fwd_hook, with_kwargs=True)
h3 = net.block[2].register_full_backward_hook(bwd_hook)
h4 = net.block[2].register_full_backward_pre_hook(bwd_pre)
idx = torch.randint(0, 10, (3, 5))
logits, aux = net(idx)
loss = F.cross_entropy(logits.reshape(-1, 10), idx.reshape(-1)) + aux.pow(2).mean()
loss.backward()
for entry in log:
    print(entry)
print(loss.item(), logits.grad_fn.name(), aux.grad_fn.name())
print(net.emb.weight.grad.abs().sum(), net.sym.parametrizations.weight.original.grad.shape)
for h in (h1, h2, h3, h4):
    h.remove()
log.clear()
net(idx)
print(len(log))

opt = torch.optim.Adam(filter(lambda p: p.requires_grad, net.parameters()), lr=0.01)
net.emb.requires_grad_(False)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
for step in range(4):
    logits, aux = net(idx)
    loss = F.cross_entropy(logits.reshape(-1, 10), idx.reshape(-1)) + aux.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 5), net.emb.weight.grad)
Q = net.ortho.weight
print(torch.allclose(Q @ Q.T, torch.eye(6), atol=1e-4), torch.equal(net.sym.weight, net.sym.weight.T))
print(sorted(net.state_dict().keys()))
P.remove_parametrizations(net.sym, "weight", leave_parametrized=True)
print(type(net.sym).__name__, net.sym)
try:
    P.remove_parametrizations(net.sym, "weight")
except Exception as e:
    print(type(e).__name__, e)
try:
    net.register_buffer("emb", torch.zeros(1))
except Exception as e:
    print(type(e).__name__, e)
try:
    net.get_submodule("block.5")
except Exception as e:
    print(type(e).__name__, e)
