"""An image-classification pipeline without torchvision: tensor transforms (resize with
F.interpolate, random affine through F.affine_grid + F.grid_sample, per-channel normalization),
mixup and cutmix with lambdas drawn from torch.distributions.Beta, soft-target cross entropy,
a small CNN trained with SGD + CosineAnnealingWarmRestarts stepped per batch, and a
test-time-augmentation evaluation (shifted copies)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta

torch.manual_seed(3)
NUM_CLASSES = 4
MEAN = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)
STD = torch.tensor([0.25, 0.2, 0.2]).view(1, 3, 1, 1)


def synthetic_images(n):
    """Class k is a bright blob in quadrant k on a noisy background, at 20x20."""
    labels = torch.arange(n) % NUM_CLASSES
    imgs = 0.3 * torch.rand(n, 3, 20, 20)
    rows = torch.arange(20).view(1, 20, 1)
    cols = torch.arange(20).view(1, 1, 20)
    r0 = (labels // 2).view(-1, 1, 1) * 10 + 2
    c0 = (labels % 2).view(-1, 1, 1) * 10 + 2
    blob = (rows >= r0) & (rows < r0 + 6) & (cols >= c0) & (cols < c0 + 6)
    imgs += blob.unsqueeze(1) * torch.tensor([0.7, 0.5, 0.2]).view(1, 3, 1, 1)
    return imgs.clamp(0, 1), labels


class RandomAffine:
    def __init__(self, degrees, translate, scale):
        self.degrees, self.translate, self.scale = degrees, translate, scale

    def __call__(self, x):
        torch._assert(x.dim() == 4, f"RandomAffine expects a (N, C, H, W) batch, got {x.dim()}-D")
        n = x.size(0)
        angle = (torch.rand(n) * 2 - 1) * math.radians(self.degrees)
        s = torch.empty(n).uniform_(*self.scale)
        shift = (torch.rand(n, 2) * 2 - 1) * self.translate
        cos, sin = torch.cos(angle) / s, torch.sin(angle) / s
        theta = torch.stack([torch.stack([cos, -sin, shift[:, 0]], 1),
                             torch.stack([sin, cos, shift[:, 1]], 1)], 1)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


class Compose:
    def __init__(self, *fns):
        self.fns = fns

    def __call__(self, x):
        for fn in self.fns:
            x = fn(x)
        return x


def resize(x):
    return F.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False, antialias=True)


def normalize(x):
    return (x - MEAN) / STD


def shift(x):
    # flips would swap this data's classes (they are positions): TTA by a one-pixel shift
    return torch.roll(x, shifts=(1, 1), dims=(-2, -1))


train_tf = Compose(resize, RandomAffine(10, 0.1, (0.9, 1.1)), normalize)
eval_tf = Compose(resize, normalize)

imgs, labels = synthetic_images(64)
val_imgs, val_labels = synthetic_images(16)
print("raw", imgs.shape, imgs.dtype, round(imgs.mean().item(), 4))
sample = train_tf(imgs[:4])
print("augmented", sample.shape, round(sample.mean().item(), 4), round(sample.std().item(), 4))
theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
ident = F.grid_sample(imgs[:1], F.affine_grid(theta, [1, 3, 20, 20], align_corners=False),
                      align_corners=False)
print("identity affine max err", (ident - imgs[:1]).abs().max().item() < 1e-5)
print("nearest resize", F.interpolate(imgs[:1], scale_factor=0.5, mode="nearest").shape)

beta = Beta(torch.tensor(0.4), torch.tensor(0.4))
print("beta", beta, beta.mean.item(), round(beta.variance.item(), 5))
print("beta log_prob", beta.log_prob(torch.tensor([0.1, 0.5, 0.9])).tolist())


def mixup(x, y_soft):
    lam = beta.sample()
    perm = torch.randperm(x.size(0))
    return lam * x + (1 - lam) * x[perm], lam * y_soft + (1 - lam) * y_soft[perm], lam


def cutmix(x, y_soft):
    lam = beta.sample().item()
    perm = torch.randperm(x.size(0))
    h, w = x.shape[-2:]
    cut = math.sqrt(1 - lam)
    ch, cw = int(h * cut), int(w * cut)
    cy, cx = torch.randint(h, (1,)).item(), torch.randint(w, (1,)).item()
    y0, y1 = max(cy - ch // 2, 0), min(cy + ch // 2, h)
    x0, x1 = max(cx - cw // 2, 0), min(cx + cw // 2, w)
    x = x.clone()
    x[:, :, y0:y1, x0:x1] = x[perm][:, :, y0:y1, x0:x1]
    lam = 1 - (y1 - y0) * (x1 - x0) / (h * w)
    return x, lam * y_soft + (1 - lam) * y_soft[perm], lam


def soft_cross_entropy(logits, target):
    return torch.sum(-target * F.log_softmax(logits, dim=-1), dim=-1).mean()


model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
    nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(64, NUM_CLASSES))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=1, T_mult=2, eta_min=1e-3)
steps_per_epoch = 4
lrs = []
for epoch in range(2):
    model.train()
    perm = torch.randperm(64)
    for i in range(steps_per_epoch):
        idx = perm[i * 16:(i + 1) * 16]
        x = train_tf(imgs[idx])
        y = F.one_hot(labels[idx], NUM_CLASSES).float()
        x, y, lam = (mixup if i % 2 == 0 else cutmix)(x, y)
        loss = soft_cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step(epoch + i / steps_per_epoch)
        lrs.append(opt.param_groups[0]["lr"])
        print(f"epoch {epoch} step {i} lam {float(lam):.4f} loss {loss.item():.4f}")
print("lrs", [round(v, 5) for v in lrs])
print("scheduler T_i", sched.T_i, "T_cur", round(sched.T_cur, 4), "last_epoch", sched.last_epoch)

model.eval()
with torch.no_grad():
    x = eval_tf(val_imgs)
    probs = (F.softmax(model(x), -1) + F.softmax(model(shift(x)), -1)) / 2
    print("tta probs", probs.shape, probs.sum(-1)[:4].tolist())
    print("val acc", (probs.argmax(-1) == val_labels).float().mean().item())
    print("confusion", torch.bincount(val_labels * NUM_CLASSES + probs.argmax(-1),
                                      minlength=NUM_CLASSES ** 2).view(NUM_CLASSES, NUM_CLASSES).tolist())
try:
    train_tf.fns[1](imgs[0])
except AssertionError as e:
    print("AssertionError", e)
try:
    F.affine_grid(theta, [1, 3, 20], align_corners=False)
except (ValueError, RuntimeError) as e:
    print(type(e).__name__, e)
try:
    Beta(torch.tensor(-1.0), torch.tensor(1.0), validate_args=True)
except ValueError as e:
    print("ValueError", e)
