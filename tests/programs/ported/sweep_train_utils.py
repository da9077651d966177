"""Training utilities seen in research repos: weight_norm / spectral_norm parametrizations,
activation checkpointing (torch.utils.checkpoint), add_param_group for a head unfrozen mid-run,
optimizer state inspection, LBFGS with a closure, IterableDataset streaming with
get_worker_info, a manual lr decay, zero_grad(set_to_none), grad norms."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp
from torch.nn.utils import parametrizations
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

torch.manual_seed(0)


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        print("worker info", info)
        g = torch.Generator().manual_seed(5)
        for i in range(self.n):
            x = torch.randn(6, generator=g)
            yield x, (x.sum() > 0).long()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = parametrizations.weight_norm(nn.Linear(6, 16))
        self.fc2 = parametrizations.spectral_norm(nn.Linear(16, 16))
        self.head = nn.Linear(16, 2)

    def block(self, h):
        return F.gelu(self.fc1(h)) * 2

    def forward(self, x, use_cp=False):
        # PyTorch's checkpoint recomputes in backward: spectral_norm inside it would run its
        # power iteration twice and differentiate the second one; keep it outside
        h = cp.checkpoint(self.block, x, use_reentrant=False) if use_cp else self.block(x)
        return self.head(F.gelu(self.fc2(h)))


net = Net()
print(net)
print(sorted(n for n, _ in net.named_parameters()))
print(f"{net.fc1.parametrizations.weight.original0.norm().item():.5f}")
for p in net.head.parameters():
    p.requires_grad_(False)
opt = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=5e-3)
loader = DataLoader(Stream(40), batch_size=8)
for epoch in range(3):
    if epoch == 1:
        for p in net.head.parameters():
            p.requires_grad_(True)
        opt.add_param_group({"params": list(net.head.parameters()), "lr": 1e-3})
        print("groups", len(opt.param_groups), [sorted(k for k in g if k != "params") for g in opt.param_groups][1])
    tot = 0.0
    for x, y in loader:
        out = net(x, use_cp=epoch == 2)
        loss = F.cross_entropy(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.norm(torch.stack([p.grad.norm() for p in net.parameters() if p.grad is not None]))
        opt.step()
        tot += loss.item()
    for g in opt.param_groups:
        g["lr"] *= 0.9
    print(f"epoch {epoch} loss {tot:.5f} gnorm {gn.item():.5f} lrs {[round(g['lr'], 6) for g in opt.param_groups]}")
st = opt.state_dict()
print(len(st["state"]), sorted(st["state"][0].keys()), st["state"][0]["step"])
print(f"{net.fc2.parametrizations.weight.original.norm().item():.5f}")
W = net.fc2.weight
print(f"sigma {torch.linalg.matrix_norm(W, 2).item():.4f}")
x = torch.randn(3, 6, requires_grad=True)
a = net(x, use_cp=True).sum()
ga, = torch.autograd.grad(a, x)
b = net(x).sum()
gb, = torch.autograd.grad(b, x)
print(torch.allclose(ga, gb, atol=1e-6), torch.allclose(a, b))
print(nn.utils.parameters_to_vector(net.head.parameters()).shape)

# LBFGS on a least-squares fit
torch.manual_seed(3)
A, bvec = torch.randn(20, 4), torch.randn(20)
w = torch.zeros(4, requires_grad=True)
lbfgs = torch.optim.LBFGS([w], lr=1, max_iter=20, history_size=5, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = ((A @ w - bvec) ** 2).mean() + 0.01 * w.pow(2).sum()
    loss.backward()
    return loss


for i in range(2):
    l = lbfgs.step(closure)
    print(f"lbfgs {i} {l.item():.6f} {w.detach().numpy().round(4).tolist()}")
print(lbfgs.state[w]["n_iter"], lbfgs.state[w]["func_evals"])
sol = torch.linalg.solve(A.t() @ A / 20 + 0.01 * torch.eye(4), A.t() @ bvec / 20)
print(torch.allclose(w.detach(), sol, atol=1e-4))
