"""Image-geometry toolkit of an augmentation / registration script: affine_grid + grid_sample in
every mode (bilinear, nearest, bicubic), padding mode (zeros, border, reflection) and
align_corners setting, with gradients to both the image and the grid; a 3-D (volumetric) warp;
unfold / fold patch processing (overlap-add with a normalising count map, stride, padding,
dilation); interpolate (bilinear, bicubic with and without antialias, area, nearest-exact,
scale factors) and pixel_shuffle / pixel_unshuffle; and a tiny spatial-transformer regression
that learns the affine parameters warping a template onto a target, trained a few steps."""
# tolerance: 1e-4
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
img = torch.rand(2, 3, 7, 9)
print("image", img.shape, f"sum {img.sum().item():.5f}")


def stats(name, t):
    print(f"{name} shape {tuple(t.shape)} sum {t.sum().item():.5f} "
          f"absmax {t.abs().max().item():.5f} mean {t.mean().item():.6f}")


# a rotation + scale + shift for each image in the batch
angle = torch.tensor([0.3, -0.5])
theta = torch.stack([
    torch.stack([torch.cos(angle) * 1.1, -torch.sin(angle), torch.tensor([0.1, -0.2])], 1),
    torch.stack([torch.sin(angle), torch.cos(angle) * 0.9, torch.tensor([0.05, 0.3])], 1),
], 1)
print("theta", theta.shape, theta[0])
for ac in (False, True):
    grid = F.affine_grid(theta, [2, 3, 5, 6], align_corners=ac)
    stats(f"grid ac={ac}", grid)
    print("  corner", grid[0, 0, 0].tolist(), grid[1, -1, -1].tolist())
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=ac)
            print(f"  {mode:8s} {pad:10s} sum {out.sum().item():.5f} "
                  f"px {out[1, 2, 4, 5].item():.5f}")

# gradients to the image and to the grid (the grid gradient is what an STN learns from)
img_g = img.clone().requires_grad_(True)
grid = F.affine_grid(theta, [2, 3, 5, 6], align_corners=False).detach().requires_grad_(True)
weights = torch.linspace(-1, 1, 2 * 3 * 5 * 6).reshape(2, 3, 5, 6)
for mode, pad in (("bilinear", "zeros"), ("bilinear", "reflection"), ("bicubic", "border"),
                  ("nearest", "zeros")):
    img_g.grad = None
    grid.grad = None
    out = F.grid_sample(img_g, grid, mode=mode, padding_mode=pad, align_corners=False)
    (out * weights).sum().backward()
    print(f"grad {mode} {pad}: grad_fn {out.grad_fn.name()} "
          f"img {img_g.grad.sum().item():.5f} {img_g.grad.abs().sum().item():.5f} "
          f"grid {grid.grad.sum().item():.5f} {grid.grad.abs().sum().item():.5f}")

# theta gets its gradient through affine_grid
theta_p = theta.clone().requires_grad_(True)
g = F.affine_grid(theta_p, [2, 3, 4, 4], align_corners=True)
F.grid_sample(img, g, align_corners=True).square().mean().backward()
print("theta grad", g.grad_fn.name(), theta_p.grad)

# a volumetric warp: 5-D input and a 3x4 theta
vol = torch.rand(1, 2, 4, 5, 6)
theta3 = torch.tensor([[[0.9, 0.1, 0.0, 0.1], [0.0, 1.0, 0.2, 0.0], [0.1, 0.0, 1.1, -0.1]]])
grid3 = F.affine_grid(theta3, [1, 2, 3, 4, 5], align_corners=False)
stats("grid3", grid3)
for mode in ("bilinear", "nearest"):
    stats(f"vol {mode}", F.grid_sample(vol, grid3, mode=mode, padding_mode="border",
                                       align_corners=False))

for bad in [lambda: F.grid_sample(img, grid[..., :1]),
            lambda: F.grid_sample(img, grid, mode="cubic"),
            lambda: F.grid_sample(img, grid, padding_mode="wrap"),
            lambda: F.grid_sample(vol, grid3, mode="bicubic"),
            lambda: F.grid_sample(img[0], grid[0], align_corners=False),
            lambda: F.grid_sample(vol, grid, align_corners=False),
            lambda: F.affine_grid(theta, [2, 3, 5]),
            lambda: F.affine_grid(theta[:, :1], [2, 3, 5, 6])]:
    try:
        bad()
    except (ValueError, RuntimeError, NotImplementedError) as e:
        print(type(e).__name__ + ":", e)

# a diverged transform: NaN / infinite grid points
bad_grid = grid.detach().clone()
bad_grid[0, 0, 0, 0] = float("nan")
bad_grid[1, 2, 3, 1] = float("inf")
bad_grid3 = grid3.clone()
bad_grid3[0, 1, 1, 1] = float("nan")
for mode, pad in (("bilinear", "border"), ("bilinear", "reflection"), ("nearest", "zeros"),
                  ("nearest", "border")):
    out = F.grid_sample(img, bad_grid, mode=mode, padding_mode=pad, align_corners=False)
    out3 = F.grid_sample(vol, bad_grid3, mode=mode, padding_mode=pad, align_corners=False)
    print(f"nonfinite {mode} {pad}: {out[0, :, 0, 0].tolist()} {out[1, :, 2, 3].tolist()} "
          f"3d {out3[0, :, 1, 1, 1].tolist()} nan count {int(out.isnan().sum())}")

# patches: unfold, per-patch processing, overlap-add back with fold and a count map
x = torch.arange(2 * 2 * 6 * 6, dtype=torch.float32).reshape(2, 2, 6, 6) / 10
for k, s, p, d in ((3, 1, 1, 1), (2, 2, 0, 1), (3, 2, 1, 1), (2, 1, 0, 2)):
    cols = F.unfold(x, kernel_size=k, stride=s, padding=p, dilation=d)
    ones = torch.ones_like(x)
    count = F.fold(F.unfold(ones, k, dilation=d, padding=p, stride=s), (6, 6), k,
                   dilation=d, padding=p, stride=s)
    back = F.fold(cols, (6, 6), k, dilation=d, padding=p, stride=s) / count.clamp(min=1)
    print(f"unfold k={k} s={s} p={p} d={d}: cols {tuple(cols.shape)} sum {cols.sum().item():.4f}"
          f" count {count[0, 0].flatten().tolist()[:8]}"
          f" recon err {(back - x).abs().max().item():.5f}")
unfolder = nn.Unfold(kernel_size=(2, 3), stride=(2, 1))
folder = nn.Fold(output_size=(6, 6), kernel_size=(2, 3), stride=(2, 1))
print(unfolder, folder)
cols = unfolder(x)
patch_mean = cols.view(2, 2, 6, -1).mean(2, keepdim=True)
centered = (cols.view(2, 2, 6, -1) - patch_mean).view_as(cols)
print("centered fold", f"{folder(centered).abs().sum().item():.5f}")
try:
    F.fold(cols[:, :5], (6, 6), (2, 3), stride=(2, 1))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    F.unfold(x[0, 0], 2)
except (RuntimeError, IndexError) as e:
    print(type(e).__name__ + ":", e)

# resizing
small = torch.rand(1, 2, 5, 6)
for kw in [dict(size=(9, 11), mode="bilinear", align_corners=False),
           dict(size=(9, 11), mode="bilinear", align_corners=True),
           dict(scale_factor=1.5, mode="bicubic", align_corners=False),
           dict(size=(3, 4), mode="bicubic", antialias=False),
           dict(size=(3, 4), mode="bicubic", antialias=True),
           dict(size=(2, 3), mode="bilinear", antialias=True),
           dict(size=(2, 3), mode="area"),
           dict(scale_factor=(0.7, 1.3), mode="nearest-exact"),
           dict(scale_factor=(0.7, 1.3), mode="nearest"),
           dict(scale_factor=0.6, mode="bilinear", recompute_scale_factor=True)]:
    out = F.interpolate(small, **kw)
    print("interp", kw, tuple(out.shape),
          f"sum {out.sum().item():.5f} px {out[0, 1, 1, 1].item():.5f}")
small_g = small.clone().requires_grad_(True)
out = F.interpolate(small_g, size=(3, 4), mode="bicubic", antialias=True)
out.pow(2).sum().backward()
print("antialias grad", out.grad_fn.name(), f"{small_g.grad.sum().item():.5f}")
small_g.grad = None
out = F.interpolate(small_g, scale_factor=2, mode="bicubic", align_corners=True)
(out * torch.linspace(0, 1, out.numel()).view_as(out)).sum().backward()
print("bicubic grad", out.grad_fn.name(), f"{small_g.grad.sum().item():.5f}",
      f"{small_g.grad[0, 0, 2, 3].item():.5f}")
for bad in [lambda: F.interpolate(small, size=(3, 4), mode="nearest", antialias=True),
            lambda: F.interpolate(small, size=(3, 4), scale_factor=2.0),
            lambda: F.interpolate(small, mode="bilinear"),
            lambda: F.interpolate(small, size=(3, 4), mode="nearest", align_corners=True)]:
    try:
        bad()
    except (ValueError, RuntimeError, NotImplementedError) as e:
        print(type(e).__name__ + ":", e)

ps = nn.PixelShuffle(2)
feat = torch.arange(1 * 8 * 2 * 3, dtype=torch.float32).reshape(1, 8, 2, 3)
up = ps(feat)
print(ps, up.shape, up[0, 0].tolist())
down = F.pixel_unshuffle(up, 2)
print("unshuffle round trip", torch.equal(down, feat), down.shape)
try:
    F.pixel_shuffle(torch.rand(1, 6, 2, 2), 2)
except RuntimeError as e:
    print("RuntimeError:", e)


# a tiny spatial transformer regression: learn theta mapping a template onto a target
class AffineRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.fc = nn.Linear(4, 6)
        nn.init.zeros_(self.fc.weight)
        with torch.no_grad():
            self.fc.bias.copy_(torch.tensor([1.0, 0, 0, 0, 1.0, 0]))

    def forward(self, src, dst):
        h = F.relu(self.conv(torch.cat([src, dst], 1)))
        theta = self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, src.shape, align_corners=False)
        return F.grid_sample(src, grid, mode="bilinear", padding_mode="border",
                             align_corners=False), theta


yy, xx = torch.meshgrid(torch.linspace(-1, 1, 12), torch.linspace(-1, 1, 12), indexing="ij")
template = torch.exp(-((xx + 0.2) ** 2 + (yy - 0.1) ** 2) / 0.1).expand(3, 1, 12, 12)
true_theta = torch.tensor([[[1.0, 0.0, 0.25], [0.0, 1.0, -0.15]]]).expand(3, 2, 3)
target = F.grid_sample(template, F.affine_grid(true_theta, template.shape, align_corners=False),
                       padding_mode="border", align_corners=False)
net = AffineRegressor()
opt = torch.optim.Adam(net.parameters(), lr=0.02)
for step in range(8):
    opt.zero_grad()
    warped, th = net(template, target)
    loss = F.mse_loss(warped, target)
    loss.backward()
    opt.step()
    print(f"stn step {step} loss {loss.item():.6f} shift {th[0, 0, 2].item():.5f} "
          f"{th[0, 1, 2].item():.5f} fc.bias.grad {net.fc.bias.grad.abs().sum().item():.6f}")
print("math check", round(math.cos(0.3) * 1.1, 5), round(theta[0, 0, 0].item(), 5))
