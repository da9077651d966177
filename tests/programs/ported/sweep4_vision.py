"""Vision utilities: anchors with meshgrid, grid_sample at the borders, antialiased and uint8
resizing, unfold/fold, GroupNorm, adaptive pooling and unpooling, and their errors."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4)

# anchors on a feature map, both meshgrid orders
ys = (torch.arange(2, dtype=torch.float32) + 0.5) * 8
xs = (torch.arange(3, dtype=torch.float32) + 0.5) * 8
cy, cx = torch.meshgrid(ys, xs, indexing="ij")
cx2, cy2 = torch.meshgrid(xs, ys, indexing="xy")
print(cx, torch.equal(cx, cx2), torch.equal(cy, cy2))
for bad in (lambda: torch.meshgrid(ys, xs, indexing="ji"),
            lambda: torch.meshgrid(ys, xs.long(), indexing="ij"),
            lambda: torch.meshgrid([], indexing="ij")):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)

# a spatial-transformer style warp: grid points exactly on the borders get no gradient
img = torch.arange(2 * 1 * 4 * 5, dtype=torch.float32).reshape(2, 1, 4, 5) / 10
g = torch.tensor([[[[-1.2, -1.0], [-1.0, 0.3], [1.0, 1.0], [0.5, 1.5], [0.2, -0.3],
                    [1.3, 0.9]]]] * 2, requires_grad=True)
for pad in ("border", "reflection"):
    g.grad = None
    out = F.grid_sample(img, g, mode="bilinear", padding_mode=pad, align_corners=True)
    out.sum().backward()
    print(pad, out[0, 0, 0].detach(), g.grad[0, 0].flatten())
theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2)
print(F.affine_grid(theta, (2, 1, 2, 3), align_corners=True)[0])
try:
    F.affine_grid(theta, (2, 1, 4), align_corners=False)
except Exception as e:
    print(type(e).__name__, e)

# resizing: antialiased float, uint8 images, integer tensors
x = torch.randn(1, 2, 9, 11, requires_grad=True)
for m in ("bilinear", "bicubic"):
    y = F.interpolate(x, scale_factor=0.5, mode=m, antialias=True)
    y.sum().backward()
    print(m, tuple(y.shape), y.grad_fn.name(),
          F.interpolate(x, size=(9, 11), mode=m, antialias=True).grad_fn.name())
print("aa grad", x.grad[0, 0, 0])
u8 = torch.randint(0, 256, (1, 3, 6, 7), dtype=torch.uint8)
for m in ("bilinear", "bicubic"):
    for aa in (False, True):
        print(m, aa, F.interpolate(u8, size=(4, 10), mode=m, antialias=aa)[0, 1])
print(F.interpolate(u8, scale_factor=1.5, mode="bicubic", align_corners=True)[0, 0, :2])
print(F.interpolate(u8, scale_factor=2, mode="nearest")[0, 2, 0])

# im2col / col2im
inp = torch.randn(1, 3, 6, 7, requires_grad=True)
cols = F.unfold(inp, kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
back = F.fold(cols, (6, 7), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
back.sum().backward()
print(cols.shape, back.grad_fn.name(), inp.grad[0, 0])

# norms and pooling
gn = nn.GroupNorm(2, 4)
v = torch.randn(2, 4, 3, requires_grad=True)
gn(v).pow(3).sum().backward()
print(v.grad[0], gn.weight.grad)
amp = nn.AdaptiveMaxPool2d((3, 2), return_indices=True)
mv, mi = amp(torch.arange(35.0).view(1, 1, 7, 5))
print(mv, mi)
pv, pidx = F.max_pool2d(torch.randn(1, 1, 5, 5), 2, return_indices=True)
print(pidx)
print(F.max_unpool2d(pv, pidx, 2, output_size=(5, 5)))

for bad in (lambda: F.max_unpool2d(pv, pidx, 2),
            lambda: F.interpolate(torch.ones(1, 1, 4, 4, dtype=torch.int32), scale_factor=2),
            lambda: F.interpolate(torch.ones(1, 1, 4, dtype=torch.uint8), scale_factor=2,
                                  mode="linear"),
            lambda: F.interpolate(torch.ones(2, 3, 4), scale_factor=2, mode="bicubic"),
            lambda: F.interpolate(torch.ones(1, 2, 4, 4, dtype=torch.long), size=2, mode="area"),
            lambda: F.adaptive_max_pool1d(torch.ones(1, 2, 4, dtype=torch.bool), 2),
            lambda: F.unfold(torch.randn(3, 4), 2),
            lambda: F.unfold(torch.randn(2, 3, 4, 5, 6), 2),
            lambda: F.unfold(torch.randn(1, 1, 3, 3), 2, padding=-1),
            lambda: F.fold(torch.randn(2, 0, 4), (3, 3), 2),
            lambda: F.fold(torch.randn(1, 3, 4), (3, 3), 2),
            lambda: F.fold(torch.randn(1, 4, 4), (3, 3), 2, dilation=0, stride=0),
            lambda: F.group_norm(torch.randn(3, 6, 2), 2, torch.ones(6), torch.ones(4)),
            lambda: F.group_norm(torch.randn(3, 6, 2), 2, None, torch.ones(4)),
            lambda: nn.GroupNorm(2, 4)(torch.randn(3, 6, 2))):
    try:
        print(bad())
    except Exception as e:
        print(type(e).__name__, e)
