"""Two-stage-detector box plumbing written by hand: a Faster R-CNN style BoxCoder (weighted
deltas, log-clamped decode), a proposal matcher with low-quality matches, a balanced
positive/negative sampler, GIoU/DIoU losses, batched NMS via the per-class offset trick, a
sigmoid focal loss and smooth L1 with a small beta, and VOC-style average precision."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=4, sci_mode=False)
CLIP = math.log(1000.0 / 16)


class BoxCoder:
    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0)):
        self.weights = weights

    def encode(self, ref, proposals):
        wx, wy, ww, wh = self.weights
        pw = proposals[:, 2] - proposals[:, 0]
        ph = proposals[:, 3] - proposals[:, 1]
        px = proposals[:, 0] + 0.5 * pw
        py = proposals[:, 1] + 0.5 * ph
        gw = ref[:, 2] - ref[:, 0]
        gh = ref[:, 3] - ref[:, 1]
        gx = ref[:, 0] + 0.5 * gw
        gy = ref[:, 1] + 0.5 * gh
        return torch.stack((wx * (gx - px) / pw, wy * (gy - py) / ph,
                            ww * torch.log(gw / pw), wh * torch.log(gh / ph)), dim=1)

    def decode(self, deltas, boxes):
        boxes = boxes.to(deltas.dtype)
        w = boxes[:, 2] - boxes[:, 0]
        h = boxes[:, 3] - boxes[:, 1]
        cx = boxes[:, 0] + 0.5 * w
        cy = boxes[:, 1] + 0.5 * h
        wx, wy, ww, wh = self.weights
        dx = deltas[:, 0::4] / wx
        dy = deltas[:, 1::4] / wy
        dw = torch.clamp(deltas[:, 2::4] / ww, max=CLIP)
        dh = torch.clamp(deltas[:, 3::4] / wh, max=CLIP)
        pcx = dx * w[:, None] + cx[:, None]
        pcy = dy * h[:, None] + cy[:, None]
        pw = torch.exp(dw) * w[:, None]
        ph = torch.exp(dh) * h[:, None]
        out = torch.stack((pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw, pcy + 0.5 * ph), dim=2)
        return out.flatten(1)


def area(b):
    return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])


def box_iou(a, b):
    lt = torch.max(a[:, None, :2], b[:, :2])
    rb = torch.min(a[:, None, 2:], b[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area(a)[:, None] + area(b) - inter
    return inter / union, union


def giou_loss(p, t, eps=1e-7):
    x1 = torch.max(p[:, 0], t[:, 0]); y1 = torch.max(p[:, 1], t[:, 1])
    x2 = torch.min(p[:, 2], t[:, 2]); y2 = torch.min(p[:, 3], t[:, 3])
    inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    union = area(p) + area(t) - inter
    iou = inter / (union + eps)
    cx1 = torch.min(p[:, 0], t[:, 0]); cy1 = torch.min(p[:, 1], t[:, 1])
    cx2 = torch.max(p[:, 2], t[:, 2]); cy2 = torch.max(p[:, 3], t[:, 3])
    hull = (cx2 - cx1) * (cy2 - cy1)
    giou = iou - (hull - union) / (hull + eps)
    diag = (cx2 - cx1) ** 2 + (cy2 - cy1) ** 2
    cent = ((p[:, 0] + p[:, 2] - t[:, 0] - t[:, 2]) ** 2 + (p[:, 1] + p[:, 3] - t[:, 1] - t[:, 3]) ** 2) / 4
    diou = iou - cent / (diag + eps)
    return (1 - giou).mean(), (1 - diou).mean()


def match(iou, high=0.5, low=0.3):
    vals, idx = iou.max(dim=0)
    labels = idx.clone()
    labels[vals < low] = -1
    labels[(vals >= low) & (vals < high)] = -2
    best_per_gt, _ = iou.max(dim=1)
    gt_i, prop_i = torch.nonzero(iou == best_per_gt[:, None], as_tuple=True)
    labels[prop_i] = idx[prop_i]
    return labels


def sample(labels, n=8, frac=0.25, g=None):
    pos = torch.where(labels >= 0)[0]
    neg = torch.where(labels == -1)[0]
    npos = min(pos.numel(), int(n * frac))
    nneg = min(neg.numel(), n - npos)
    p = pos[torch.randperm(pos.numel(), generator=g)[:npos]]
    q = neg[torch.randperm(neg.numel(), generator=g)[:nneg]]
    mask = torch.zeros_like(labels, dtype=torch.bool)
    mask[p] = True
    mask[q] = True
    return p, q, mask


def nms(boxes, scores, thr):
    # IoU matrix once, then a greedy pass over a suppression mask (fixed shapes)
    order = scores.argsort(descending=True)
    iou, _ = box_iou(boxes, boxes)
    suppressed = torch.zeros(boxes.size(0), dtype=torch.bool)
    keep = []
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        suppressed |= iou[i] > thr
    return torch.tensor(keep, dtype=torch.int64)


def batched_nms(boxes, scores, classes, thr):
    offsets = classes.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, thr)


def focal(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    pt = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - pt) ** gamma
    loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    return loss.sum() / targets.sum().clamp(min=1)


def average_precision(scores, tp, n_gt):
    order = scores.argsort(descending=True)
    tp = tp[order].float()
    ctp = tp.cumsum(0)
    cfp = (1 - tp).cumsum(0)
    rec = ctp / n_gt
    prec = ctp / (ctp + cfp)
    prec = torch.cat([torch.tensor([0.0]), prec, torch.tensor([0.0])])
    rec = torch.cat([torch.tensor([0.0]), rec, torch.tensor([1.0])])
    prec = prec.flip(0).cummax(0).values.flip(0)
    idx = torch.nonzero(rec[1:] != rec[:-1]).squeeze(1)
    return ((rec[idx + 1] - rec[idx]) * prec[idx + 1]).sum()


coder = BoxCoder()
gt = torch.tensor([[4.0, 4.0, 20.0, 18.0], [22.0, 6.0, 40.0, 30.0], [8.0, 24.0, 18.0, 38.0]])
gt_cls = torch.tensor([1, 2, 1])
xy = torch.rand(24, 2) * 32
wh = torch.rand(24, 2) * 14 + 4
props = torch.cat([xy, xy + wh], dim=1)
iou, union = box_iou(gt, props)
print("iou", iou.shape, iou.max(dim=1))
labels = match(iou)
print("matched", labels.tolist())
g = torch.Generator().manual_seed(3)
pos, neg, mask = sample(labels, g=g)
print("sampled pos", pos.tolist(), "neg", neg.tolist(), "mask count", mask.sum().item())
tgt = coder.encode(gt[labels[pos]], props[pos])
print("encoded", tgt)
dec = coder.decode(tgt, props[pos])
print("decode round trip err", f"{(dec - gt[labels[pos]]).abs().max().item():.2e}")
big = coder.decode(torch.full((1, 4), 80.0), props[:1])
print("clamped decode", big, torch.isfinite(big).all().item())


class Head(nn.Module):
    def __init__(self, ncls=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 32), nn.ReLU())
        self.cls = nn.Linear(32, ncls)
        self.reg = nn.Linear(32, 4 * ncls)
        nn.init.normal_(self.reg.weight, std=0.001)
        nn.init.zeros_(self.reg.bias)
        nn.init.constant_(self.cls.bias, -math.log((1 - 0.01) / 0.01))

    def forward(self, boxes):
        h = self.trunk(boxes / 40.0)
        return self.cls(h), self.reg(h)


head = Head()
opt = torch.optim.SGD(head.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
keep = torch.cat([pos, neg])
cls_t = torch.zeros(keep.numel(), 3)
cls_t[torch.arange(pos.numel()), gt_cls[labels[pos]]] = 1.0
for step in range(8):
    logits, deltas = head(props[keep])
    lf = focal(logits, cls_t)
    d = deltas[:pos.numel()].view(-1, 3, 4)[torch.arange(pos.numel()), gt_cls[labels[pos]]]
    lr = F.smooth_l1_loss(d, tgt, beta=1 / 9, reduction="sum") / max(1, pos.numel())
    boxes = coder.decode(d, props[pos])
    lg, ld = giou_loss(boxes, gt[labels[pos]])
    loss = lf + lr + 0.5 * lg
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"step {step} focal {lf.item():.4f} l1 {lr.item():.4f} giou {lg.item():.4f} "
              f"diou {ld.item():.4f} {loss.grad_fn.name()}")

with torch.no_grad():
    logits, deltas = head(props)
    scores, cls = logits.sigmoid().max(dim=1)
    boxes = coder.decode(deltas.view(-1, 3, 4)[torch.arange(24), cls], props)
    top = scores.topk(10).indices
    boxes, scores, cls = boxes[top], scores[top], cls[top]
kept = batched_nms(boxes, scores, cls, 0.5)
print("kept", kept.tolist(), "per class", torch.bincount(cls[kept], minlength=3).tolist())
plain = nms(boxes, scores, 0.5)
print("plain nms", plain.numel(), "batched", kept.numel())
det_iou, _ = box_iou(boxes[kept], gt)
tp = (det_iou.max(dim=1).values >= 0.5) & (cls[kept] == gt_cls[det_iou.argmax(dim=1)])
print("tp", tp.tolist())
print("AP", f"{average_precision(scores[kept], tp, gt.size(0)).item():.4f}")
