"""Image augmentation written with tensor ops: random affine warps through F.affine_grid and
F.grid_sample (every mode, padding mode and align_corners), F.pad modes, flips/rot90/roll,
an unfold/fold round trip, bicubic and bilinear resizing, a depthwise Gaussian blur, and the
gradient of grid_sample with respect to the sampling grid (a spatial-transformer update)."""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)

img = torch.rand(2, 3, 8, 8)
print("img", img.shape, f"mean {img.mean().item():.5f}")


def affine(angle, scale, tx, ty):
    c, s = math.cos(angle) * scale, math.sin(angle) * scale
    return torch.tensor([[c, -s, tx], [s, c, ty]])


theta = torch.stack([affine(0.3, 1.1, 0.1, -0.2), affine(-0.5, 0.9, 0.0, 0.15)])
for align in (False, True):
    grid = F.affine_grid(theta, img.shape, align_corners=align)
    print("grid", grid.shape, f"corner {grid[0, 0, 0].tolist()}" if align else "")
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=align)
            print(f"align={align} {mode:8s} {pad:10s} sum {out.sum().item():.4f} "
                  f"px {out[1, 2, 7, 0].item():.4f}")

identity = F.affine_grid(torch.eye(2, 3).unsqueeze(0), (1, 1, 5, 5), align_corners=True)
same = F.grid_sample(img[:1, :1, :5, :5], identity, align_corners=True)
print("identity warp exact", torch.allclose(same, img[:1, :1, :5, :5], atol=1e-6))

x = torch.arange(16.).reshape(1, 1, 4, 4)
for mode in ("reflect", "replicate", "circular"):
    p = F.pad(x, (2, 1, 1, 2), mode=mode)
    print(mode, p.shape, p[0, 0, 0].tolist(), p[0, 0, :, 0].tolist())
print("constant", F.pad(x, (1, 1), value=-1.0)[0, 0, 0].tolist())
print("pad 1d reflect", F.pad(torch.arange(5.).view(1, 1, 5), (3, 2), mode="reflect"))
try:
    F.pad(x, (4, 0, 0, 0), mode="reflect")
except RuntimeError as e:
    print("RuntimeError:", e)

print("flip", torch.flip(x, dims=(2, 3))[0, 0, 0].tolist(), x.flip(-1)[0, 0, 0].tolist())
print("rot90", torch.rot90(x, 1, (2, 3))[0, 0, 0].tolist(), torch.rot90(x, -1, (2, 3))[0, 0, 0].tolist(),
      torch.rot90(x, 2, (2, 3))[0, 0, 0].tolist())
print("roll", torch.roll(x, shifts=(1, -1), dims=(2, 3))[0, 0, 0].tolist(), torch.roll(x, 3).flatten()[:4].tolist())

cols = F.unfold(img, kernel_size=3, padding=1, stride=1)
print("unfold", cols.shape)
back = F.fold(cols, output_size=(8, 8), kernel_size=3, padding=1)
counts = F.fold(F.unfold(torch.ones(1, 1, 8, 8), 3, padding=1), (8, 8), 3, padding=1)
print("fold/unfold round trip", torch.allclose(back / counts, img, atol=1e-6), counts[0, 0, :2, :3])
patches = F.unfold(img, kernel_size=4, stride=4)
print("patches", patches.shape, patches.transpose(1, 2).reshape(2, 4, 3, 4, 4).shape)
dil = F.unfold(img, kernel_size=2, dilation=2, stride=3)
print("dilated unfold", dil.shape, f"{dil.sum().item():.4f}")

up = F.interpolate(img, scale_factor=1.5, mode="bicubic", align_corners=False, antialias=False)
print("bicubic up", up.shape, f"{up.sum().item():.4f} min {up.min().item():.4f}")
down = F.interpolate(img, size=(5, 3), mode="bilinear", align_corners=True)
print("bilinear down", down.shape, f"{down.sum().item():.4f}")
down_aa = F.interpolate(img, scale_factor=0.5, mode="bilinear", antialias=True)
print("antialias down", down_aa.shape, f"{down_aa.sum().item():.4f}")
near = F.interpolate(img, scale_factor=(2, 0.5), mode="nearest")
print("nearest", near.shape, f"{near.sum().item():.4f}", F.interpolate(img, size=6, mode="nearest-exact").shape)
bic_ac = F.interpolate(img, size=(11, 11), mode="bicubic", align_corners=True)
print("bicubic align", f"{bic_ac[0, 0, 0, :4].tolist()}")


def gaussian_kernel(size, sigma):
    ax = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-(ax ** 2) / (2 * sigma ** 2))
    g = g / g.sum()
    return (g[:, None] * g[None, :]).expand(3, 1, size, size)


k = gaussian_kernel(5, 1.2)
blurred = F.conv2d(F.pad(img, (2, 2, 2, 2), mode="reflect"), k, groups=3)
print("blur", blurred.shape, f"{blurred.sum().item():.4f}", k.shape, k.is_contiguous())
sep = torch.tensor([0.25, 0.5, 0.25]).view(1, 1, 1, 3).repeat(3, 1, 1, 1)
h = F.conv2d(img, sep, padding=(0, 1), groups=3)
v = F.conv2d(h, sep.transpose(2, 3), padding=(1, 0), groups=3)
print("separable", v.shape, f"{v.mean().item():.5f}")

# spatial-transformer step: learn theta so the warp matches a target warp
target = F.grid_sample(img, F.affine_grid(theta, img.shape, align_corners=False), align_corners=False)
param = torch.eye(2, 3).repeat(2, 1, 1).requires_grad_()
opt = torch.optim.SGD([param], lr=0.5)
for step in range(4):
    grid = F.affine_grid(param, img.shape, align_corners=False)
    grid.retain_grad()
    warped = F.grid_sample(img, grid, mode="bilinear", padding_mode="border", align_corners=False)
    loss = F.mse_loss(warped, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"stn step {step} loss {loss.item():.6f} |dgrid| {grid.grad.abs().sum().item():.5f}")
print("theta grad", param.grad)
print("grad_fns", warped.grad_fn.name(), grid.grad_fn.name())
g = torch.zeros(1, 3, 3, 2, requires_grad=True)
out = F.grid_sample(img[:1], g, mode="bilinear", padding_mode="reflection", align_corners=True)
out.sum().backward()
print("dgrid reflection", g.grad[0, 0])
