"""Object-detection utilities: anchors from meshgrid, IoU by broadcasting, hand-written NMS,
focal loss, smooth L1 on matched boxes, a tiny FPN with nearest upsampling and ROI crops."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_anchors(h, w, stride, sizes):
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                            torch.arange(w, dtype=torch.float32), indexing="ij")
    centers = torch.stack([(xs + 0.5) * stride, (ys + 0.5) * stride], dim=-1).reshape(-1, 1, 2)
    half = torch.tensor(sizes, dtype=torch.float32).view(1, -1, 1).expand(-1, -1, 2) / 2
    return torch.cat([centers - half, centers + half], dim=-1).reshape(-1, 4)


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]).clamp(min=0) * (a[:, 3] - a[:, 1]).clamp(min=0)
    area_b = (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def nms(boxes, scores, thresh):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i.item())
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
        order = order[1:][ious <= thresh]
    return torch.tensor(keep, dtype=torch.long)


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (a_t * ce * (1 - p_t) ** gamma).sum()


anchors = make_anchors(4, 4, 8, [8.0, 16.0])
print("anchors", anchors.shape, anchors[:3])
gt = torch.tensor([[2.0, 3.0, 14.0, 17.0], [16.0, 12.0, 30.0, 31.0]])
iou = box_iou(anchors, gt)
print("iou", iou.shape, iou.max().item(), iou.argmax(dim=0))
best_iou, matched = iou.max(dim=1)
pos = best_iou >= 0.3
print("positives", pos.sum().item(), pos.nonzero().flatten()[:6])

boxes = torch.rand(12, 2) * 20
boxes = torch.cat([boxes, boxes + torch.rand(12, 2) * 10 + 4], dim=1)
scores = torch.rand(12)
keep = nms(boxes, scores, 0.3)
print("nms keep", keep, scores[keep])
sorted_scores, idx = torch.sort(scores, descending=True, stable=True)
print("sorted", sorted_scores[:4], idx[:4], torch.topk(scores, 3).indices)


class TinyFPN(nn.Module):
    def __init__(self, num_anchors=2):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.lat1 = nn.Conv2d(8, 8, 1)
        self.lat2 = nn.Conv2d(16, 8, 1)
        self.cls = nn.Conv2d(8, num_anchors, 3, padding=1)
        self.reg = nn.Conv2d(8, num_anchors * 4, 3, padding=1)

    def forward(self, x):
        f1 = F.relu(self.c1(x))
        f2 = F.relu(self.c2(f1))
        p2 = self.lat2(f2)
        p1 = self.lat1(f1) + F.interpolate(p2, scale_factor=2, mode="nearest")
        n = x.shape[0]
        cls = self.cls(p1).permute(0, 2, 3, 1).reshape(n, -1)
        reg = self.reg(p1).permute(0, 2, 3, 1).reshape(n, -1, 4)
        return cls, reg, p1


torch.manual_seed(1)
net = TinyFPN()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(2, 3, 16, 16)
anchors = make_anchors(8, 8, 2, [3.0, 6.0])
gt = torch.tensor([[1.0, 1.0, 7.0, 6.0], [8.0, 9.0, 15.0, 15.0]])
best_iou, matched = box_iou(anchors, gt).max(dim=1)
labels = (best_iou >= 0.25).float()
targets = gt[matched] - anchors
print("labels", labels.sum().item(), targets.shape)
for step in range(5):
    cls, reg, feat = net(images)
    lcls = focal_loss(cls, labels.expand_as(cls)) / labels.sum().clamp(min=1)
    m = labels.bool()
    lreg = F.smooth_l1_loss(reg[:, m], targets[m].expand(2, -1, -1), beta=1.0 / 9)
    loss = lcls + lreg
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} cls {lcls.item():.5f} reg {lreg.item():.5f}")
print("grad_fn", lcls.grad_fn.name(), lreg.grad_fn.name(), feat.grad_fn.name())
print("feat", feat.shape)

rois = torch.tensor([[0, 1, 1, 5, 5], [1, 2, 0, 6, 4]])
crops = torch.stack([feat[b, :, y0:y1, x0:x1] for b, x0, y0, x1, y1 in rois.tolist()])
print("crops", crops.shape, crops.grad_fn.name())
pooled = F.adaptive_max_pool2d(crops, 2)
print("pooled", pooled.shape, pooled.sum().item())
up = F.interpolate(torch.arange(6.0).view(1, 1, 2, 3), size=(4, 5), mode="nearest")
print(up)
print("clip", boxes[:2].clamp(min=0, max=16))
