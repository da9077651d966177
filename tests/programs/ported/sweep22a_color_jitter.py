"""Tensor-only image transforms as written without torchvision: RandomResizedCrop with the
scale/log-ratio rejection loop on a seeded torch.Generator, horizontal flip, color jitter
(brightness, contrast, saturation and an RGB<->HSV hue shift), grayscale, Gaussian blur with a
depthwise conv, normalize, then a Dataset/DataLoader applying them and mixup with a Beta draw."""
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def crop_params(h, w, g, scale=(0.3, 1.0), ratio=(3 / 4, 4 / 3)):
    area = h * w
    log_r = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target = area * torch.empty(1).uniform_(scale[0], scale[1], generator=g).item()
        ar = math.exp(torch.empty(1).uniform_(log_r[0].item(), log_r[1].item(), generator=g).item())
        cw = int(round(math.sqrt(target * ar)))
        ch = int(round(math.sqrt(target / ar)))
        if 0 < cw <= w and 0 < ch <= h:
            i = torch.randint(0, h - ch + 1, size=(1,), generator=g).item()
            j = torch.randint(0, w - cw + 1, size=(1,), generator=g).item()
            return i, j, ch, cw
    return 0, 0, h, w


def gray(img):
    r, g, b = img.unbind(dim=-3)
    return (0.299 * r + 0.587 * g + 0.114 * b).unsqueeze(-3)


def blend(a, b, ratio):
    return (ratio * a + (1.0 - ratio) * b).clamp(0, 1)


def rgb_to_hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = torch.max(img, dim=-3).values
    minc = torch.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    cr_div = torch.where(eqc, ones, cr)
    rc = (maxc - r) / cr_div
    gc = (maxc - g) / cr_div
    bc = (maxc - b) / cr_div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def hsv_to_rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(dtype=torch.int32)
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == torch.arange(6).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3)
    a2 = torch.stack((t, v, v, q, p, p), dim=-3)
    a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    a4 = torch.stack((a1, a2, a3), dim=-4)
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def adjust_hue(img, factor):
    hsv = rgb_to_hsv(img)
    h, s, v = hsv.unbind(dim=-3)
    h = (h + factor) % 1.0
    return hsv_to_rgb(torch.stack((h, s, v), dim=-3))


def gaussian_blur(img, k=3, sigma=0.8):
    x = torch.arange(k, dtype=torch.float32) - (k - 1) / 2
    w1 = torch.exp(-0.5 * (x / sigma) ** 2)
    w1 = w1 / w1.sum()
    w2 = torch.outer(w1, w1).expand(img.shape[-3], 1, k, k)
    out = F.pad(img.unsqueeze(0), [k // 2] * 4, mode="reflect")
    return F.conv2d(out, w2, groups=img.shape[-3]).squeeze(0)


class Augment:
    def __init__(self, size, g):
        self.size, self.g = size, g

    def __call__(self, img):
        g = self.g
        i, j, h, w = crop_params(img.shape[-2], img.shape[-1], g)
        img = img[..., i:i + h, j:j + w]
        img = F.interpolate(img.unsqueeze(0), size=self.size, mode="bilinear",
                            align_corners=False, antialias=True).squeeze(0).clamp_(0, 1)
        if torch.rand(1, generator=g).item() < 0.5:
            img = img.flip(-1)
        order = torch.randperm(4, generator=g).tolist()
        f = torch.empty(4).uniform_(0.6, 1.4, generator=g)
        hue = torch.empty(1).uniform_(-0.1, 0.1, generator=g).item()
        for op in order:
            if op == 0:
                img = blend(img, torch.zeros_like(img), f[0])
            elif op == 1:
                m = gray(img).mean(dim=(-3, -2, -1), keepdim=True)
                img = blend(img, m, f[1])
            elif op == 2:
                img = blend(img, gray(img), f[2])
            else:
                img = adjust_hue(img, hue)
        if torch.rand(1, generator=g).item() < 0.2:
            img = gray(img).expand(3, -1, -1)
        img = gaussian_blur(img)
        return (img - MEAN) / STD, (i, j, h, w, order)


g = torch.Generator().manual_seed(123)
img = torch.rand(3, 20, 24)
print("crop params", [crop_params(20, 24, g) for _ in range(3)])
hsv = rgb_to_hsv(img)
back = hsv_to_rgb(hsv)
print("hsv range", hsv.amin(dim=(1, 2)), hsv.amax(dim=(1, 2)))
print("hsv roundtrip max err", f"{(back - img).abs().max().item():.2e}")
print("hue 0.25 px", adjust_hue(img, 0.25)[:, 0, :3])
print("gray", gray(img).shape, f"{gray(img).sum().item():.4f}")
print("blur sum", f"{gaussian_blur(img).sum().item():.4f}")

half = img.unsqueeze(0).half()
try:
    small = F.interpolate(half, size=(10, 12), mode="bilinear", antialias=True)
except NotImplementedError as e:
    print("NotImplementedError:", e)
    small = F.interpolate(half.float(), size=(10, 12), mode="bilinear", antialias=True).half()
print("half resize", small.dtype, f"{small.float().mean().item():.4f}")

aug = Augment((16, 16), g)
out, info = aug(img)
print("augmented", out.shape, out.dtype, info)
print("stats", out.mean(dim=(1, 2)), out.std(dim=(1, 2)))


class Shapes(Dataset):
    def __init__(self, n, transform):
        gen = torch.Generator().manual_seed(7)
        self.images = torch.rand(n, 3, 20, 24, generator=gen)
        self.labels = torch.randint(0, 4, (n,), generator=gen)
        self.transform = transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        x, _ = self.transform(self.images[idx])
        return x, self.labels[idx]


ds = Shapes(6, Augment((16, 16), torch.Generator().manual_seed(5)))
loader = DataLoader(ds, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(1))
beta = torch.distributions.Beta(torch.tensor([0.4]), torch.tensor([0.4]))
for step, (x, y) in enumerate(loader):
    lam = beta.sample().item()
    perm = torch.randperm(x.size(0))
    mixed = lam * x + (1 - lam) * x[perm]
    y1 = F.one_hot(y, 4).float()
    ysoft = lam * y1 + (1 - lam) * y1[perm]
    print(f"batch {step}: x {tuple(mixed.shape)} lam {lam:.4f} y {y.tolist()} perm {perm.tolist()}")
    print("  soft targets", ysoft)
    print(f"  pixel mean {mixed.mean().item():.4f} std {mixed.std().item():.4f}")
