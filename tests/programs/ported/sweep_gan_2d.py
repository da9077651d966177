"""A GAN on toy 2-D data (a ring of Gaussians): generator/discriminator MLPs, BCEWithLogits,
Adam with betas, detach, requires_grad toggling, LeakyReLU, spectral-free simple training."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def real_batch(n):
    k = torch.randint(0, 8, (n,))
    ang = k.float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(ang), torch.sin(ang)], dim=1) * 2.0
    return centers + 0.05 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                  nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                  nn.Linear(32, 1))
print(G, D, sep="\n")
optG = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
optD = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
crit = nn.BCEWithLogitsLoss()


def set_requires_grad(net, flag):
    for p in net.parameters():
        p.requires_grad_(flag)


fixed_z = torch.randn(6, 4)
for step in range(30):
    real = real_batch(32)
    z = torch.randn(32, 4)
    fake = G(z)
    set_requires_grad(D, True)
    optD.zero_grad()
    d_real = D(real)
    d_fake = D(fake.detach())
    lossD = crit(d_real, torch.ones_like(d_real)) + crit(d_fake, torch.zeros_like(d_fake))
    lossD.backward()
    optD.step()
    set_requires_grad(D, False)
    optG.zero_grad()
    lossG = crit(D(fake), torch.ones_like(d_fake))
    lossG.backward()
    optG.step()
    if step % 5 == 0:
        print(f"step {step:2d} D {lossD.item():.4f} G {lossG.item():.4f} "
              f"D(x) {torch.sigmoid(d_real).mean().item():.4f} D(G(z)) {torch.sigmoid(d_fake).mean().item():.4f}")
print(all(p.grad is None or p.grad.abs().sum() > 0 for p in G.parameters()))
print([p.requires_grad for p in D.parameters()][:2])
with torch.no_grad():
    samples = G(fixed_z)
print(samples)
r = samples.norm(dim=1)
print(f"radius mean {r.mean().item():.4f} std {r.std().item():.4f}")
angles = torch.atan2(samples[:, 1], samples[:, 0])
print(torch.round(angles / (2 * math.pi / 8)).long() % 8)
print(torch.histc(r, bins=4, min=0, max=4))
