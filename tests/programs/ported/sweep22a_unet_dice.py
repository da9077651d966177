"""A small UNet for binary masks trained the way segmentation repos do it: GroupNorm conv
blocks, a bilinear-upsampling decoder, BCEWithLogitsLoss with a pos_weight for the rare
foreground plus a soft dice loss, AdamW with PolynomialLR, boundary maps from max_pool2d
morphology, nearest-exact mask resizing, channels_last inputs, and IoU/dice at thresholds."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)


def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.GroupNorm(4, cout), nn.SiLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.GroupNorm(4, cout), nn.SiLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc1 = block(1, c)
        self.enc2 = block(c, 2 * c)
        self.mid = block(2 * c, 2 * c)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec2 = block(4 * c, c)
        self.dec1 = block(2 * c, c)
        self.drop = nn.Dropout2d(0.1)
        self.out = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up(m), e2], dim=1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2.0, mode="bilinear"), e1], dim=1))
        return self.out(self.drop(d1))


def make_batch(n, g):
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing="ij")
    c = torch.rand(n, 2, generator=g) * 8 + 4
    r = torch.rand(n, generator=g) * 2 + 1.5
    d2 = (yy - c[:, 0, None, None]) ** 2 + (xx - c[:, 1, None, None]) ** 2
    mask = (d2 <= r[:, None, None] ** 2).float().unsqueeze(1)
    img = mask * 0.6 + 0.3 * torch.rand(n, 1, 16, 16, generator=g)
    return img, mask


def soft_dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    dims = (1, 2, 3)
    inter = (p * target).sum(dims)
    denom = p.sum(dims) + target.sum(dims)
    return 1 - ((2 * inter + eps) / (denom + eps)).mean()


def boundary(mask, k=3):
    dil = F.max_pool2d(mask, k, stride=1, padding=k // 2)
    ero = -F.max_pool2d(-mask, k, stride=1, padding=k // 2)
    return dil - ero


g = torch.Generator().manual_seed(11)
img, mask = make_batch(8, g)
fg = mask.mean().item()
print(f"foreground fraction {fg:.4f}")
pos_weight = torch.tensor([(1 - fg) / fg])
print("pos_weight", pos_weight)
bce = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
print(bce)
edges = boundary(mask)
print("boundary pixels", edges.sum().item(), edges.dtype, edges.unique())

model = UNet()
print("params", sum(p.numel() for p in model.parameters()))
print("keys", [k for k in model.state_dict() if k.startswith("enc1")])
decay = [p for n, p in model.named_parameters() if p.ndim > 1]
no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 1e-2},
                         {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)
sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=6, power=0.9)
x = img.to(memory_format=torch.channels_last)
print("channels_last", x.is_contiguous(), x.is_contiguous(memory_format=torch.channels_last),
      x.stride())
for step in range(6):
    model.train()
    logits = model(x)
    lb = bce(logits, mask)
    ld = soft_dice_loss(logits, mask)
    loss = lb + ld
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    print(f"step {step} bce {lb.item():.4f} dice {ld.item():.4f} gnorm {gn.item():.4f} "
          f"lr {sched.get_last_lr()[0]:.6f}")
print("loss grad_fn", loss.grad_fn.name(), lb.grad_fn.name(), ld.grad_fn.name())

ref = F.binary_cross_entropy_with_logits(logits.detach(), mask, pos_weight=pos_weight,
                                         reduction="none")
print("per-pixel bce", ref.shape, f"{ref.mean().item():.4f}", f"{ref.max().item():.4f}",
      "logits cl", logits.is_contiguous(memory_format=torch.channels_last), "bce", ref.stride())
xf = x.flip(-1)
print("flipped input", xf.stride(), xf.is_contiguous(memory_format=torch.channels_last))
w = 1 + 4 * edges
print("edge-weighted bce", f"{(ref * w).sum().div(w.sum()).item():.4f}")

model.eval()
with torch.no_grad():
    prob = model(img).sigmoid()
    flip = model(img.flip(-1)).sigmoid().flip(-1)
    prob = (prob + flip) / 2
for t in (0.3, 0.5, 0.7):
    pred = prob > t
    tgt = mask.bool()
    inter = (pred & tgt).sum((1, 2, 3)).float()
    union = (pred | tgt).sum((1, 2, 3)).float()
    iou = torch.where(union > 0, inter / union.clamp(min=1), torch.ones_like(union))
    print(f"thr {t}: mean IoU {iou.mean().item():.4f} pred px {pred.sum().item()}")

small = F.interpolate(mask, size=(7, 7), mode="nearest-exact")
nearest = F.interpolate(mask, size=(7, 7), mode="nearest")
print("nearest-exact vs nearest", small.sum().item(), nearest.sum().item(), small.dtype)
up = F.interpolate(prob, size=(24, 24), mode="bilinear", align_corners=True)
print("upsampled", up.shape, f"{up.mean().item():.4f}")
# the same masks as two-class targets: stored as uint8, as image loaders give them
two = torch.cat([-logits.detach(), logits.detach()], dim=1)
mask_u8 = mask.squeeze(1).to(torch.uint8)
try:
    F.cross_entropy(two, mask_u8)
except RuntimeError as e:
    print("RuntimeError:", e)
print("two-class ce", f"{F.cross_entropy(two, mask_u8.long()).item():.4f}",
      f"{F.cross_entropy(two[:, :, 0, 0], mask_u8[:, 0, 0]).item():.4f}")
try:
    bce(logits.detach(), mask[:, :, :8])
except ValueError as e:
    print("ValueError:", e)
try:
    nn.BCEWithLogitsLoss(pos_weight=torch.ones(3))(logits.detach(), mask)
except RuntimeError as e:
    print("RuntimeError:", e)
