# Constrained weights through torch.nn.utils.parametrize, as orthogonal RNNs, Lipschitz
# discriminators and low-rank adapters use it: custom parametrizations with right_inverse,
# stacked parametrizations, caching, the built-in orthogonal/spectral/weight norms, removal.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
from torch.nn.utils import parametrizations

torch.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, X):
        return X * self.s

    def right_inverse(self, Y):
        return Y / self.s


class LowRank(nn.Module):
    """W = W0 + A @ B, where right_inverse splits a weight into (A, B)."""
    def __init__(self, w0, rank):
        super().__init__()
        self.register_buffer("w0", w0.detach().clone())
        self.rank = rank

    def forward(self, A, B):
        return self.w0 + A @ B

    def right_inverse(self, W):
        return torch.zeros(W.size(0), self.rank), torch.zeros(self.rank, W.size(1))


lin = nn.Linear(3, 3)
P.register_parametrization(lin, "weight", Symmetric())
print(lin)
print(P.is_parametrized(lin), P.is_parametrized(lin, "bias"), type(lin).__name__)
W = lin.weight
print("symmetric", torch.equal(W, W.T), W.grad_fn.name())
print([n for n, _ in lin.named_parameters()])
lin.weight = torch.arange(9.).view(3, 3)
print("assigned", lin.parametrizations.weight.original)
P.register_parametrization(lin, "weight", Scale(2.0))
print("stacked", lin.weight, len(lin.parametrizations.weight))
lin.weight = torch.eye(3)
print("inverse through both", lin.parametrizations.weight.original)

x = torch.randn(4, 3)
with P.cached():
    a = lin.weight
    b = lin.weight
    print("cached same object", a is b)
print("uncached", lin.weight is lin.weight)
lin(x).sum().backward()
print("grad on original", lin.parametrizations.weight.original.grad)
P.remove_parametrizations(lin, "weight", leave_parametrized=True)
print("removed", type(lin).__name__, P.is_parametrized(lin), lin.weight, type(lin.weight).__name__)

# LoRA-style adapter: two originals, only they train
base = nn.Linear(4, 2)
P.register_parametrization(base, "weight", LowRank(base.weight, 1), unsafe=True)
print([(n, tuple(p.shape)) for n, p in base.named_parameters()])
base.bias.requires_grad_(False)
opt = torch.optim.SGD([p for p in base.parameters() if p.requires_grad], lr=0.1)
with torch.no_grad():
    base.parametrizations.weight.original0.fill_(0.1)
xs, ys = torch.randn(8, 4), torch.randn(8, 2)
for step in range(3):
    loss = ((base(xs) - ys) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("lora", step, f"{loss.item():.5f}",
          f"{base.parametrizations.weight.original1.abs().sum().item():.5f}")

# built-in parametrizations
q = parametrizations.orthogonal(nn.Linear(4, 4))
Q = q.weight
print("orthogonal", torch.allclose(Q @ Q.T, torch.eye(4), atol=1e-5), q.parametrizations.weight[0])
wide = parametrizations.orthogonal(nn.Linear(5, 3, bias=False), orthogonal_map="cayley")
print("wide rows orthonormal", torch.allclose(wide.weight @ wide.weight.T, torch.eye(3), atol=1e-5))
sn = parametrizations.spectral_norm(nn.Linear(6, 4), n_power_iterations=3)
for _ in range(5):
    sn(torch.randn(2, 6))
sv = torch.linalg.matrix_norm(sn.weight.detach(), ord=2)
print("spectral", round(sv.item(), 3), sorted(k for k in sn.state_dict()))
sn.eval()
print("eval stable", torch.equal(sn.weight, sn.weight))
wn = parametrizations.weight_norm(nn.Linear(3, 2), dim=0)
print("weight_norm", wn.parametrizations.weight.original0.shape,
      wn.parametrizations.weight.original1.shape)
print("norms", torch.allclose(wn.weight.norm(dim=1), wn.parametrizations.weight.original0.view(-1)))
sd = wn.state_dict()
print(sorted(sd))
wn2 = parametrizations.weight_norm(nn.Linear(3, 2), dim=0)
wn2.load_state_dict(sd)
print("loaded", torch.equal(wn2.weight, wn.weight))

errors = [
    lambda: P.remove_parametrizations(nn.Linear(2, 2), "weight"),
    lambda: P.register_parametrization(nn.Linear(2, 3), "weight", Symmetric()),
    lambda: parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr"),
    lambda: P.register_parametrization(nn.Linear(2, 2), "nothing", Scale(1.0)),
]
for f in errors:
    try:
        f()
        print("no error")
    except (ValueError, RuntimeError, KeyError, AttributeError) as e:
        print(type(e).__name__, str(e).splitlines()[0])
