"""A single-level anchor detection head without torchvision: pairwise IoU and GIoU by
broadcasting, anchor matching with low-quality matches kept, smooth_l1 box regression on encoded
deltas, a sigmoid focal loss on logits, a GIoU check of the decoded boxes, then post-processing
with "fast NMS" (IoU matrix, triu, column max) and class-aware batched NMS through the
coordinate-offset trick."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
NUM_CLASSES, STRIDE, FEAT = 3, 8, 4
SIZES = torch.tensor([[12.0, 12.0], [20.0, 10.0]])


def make_anchors():
    ys, xs = torch.meshgrid(torch.arange(FEAT), torch.arange(FEAT), indexing="ij")
    centers = (torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2).float() + 0.5) * STRIDE
    half = SIZES / 2
    return torch.cat([centers - half, centers + half], dim=-1).reshape(-1, 4)


def box_area(b):
    return (b[..., 2] - b[..., 0]).clamp(min=0) * (b[..., 3] - b[..., 1]).clamp(min=0)


def pairwise_iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=-1)
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return inter / union, union


def giou_loss(pred, target):
    lt = torch.max(pred[:, :2], target[:, :2])
    rb = torch.min(pred[:, 2:], target[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=-1)
    union = box_area(pred) + box_area(target) - inter
    hull = (torch.max(pred[:, 2:], target[:, 2:]) - torch.min(pred[:, :2], target[:, :2])).prod(-1)
    giou = inter / union - (hull - union) / hull
    return (1 - giou).mean()


def encode(gt, anchors):
    wa, ha = (anchors[:, 2:] - anchors[:, :2]).unbind(-1)
    wg, hg = (gt[:, 2:] - gt[:, :2]).unbind(-1)
    ca, cg = (anchors[:, :2] + anchors[:, 2:]) / 2, (gt[:, :2] + gt[:, 2:]) / 2
    d = (cg - ca) / torch.stack([wa, ha], -1)
    return torch.cat([d, torch.log(wg / wa)[:, None], torch.log(hg / ha)[:, None]], dim=1)


def decode(deltas, anchors):
    wh = anchors[:, 2:] - anchors[:, :2]
    ctr = (anchors[:, :2] + anchors[:, 2:]) / 2 + deltas[:, :2] * wh
    size = wh * deltas[:, 2:].clamp(max=4.0).exp()
    return torch.cat([ctr - size / 2, ctr + size / 2], dim=1)


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p = logits.sigmoid()
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (a_t * (1 - p_t) ** gamma * ce).sum()


anchors = make_anchors()
gt_boxes = torch.tensor([[2.0, 3.0, 14.0, 13.0], [14.0, 16.0, 30.0, 26.0], [6.0, 20.0, 16.0, 30.0]])
gt_labels = torch.tensor([0, 2, 1])
iou, _ = pairwise_iou(anchors, gt_boxes)
print("anchors", tuple(anchors.shape), "iou", tuple(iou.shape), f"max {iou.max():.4f}")
best, matched = iou.max(dim=1)
labels = torch.full((len(anchors),), -1, dtype=torch.long)  # -1: ignored
labels[best < 0.3] = NUM_CLASSES  # background
labels[best >= 0.5] = gt_labels[matched[best >= 0.5]]
# every gt keeps the anchors that overlap it best, even below the threshold
low_quality = (iou == iou.max(dim=0, keepdim=True).values) & (iou > 0)
rows, cols = low_quality.nonzero(as_tuple=True)
labels[rows] = gt_labels[cols]
matched[rows] = cols
pos = (labels >= 0) & (labels < NUM_CLASSES)
print("positives", pos.nonzero().flatten().tolist(), "ignored", (labels == -1).sum().item())
cls_target = F.one_hot(labels.clamp(min=0), NUM_CLASSES + 1)[:, :NUM_CLASSES].float()
cls_target[labels == -1] = 0
valid = labels >= 0
reg_target = encode(gt_boxes[matched[pos]], anchors[pos])
print("reg targets", reg_target[:2])


class Head(nn.Module):
    def __init__(self, a=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ReLU())
        self.cls = nn.Conv2d(8, a * NUM_CLASSES, 3, padding=1)
        self.box = nn.Conv2d(8, a * 4, 3, padding=1)
        nn.init.constant_(self.cls.bias, -2.0)  # start with a low foreground prior

    def forward(self, x):
        f = self.stem(x)
        n = x.shape[0]
        cls = self.cls(f).permute(0, 2, 3, 1).reshape(n, -1, NUM_CLASSES)
        box = self.box(f).permute(0, 2, 3, 1).reshape(n, -1, 4)
        return cls, box


image_feat = torch.randn(1, 3, FEAT, FEAT)
head = Head()
opt = torch.optim.SGD(head.parameters(), lr=0.05, momentum=0.9)
for step in range(2):
    cls_logits, deltas = head(image_feat)
    l_cls = focal_loss(cls_logits[0][valid], cls_target[valid]) / pos.sum().clamp(min=1)
    l_box = F.smooth_l1_loss(deltas[0][pos], reg_target, beta=1 / 9)
    loss = l_cls + l_box
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: cls {l_cls.item():.5f} box {l_box.item():.5f} total {loss.item():.5f}")
print(l_cls.grad_fn.name(), l_box.grad_fn.name(), deltas.grad_fn.name())


def fast_nms(boxes, scores, thresh):
    order = scores.argsort(descending=True)
    if order.numel() == 0:
        return order
    iou, _ = pairwise_iou(boxes[order], boxes[order])
    iou = iou.triu(diagonal=1)
    keep = iou.max(dim=0).values <= thresh  # suppressed by any higher-scoring box
    return order[keep]


def batched_nms(boxes, scores, classes, thresh):
    # shift each class far apart so boxes of different classes never overlap
    offsets = classes.to(boxes) * (boxes.max() + 1)
    return fast_nms(boxes + offsets[:, None], scores, thresh)


with torch.no_grad():
    cls_logits, deltas = head(image_feat)
    scores, classes = cls_logits[0].sigmoid().max(dim=1)
    pred = decode(deltas[0][pos], anchors[pos])
    l_giou = giou_loss(pred, gt_boxes[matched[pos]])
print("eval giou loss", f"{l_giou.item():.5f}", "first box", pred[0].round(decimals=3))
print("top scores", scores.topk(3).values, classes.bincount(minlength=NUM_CLASSES).tolist())

# the same post-processing on jittered copies of the ground truth
g = torch.Generator().manual_seed(3)
cand = gt_boxes.repeat(3, 1) + torch.randn(9, 4, generator=g) * 1.5
cand_scores = torch.rand(9, generator=g)
cand_classes = torch.tensor([0, 2, 1, 0, 2, 1, 1, 1, 1])
keep = fast_nms(cand, cand_scores, 0.5)
keep_c = batched_nms(cand, cand_scores, cand_classes, 0.5)
print("kept", keep.tolist(), "class-aware", keep_c.tolist())
print("boxes", cand[keep].round(decimals=2))
classes_kept, counts = torch.unique(cand_classes[keep_c], return_counts=True)
print("per class", classes_kept.tolist(), counts.tolist())
best_per_class = torch.full((NUM_CLASSES,), -1.0).scatter_reduce(
    0, cand_classes, cand_scores, reduce="amax", include_self=True)
print("best score per class", best_per_class)
empty = fast_nms(torch.zeros(0, 4), torch.zeros(0), 0.5)
print("empty", empty, empty.shape)
try:
    torch.zeros(0, 0).max(dim=0)
except IndexError as e:
    print("error:", e)
