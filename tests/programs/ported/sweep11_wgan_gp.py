"""WGAN-GP on a 2-D ring of Gaussians: generator/critic MLPs, the gradient penalty through
autograd.grad(create_graph=True) on interpolates, n_critic critic steps per generator step with
requires_grad_ toggling, no_grad sampling; then the original WGAN with RMSprop and weight
clipping through p.data.clamp_."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def real_batch(n):
    k = torch.randint(0, 8, (n,))
    angle = k.float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1) * 2.0
    return centers + 0.05 * torch.randn(n, 2)


def make_nets():
    G = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
    D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                      nn.Linear(32, 1))
    return G, D


def gradient_penalty(D, real, fake):
    eps = torch.rand(real.size(0), 1).expand_as(real)
    inter = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = D(inter)
    grads, = torch.autograd.grad(out, inter, grad_outputs=torch.ones_like(out), create_graph=True,
                                 retain_graph=True)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean(), grads


G, D = make_nets()
print(G)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.9))
n_critic, lam, bs = 3, 10.0, 64
for it in range(4):
    for p in D.parameters():
        p.requires_grad_(True)
    for _ in range(n_critic):
        real = real_batch(bs)
        with torch.no_grad():
            fake = G(torch.randn(bs, 4))
        print_fake = fake.requires_grad
        d_real, d_fake = D(real).mean(), D(fake).mean()
        gp, grads = gradient_penalty(D, real, fake)
        loss_d = d_fake - d_real + lam * gp
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
    for p in D.parameters():
        p.requires_grad_(False)
    z = torch.randn(bs, 4)
    loss_g = -D(G(z)).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"it {it} loss_d {loss_d.item():.5f} gp {gp.item():.5f} "
          f"w-dist {(d_real - d_fake).item():.5f} loss_g {loss_g.item():.5f}")
print("fake under no_grad requires grad:", print_fake)
print("gp grad_fn", gp.grad_fn.name(), "grads grad_fn", grads.grad_fn.name())
print("critic grads after freeze:", [p.grad is None for p in D.parameters()][:2],
      D[0].weight.requires_grad)
print("G grad norm", round(sum(p.grad.norm().item() ** 2 for p in G.parameters()) ** 0.5, 4))
print("adam state keys", sorted(opt_d.state[D[0].weight].keys()),
      opt_d.state[D[0].weight]["step"])

with torch.no_grad():
    samples = G(torch.randn(256, 4))
    radius = samples.norm(dim=1)
print("samples", samples.shape, samples.requires_grad, f"mean radius {radius.mean().item():.4f}")

# second-order check: the penalty's gradient reaches the critic weights
D.requires_grad_(True)
gp, _ = gradient_penalty(D, real_batch(8), real_batch(8))
g_w, = torch.autograd.grad(gp, D[2].weight)
print("d gp / d W", g_w.shape, f"{g_w.abs().sum().item():.5f}")

# original WGAN: RMSprop and weight clipping
torch.manual_seed(1)
G, D = make_nets()
opt_g = torch.optim.RMSprop(G.parameters(), lr=5e-4)
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-4)
clip = 0.05
for it in range(4):
    for _ in range(n_critic):
        real = real_batch(bs)
        fake = G(torch.randn(bs, 4)).detach()
        loss_d = D(fake).mean() - D(real).mean()
        opt_d.zero_grad()
        loss_d.backward()
        opt_d.step()
        for p in D.parameters():
            p.data.clamp_(-clip, clip)
    loss_g = -D(G(torch.randn(bs, 4))).mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"clip it {it} loss_d {loss_d.item():.6f} loss_g {loss_g.item():.6f}")
w = D[0].weight
print("clipped range", (w.min() >= -clip).item(), bool(w.max() <= clip),
      f"{w.abs().max().item():.4f}", w.is_leaf, w.grad_fn)
print("rmsprop state", sorted(opt_d.state[w].keys()), opt_d.state[w]["step"])
print("square_avg", f"{opt_d.state[w]['square_avg'].sum().item():.6e}")
try:
    D[0].weight.clamp_(-clip, clip)
except RuntimeError as e:
    print("RuntimeError:", e)
