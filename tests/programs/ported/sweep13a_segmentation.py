"""Segmentation losses and metrics: a tiny encoder-decoder with ConvTranspose2d
(output_padding=1), dice and focal losses over F.one_hot(...).permute targets, a weighted
CrossEntropyLoss with ignore_index=255, F.interpolate (bilinear, align_corners False/True),
F.grid_sample, a confusion matrix from torch.bincount and per-class IoU with torch.nanmean."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
C = 3


class EncDec(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 6, 3, stride=2, padding=1), nn.BatchNorm2d(6), nn.ReLU())
        self.mid = nn.Conv2d(6, 6, 3, padding=1)
        self.dec = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.head = nn.Conv2d(4, C, 1)

    def forward(self, x):
        h = self.enc(x)
        h = F.relu(self.mid(h)) + h
        return self.head(F.relu(self.dec(h)))


def dice_loss(logits, target, eps=1.0):
    probs = logits.softmax(1)
    onehot = F.one_hot(target.clamp(max=C - 1), C).permute(0, 3, 1, 2).float()
    valid = (target != 255).unsqueeze(1).float()
    inter = (probs * onehot * valid).sum((0, 2, 3))
    union = (probs * valid).sum((0, 2, 3)) + (onehot * valid).sum((0, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def focal_loss(logits, target, gamma=2.0):
    ce = F.cross_entropy(logits, target, reduction="none", ignore_index=255)
    pt = torch.exp(-ce)
    mask = target != 255
    return ((1 - pt) ** gamma * ce)[mask].mean()


x = torch.randn(2, 1, 8, 8)
target = (x[:, 0] > 0.3).long() + (x[:, 0] > 1.0).long()
target[0, :2, :2] = 255
print("target", target.shape, target.dtype, torch.unique(target).tolist())
model = EncDec()
ce = nn.CrossEntropyLoss(weight=torch.tensor([0.5, 1.0, 2.0]), ignore_index=255)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    logits = model(x)
    l_ce, l_dice, l_focal = ce(logits, target), dice_loss(logits, target), focal_loss(logits, target)
    loss = l_ce + l_dice + l_focal
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, logits.shape, f"{l_ce.item():.5f} {l_dice.item():.5f} {l_focal.item():.5f}")
print("grad_fns", l_ce.grad_fn.name(), l_dice.grad_fn.name(), l_focal.grad_fn.name())
print("dec grad", model.dec.weight.grad.shape, model.dec.output_padding, model.dec)

small = logits.detach()[:, :, ::2, ::2]
up_f = F.interpolate(small, size=(8, 8), mode="bilinear", align_corners=False)
up_t = F.interpolate(small, scale_factor=2, mode="bilinear", align_corners=True)
print("interp", up_f.shape, f"{up_f.sum().item():.4f}", f"{up_t.sum().item():.4f}",
      f"{(up_f - up_t).abs().max().item():.4f}")
theta = torch.tensor([[[0.9, 0.1, 0.05], [-0.1, 0.9, 0.0]]]).repeat(2, 1, 1)
grid = F.affine_grid(theta, (2, C, 8, 8), align_corners=False)
warped = F.grid_sample(logits.detach(), grid, mode="bilinear", padding_mode="zeros", align_corners=False)
nearest = F.grid_sample(target.unsqueeze(1).float(), grid, mode="nearest", padding_mode="border",
                        align_corners=False)
print("grid_sample", warped.shape, f"{warped.sum().item():.3f}", nearest.unique().tolist())
theta.requires_grad_()
src = small.clone().requires_grad_()
out = F.grid_sample(src, F.affine_grid(theta, (2, C, 5, 5), align_corners=True), align_corners=True,
                    padding_mode="reflection")
(out ** 2).mean().backward()
print("theta grad", theta.grad, out.grad_fn.name(), src.grad.abs().sum() > 0)
cubic = F.interpolate(small, size=(6, 6), mode="bicubic", align_corners=False)
exact = F.interpolate(target[:, None].float(), size=(5, 5), mode="nearest-exact")
print("bicubic", f"{cubic.mean().item():.5f}", "nearest-exact", exact[0, 0].tolist())

with torch.no_grad():
    pred = model(x).argmax(1)
    valid = target != 255
    cm = torch.bincount(target[valid] * C + pred[valid], minlength=C * C).reshape(C, C)
    print("confusion", cm.tolist(), cm.sum().item(), valid.sum().item())
    inter = cm.diag().float()
    union = cm.sum(0) + cm.sum(1) - cm.diag()
    iou = inter / union.float()
    print("iou", iou, "miou", f"{torch.nanmean(iou).item():.5f}")
    cm_empty = torch.zeros(C, C, dtype=torch.long)
    cm_empty[0, 0] = 5
    e = cm_empty.diag() / (cm_empty.sum(0) + cm_empty.sum(1) - cm_empty.diag())
    print("nan iou", e, torch.nanmean(e), e.nansum(), torch.isnan(e).sum().item())
    acc = (pred[valid] == target[valid]).float().mean()
    print("pixel acc", f"{acc.item():.4f}", torch.nanmean(torch.tensor([float("nan")])))

pool = F.adaptive_avg_pool2d(logits.detach(), 1).flatten(1)
print("pooled", pool.shape, F.one_hot(torch.tensor([0, 2]), C).permute(1, 0).tolist())
try:
    F.one_hot(torch.tensor([0, 3]), C)
except RuntimeError as err:
    print("RuntimeError", err)
try:
    F.cross_entropy(logits, target.clamp(max=C))
except (RuntimeError, IndexError) as err:
    print(type(err).__name__, err)
