"""Single-image super-resolution: an ESPCN with F.pixel_shuffle (and pixel_unshuffle as its
inverse), low-resolution inputs made with antialiased bicubic F.interpolate, an SSIM built from a
depthwise gaussian conv2d (groups=C), PSNR, an L1 + (1 - SSIM) loss trained with Adam, and the
outputs clamped in place under no_grad for evaluation."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gaussian_window(size, sigma, channels):
    coords = torch.arange(size, dtype=torch.float32) - size // 2
    g = torch.exp(-(coords ** 2) / (2 * sigma ** 2))
    g = g / g.sum()
    w = g[:, None] @ g[None, :]
    return w.expand(channels, 1, size, size).contiguous()


def ssim(x, y, window, c1=0.01 ** 2, c2=0.03 ** 2):
    ch = x.shape[1]
    mu_x = F.conv2d(x, window, groups=ch)
    mu_y = F.conv2d(y, window, groups=ch)
    sxx = F.conv2d(x * x, window, groups=ch) - mu_x ** 2
    syy = F.conv2d(y * y, window, groups=ch) - mu_y ** 2
    sxy = F.conv2d(x * y, window, groups=ch) - mu_x * mu_y
    num = (2 * mu_x * mu_y + c1) * (2 * sxy + c2)
    den = (mu_x ** 2 + mu_y ** 2 + c1) * (sxx + syy + c2)
    return (num / den).mean()


def psnr(x, y):
    return 10 * torch.log10(1.0 / F.mse_loss(x, y))


class ESPCN(nn.Module):
    def __init__(self, scale=2, channels=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, 16, 5, padding=2), nn.Tanh(),
                                  nn.Conv2d(16, 8, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(8, channels * scale ** 2, 3, padding=1))
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        base = F.interpolate(x, scale_factor=2, mode="bicubic", align_corners=False)
        return base + self.shuffle(self.body(x))


hr = torch.rand(2, 3, 12, 12)
hr = F.avg_pool2d(F.pad(hr, (1, 1, 1, 1), mode="reflect"), 3, stride=1)
lr = F.interpolate(hr, size=(6, 6), mode="bicubic", align_corners=False, antialias=True)
print("lr", lr.shape, f"{lr.mean().item():.5f}", f"{lr.min().item():.5f}")
plain = F.interpolate(hr, scale_factor=0.5, mode="bilinear", align_corners=False)
print("antialias vs plain", f"{(lr - plain).abs().max().item():.5f}")
up = F.interpolate(lr, scale_factor=2, mode="bicubic", align_corners=True)
print("bicubic psnr", f"{psnr(up.clamp(0, 1), hr).item():.4f}")

packed = F.pixel_unshuffle(hr, 2)
print("unshuffle", packed.shape, torch.equal(F.pixel_shuffle(packed, 2), hr))
print(nn.PixelUnshuffle(3)(torch.arange(18.0).view(1, 2, 3, 3)).view(-1).tolist())

window = gaussian_window(5, 1.5, 3)
print("window", window.shape, f"{window[0, 0, 2, 2].item():.6f}", f"{window.sum().item():.4f}")
print("ssim self", f"{ssim(hr, hr, window).item():.5f}")

model = ESPCN()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(4):
    sr = model(lr)
    l1 = F.l1_loss(sr, hr)
    s = ssim(sr, hr, window)
    loss = l1 + 0.5 * (1 - s)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{s.item():.5f}", sr.grad_fn.name())

model.eval()
with torch.no_grad():
    sr = model(lr)
    before = (sr < 0).sum().item() + (sr > 1).sum().item()
    sr.clamp_(0.0, 1.0)
    print("clamped", before, sr.min().item() >= 0, sr.max().item() <= 1, sr.requires_grad)
    print("psnr", f"{psnr(sr, hr).item():.4f}", "ssim", f"{ssim(sr, hr, window).item():.5f}")
x = torch.rand(1, 1, 4, 4, requires_grad=True)
y = F.interpolate(x, size=(2, 3), mode="bicubic", antialias=True)
y.sum().backward()
print("aa grad", y.grad_fn.name(), x.grad)
try:
    F.pixel_shuffle(torch.randn(1, 3, 2, 2), 2)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    F.interpolate(torch.randn(1, 2, 4), scale_factor=2, mode="bicubic")
except NotImplementedError as e:
    print("NotImplementedError", str(e)[:60])
print(math.isclose(psnr(hr, hr * 0.5 + 0.25).item(), -10 * math.log10(F.mse_loss(hr, hr * 0.5 + 0.25).item()), rel_tol=1e-5))
