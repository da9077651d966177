"""A two-level U-Net for binary segmentation of synthetic blobs: ConvTranspose2d up-sampling
in the decoder (with output_size for odd input sizes) and an F.interpolate skip-resize
(bilinear, align_corners both ways), a soft Dice + BCE-with-logits loss, ReduceLROnPlateau
on the validation Dice (mode='max', cooldown, min_lr) and its state_dict; plus the mistakes
people make assembling one - padding='same' on a transposed conv, a float stride from a
computed scale - caught and printed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def blobs(n, h, w):
    yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                            torch.arange(w, dtype=torch.float32), indexing="ij")
    cy, cx = torch.rand(n, 1, 1) * h, torch.rand(n, 1, 1) * w
    r = 1.5 + torch.rand(n, 1, 1) * 2
    mask = (((yy - cy) ** 2 + (xx - cx) ** 2) < r ** 2).float()
    img = mask + 0.3 * torch.randn(n, h, w)
    return img.unsqueeze(1), mask.unsqueeze(1)


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, c=4, align_corners=False):
        super().__init__()
        self.enc1, self.enc2 = block(1, c), block(c, 2 * c)
        self.bottom = block(2 * c, 2 * c)
        self.up2 = nn.ConvTranspose2d(2 * c, c, kernel_size=2, stride=2)
        self.dec2 = block(3 * c, c)
        self.up1 = nn.ConvTranspose2d(c, c, kernel_size=4, stride=2, padding=1)
        self.dec1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 1, 1)
        self.align_corners = align_corners

    def forward(self, x):
        e1 = self.enc1(x)                                   # H x W
        e2 = self.enc2(F.max_pool2d(e1, 2))                 # H/2
        b = self.bottom(F.max_pool2d(e2, 2))                # H/4
        u2 = self.up2(b)
        if u2.shape[-2:] != e2.shape[-2:]:                  # odd sizes: resize to the skip
            u2 = F.interpolate(u2, size=e2.shape[-2:], mode="bilinear",
                               align_corners=self.align_corners)
        d2 = self.dec2(torch.cat([u2, e2], dim=1))
        u1 = self.up1(d2, output_size=e1.shape[-2:])        # output_size picks output_padding
        d1 = self.dec1(torch.cat([u1, e1], dim=1))
        return self.head(d1)


def dice_score(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    return ((2 * inter + eps) / (p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)).mean()


x_tr, y_tr = blobs(4, 11, 13)     # odd sizes on purpose
x_va, y_va = blobs(4, 11, 13)
net = UNet()
print(net.up1, net.up2, sep="\n")
opt = torch.optim.Adam(net.parameters(), lr=0.03)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=0,
                                                   threshold=0.05, threshold_mode="abs",
                                                   cooldown=1, min_lr=0.01)
for epoch in range(5):
    net.train()
    logits = net(x_tr)
    loss = F.binary_cross_entropy_with_logits(logits, y_tr, pos_weight=torch.tensor([3.0])) \
        + (1 - dice_score(logits, y_tr))
    opt.zero_grad()
    loss.backward()
    opt.step()
    net.eval()
    with torch.no_grad():
        val = dice_score(net(x_va), y_va).item()
    sched.step(val)
    print(f"epoch {epoch} loss {loss.item():.4f} val_dice {val:.4f} lr {sched.get_last_lr()} "
          f"bad {sched.num_bad_epochs} cooldown {sched.cooldown_counter}")
print("logits", logits.shape, logits.grad_fn.name(), "best", round(sched.best, 4))
print({k: v for k, v in sched.state_dict().items() if k not in ("best",)})

# the same decoder path with align_corners=True, and the resize helpers on their own
net_ac = UNet(align_corners=True)
net_ac.load_state_dict(net.state_dict())
net_ac.eval()
with torch.no_grad():
    diff = (net_ac(x_va) - net(x_va)).abs().max()
print("align_corners changes output:", bool(diff > 0))
feat = torch.arange(12.0).reshape(1, 1, 3, 4)
for ac in (False, True):
    up = F.interpolate(feat, scale_factor=2, mode="bilinear", align_corners=ac)
    print("ac", ac, up.shape, [round(v, 4) for v in up[0, 0, 1].tolist()])
aa = F.interpolate(feat, size=(2, 3), mode="bilinear", align_corners=False, antialias=True)
print("antialias", [round(v, 4) for v in aa.flatten().tolist()])
print(nn.Upsample(scale_factor=2, mode="nearest")(feat).shape)

# mistakes
up_same = nn.ConvTranspose2d(4, 4, 3, padding="same")
print(up_same)
try:
    up_same(torch.randn(1, 4, 5, 5))
except TypeError as e:
    print("TypeError:", e)
scale = 13 / 11
try:
    F.conv_transpose2d(torch.randn(1, 4, 5, 5), net.up1.weight, None, stride=scale)
except TypeError as e:
    print("TypeError:", e)
try:
    F.conv_transpose2d(torch.randn(1, 4, 5, 5), net.up1.weight, None, 2, (1, 0.5))
except TypeError as e:
    print("TypeError:", e)
try:
    net.up1(torch.randn(1, 4, 6, 6), output_size=[20, 20])
except ValueError as e:
    print("ValueError:", e)
try:
    F.interpolate(feat, scale_factor=2, mode="nearest", align_corners=True)
except ValueError as e:
    print("ValueError:", e)
try:
    torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="best")
except ValueError as e:
    print("ValueError:", e)
print([k for k in net.state_dict() if k.startswith(("up", "head"))])
