"""Energy-based model trained with short-run Langevin sampling: randn_like noise, inputs made
to require grad inside the loop, autograd.grad of the energy sum, detach between steps, a
replay buffer grown with torch.cat and sampled with randint, spectral_norm on the Linears."""
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

torch.manual_seed(0)
energy = nn.Sequential(
    spectral_norm(nn.Linear(2, 16)), nn.SiLU(), spectral_norm(nn.Linear(16, 16)), nn.SiLU(),
    nn.Linear(16, 1),
)
print(energy[0], hasattr(energy[0], "weight_orig"), sorted(n for n, _ in energy[0].named_buffers()))
print(type(energy[0]._forward_pre_hooks[0]).__name__ if 0 in energy[0]._forward_pre_hooks else
      [type(h).__name__ for h in energy[0]._forward_pre_hooks.values()])
opt = torch.optim.Adam(energy.parameters(), lr=1e-2, betas=(0.0, 0.999))
data = torch.randn(8, 2) * 0.3 + torch.tensor([1.0, -1.0])
buffer = torch.rand(8, 2) * 4 - 2


def langevin(x, steps=3, step_size=0.1, noise=0.01):
    x = x.clone().detach()
    for k in range(steps):
        x.requires_grad_()
        e = energy(x).sum()
        (g,) = torch.autograd.grad(e, x)
        if k == 0:
            print("  grad", g.shape, g.requires_grad, x.is_leaf, e.grad_fn.name())
        x = x - step_size * g + noise * torch.randn_like(x)
        x = x.detach()
    return x


for it in range(3):
    idx = torch.randint(0, buffer.size(0), (4,))
    fresh = torch.rand(4, 2) * 4 - 2
    init = torch.where(torch.rand(4, 1) < 0.25, fresh, buffer[idx])
    samples = langevin(init)
    buffer = torch.cat([samples, buffer])[:16]
    pos, neg = energy(data), energy(samples)
    loss = pos.mean() - neg.mean() + 0.1 * (pos.pow(2).mean() + neg.pow(2).mean())
    opt.zero_grad()
    loss.backward()
    opt.step()
    sigma = torch.linalg.matrix_norm(energy[0].weight.detach(), ord=2)
    print(it, idx, f"{loss.item():.5f}", buffer.shape, f"{sigma.item():.4f}", samples.requires_grad)

print(energy[0].weight_orig.grad.shape, energy[0].weight.grad_fn is None, energy[0].weight_u.shape)
energy.eval()
with torch.no_grad():
    w_eval = energy[2].weight.clone()
    e_data = energy(data).mean()
print(torch.allclose(w_eval, energy[2].weight), f"{e_data.item():.4f}", energy.training)
sd = energy.state_dict()
print(sorted(sd)[:5], sd["0.weight_v"].shape)
x = torch.zeros(3, 2, requires_grad=True)
e = energy(x).sum()
(g,) = torch.autograd.grad(e, x, create_graph=True)
print(g.shape, g.grad_fn is not None, torch.autograd.grad(g.pow(2).sum(), x)[0].shape)
try:
    torch.autograd.grad(energy(data).sum(), data)
except RuntimeError as err:
    print("RuntimeError:", err)
