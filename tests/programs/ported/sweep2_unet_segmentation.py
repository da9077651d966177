"""A small U-Net for binary segmentation: conv blocks with InstanceNorm2d (affine, running stats), MaxPool,
ConvTranspose2d and bilinear Upsample decoders, skip concatenation with F.pad for odd sizes, a
dice + BCE loss, RMSprop with OneCycleLR, random_split, clip_grad_value_, then patch-based
overlap-averaging with F.unfold / F.fold and test-time flip augmentation."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)


def make_data(n, size=17):
    imgs, masks = [], []
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    for _ in range(n):
        cy, cx = torch.randint(4, size - 4, (2,)).tolist()
        r = int(torch.randint(2, 5, (1,)))
        m = (((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r).float()
        img = m * 0.8 + 0.3 * torch.randn(size, size)
        imgs.append(img[None])
        masks.append(m[None])
    return torch.stack(imgs), torch.stack(masks)


class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                         nn.InstanceNorm2d(cout, affine=True), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.InstanceNorm2d(cout, affine=True, track_running_stats=True),
                         nn.LeakyReLU(0.1, inplace=True))


class SingleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1), nn.InstanceNorm2d(cout), nn.ReLU())


class Up(nn.Module):
    def __init__(self, cin, skip, cout, bilinear):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            self.conv = SingleConv(cin + skip, cout)
        else:
            self.up = nn.ConvTranspose2d(cin, cin // 2, kernel_size=2, stride=2)
            self.conv = SingleConv(cin // 2 + skip, cout)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        dy, dx = x2.size(2) - x1.size(2), x2.size(3) - x1.size(3)
        x1 = F.pad(x1, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([x2, x1], dim=1))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inc = DoubleConv(1, 4)
        self.down1 = nn.Sequential(nn.MaxPool2d(2), SingleConv(4, 8))
        self.down2 = nn.Sequential(nn.MaxPool2d(2), SingleConv(8, 8))
        self.up1 = Up(8, 8, 4, bilinear=True)
        self.up2 = Up(4, 4, 4, bilinear=False)
        self.outc = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    union = p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


X, Y = make_data(24)
ds = TensorDataset(X, Y)
train_ds, val_ds = random_split(ds, [18, 6], generator=torch.Generator().manual_seed(2))
print(len(train_ds), len(val_ds), train_ds.indices[:6])
loader = DataLoader(train_ds, batch_size=6, shuffle=True, generator=torch.Generator().manual_seed(3))
model = UNet()
print(model.up1, model.up2.up)
print(sum(p.numel() for p in model.parameters()), [b for b, _ in model.named_buffers()][:3])
opt = torch.optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-5, momentum=0.9, foreach=False)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, epochs=3, steps_per_epoch=len(loader))
for epoch in range(3):
    model.train()
    tot = 0.0
    for x, y in loader:
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y) + dice_loss(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        opt.step()
        sched.step()
        tot += loss.item()
    model.eval()
    with torch.no_grad():
        vx, vy = next(iter(DataLoader(val_ds, batch_size=6)))
        pred = (torch.sigmoid(model(vx)) > 0.5).float()
        iou = ((pred * vy).sum() / ((pred + vy) > 0).float().sum()).item()
    print(f"epoch {epoch} loss {tot / len(loader):.4f} val_iou {iou:.4f} lr {sched.get_last_lr()[0]:.6f} "
          f"mom {opt.param_groups[0]['momentum']:.4f}")
print(logits.shape, logits.grad_fn.name(), loss.grad_fn.name())
print(model.inc[4].running_mean, model.inc[4].num_batches_tracked)

model.eval()
with torch.no_grad():
    patches = F.unfold(vx, kernel_size=8, stride=4, padding=2)
    print("patches", patches.shape)
    L = patches.size(-1)
    full = torch.sigmoid(model(vx))
    merged = F.fold(F.unfold(full, 8, stride=4, padding=2), output_size=(17, 17), kernel_size=8,
                    stride=4, padding=2)
    counts = F.fold(torch.ones(1, 64, L), output_size=(17, 17), kernel_size=8, stride=4, padding=2)
    print(counts[0, 0, :3, :6])
    avg = merged / counts
    flipped = torch.sigmoid(model(vx.flip(-1))).flip(-1)
    tta = (full + flipped) / 2
    print(f"{avg.mean().item():.5f} {full.mean().item():.5f} {tta.mean().item():.5f}")
    print((tta > 0.5).sum().item(), (vy > 0).sum().item())
    unf = nn.Unfold(kernel_size=(2, 3), dilation=(1, 2), stride=(2, 1))
    fold = nn.Fold(output_size=(5, 6), kernel_size=(2, 3), dilation=(1, 2), stride=(2, 1))
    z = torch.arange(60.).reshape(2, 1, 5, 6)
    u = unf(z)
    print(unf, u.shape, u[0, :, :3])
    print(fold(u)[0, 0])
print(F.interpolate(X[:1, :, :4, :4], size=(6, 5), mode="bicubic", align_corners=False)[0, 0, :2])
print(F.interpolate(X[:1, :, :4, :4], scale_factor=1.5, mode="nearest-exact")[0, 0, :2])
print(F.interpolate(X[:1, :, :4, :4], scale_factor=0.5, mode="area")[0, 0])
