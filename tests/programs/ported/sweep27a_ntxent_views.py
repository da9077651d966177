"""Contrastive pretraining in the SimCLR style on tiny synthetic glyph images: two views per image
from a seeded torch.Generator (reflect-padded random crops, per-sample torch.roll shifts, flips,
random erasing, noise), a generator state saved and restored to replay the same views, the
NT-Xent loss written twice (cross_entropy over masked similarities and an explicit logsumexp),
SGD with nesterov under a SequentialLR warmup + cosine schedule, alignment / uniformity metrics
with torch.pdist, and a weighted k-NN evaluation of the frozen encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
S, PAD, B = 10, 2, 16


def glyphs(n, gen):
    """Class 0: a horizontal bar, 1: a vertical bar, 2: a diagonal, 3: a box; random positions."""
    labels = torch.arange(n) % 4
    p = torch.randint(2, S - 2, (n, 1, 1), generator=gen)
    r = torch.arange(S).view(1, S, 1)
    c = torch.arange(S).view(1, 1, S)
    inner = lambda lo: (r >= lo) & (r < S - lo) & (c >= lo) & (c < S - lo)  # noqa: E731
    shapes = torch.stack([
        (r == p) & (c >= 1) & (c < S - 1),
        (c == p) & (r >= 1) & (r < S - 1),
        torch.where(p % 2 == 1, r == c, r + c == S - 1),
        (inner(2) & ~inner(3)).expand(n, S, S),
    ], dim=1)
    img = shapes[torch.arange(n), labels].unsqueeze(1).float()
    return img, labels


def augment(x, gen):
    n = x.size(0)
    padded = F.pad(x, (PAD, PAD, PAD, PAD), mode="reflect")
    top, left = torch.randint(0, 2 * PAD + 1, (2, n, 1, 1), generator=gen)
    # one gather for all crops: per-sample row and column windows
    rows = top + torch.arange(S).view(1, S, 1)
    cols = left + torch.arange(S).view(1, 1, S)
    views = padded[torch.arange(n).view(n, 1, 1), 0, rows, cols].unsqueeze(1)
    shifts = torch.randint(-1, 2, (n,), generator=gen)
    views = torch.stack([torch.roll(v, shifts=(int(s), -int(s)), dims=(1, 2))
                         for v, s in zip(views, shifts)])
    flip = torch.rand(n, generator=gen) < 0.5
    views = torch.where(flip.view(n, 1, 1, 1), torch.flip(views, dims=(-1,)), views)
    # random erasing: blank a 3x3 patch in about half of the views
    r, c = torch.randint(0, S - 3, (2, n, 1, 1), generator=gen)
    rows = torch.arange(S).view(1, S, 1)
    cols = torch.arange(S).view(1, 1, S)
    patch = (rows >= r) & (rows < r + 3) & (cols >= c) & (cols < c + 3)
    erase = (torch.rand(n, 1, 1, generator=gen) < 0.5) & patch
    views = views.masked_fill(erase.unsqueeze(1), 0.0)
    return views + 0.05 * torch.randn(views.shape, generator=gen)


def nt_xent(z1, z2, tau):
    z = F.normalize(torch.cat([z1, z2]), dim=-1)
    n = z1.size(0)
    sim = z @ z.T / tau
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    target = (torch.arange(2 * n) + n) % (2 * n)
    return F.cross_entropy(sim, target), sim, target


def nt_xent_explicit(sim, target):
    pos = sim.gather(1, target[:, None]).squeeze(1)
    return (torch.logsumexp(sim, dim=1) - pos).mean()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.proj = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        h = self.body(x)
        return h, self.proj(h)


gen = torch.Generator().manual_seed(5)
images, labels = glyphs(B, gen)
print("images", images.shape, images.sum((1, 2, 3)).tolist()[:4], labels.tolist()[:8])
state = gen.get_state()
v1 = augment(images, gen)
gen.set_state(state)
v1_again = augment(images, gen)
print("replayed views equal", torch.equal(v1, v1_again), state.dtype, state.shape)
print("view stats", v1.shape, f"{v1.mean().item():.4f}", f"{v1.std().item():.4f}")

model = Encoder()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=1e-3)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[3])
tau = 0.5
for step in range(10):
    a, b = augment(images, gen), augment(images, gen)
    _, z1 = model(a)
    _, z2 = model(b)
    loss, sim, target = nt_xent(z1, z2, tau)
    explicit = nt_xent_explicit(sim, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 3 == 0 or step == 9:
        top1 = (sim.argmax(1) == target).float().mean()
        print(f"step {step} loss {loss.item():.4f} explicit {explicit.item():.4f} "
              f"top1 {top1.item():.3f} lr {sched.get_last_lr()[0]:.5f}")
print("sim", sim.shape, sim.grad_fn.name(), torch.isinf(sim).sum().item(), loss.grad_fn.name())
print("momentum keys", sorted(opt.state[model.proj[0].weight].keys()), opt.param_groups[0]["nesterov"])

model.eval()
with torch.no_grad():
    h, z1 = model(augment(images, gen))
    _, z2 = model(augment(images, gen))
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    align = (z1 - z2).norm(dim=1).pow(2).mean()
    uniform = torch.pdist(z1).pow(2).mul(-2).exp().mean().log()
print("alignment", f"{align.item():.4f}", "uniformity", f"{uniform.item():.4f}",
      torch.pdist(z1).shape)

# weighted k-NN: each view of a new batch votes with exp(sim / tau) of its k nearest bank items
with torch.no_grad():
    bank = F.normalize(model(images)[0], dim=1)
    test_images, test_labels = glyphs(B, gen)
    query = F.normalize(model(augment(test_images, gen))[0], dim=1)
sims = query @ bank.T
top_sim, top_idx = sims.topk(5, dim=1)
votes = torch.zeros(B, 4).scatter_add_(1, labels[top_idx], (top_sim / tau).exp())
pred = votes.argmax(1)
print("knn", top_idx.shape, top_idx.dtype, pred.tolist(), test_labels.tolist())
print("knn accuracy", (pred == test_labels).float().mean().item())
print("cosine check", torch.allclose(sims, F.cosine_similarity(query[:, None], bank[None], dim=-1),
                                     atol=1e-6))

try:
    F.pad(images[0, 0], (12, 12), mode="reflect")
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.roll(images, shifts=(1, 2), dims=(1,))
except RuntimeError as e:
    print("RuntimeError:", e)
