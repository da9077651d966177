"""Evaluation utilities: model.eval + torch.no_grad / inference_mode, argmax/topk accuracy,
confusion matrix via bincount, per-class precision/recall/F1 with zero-division handling,
ROC-AUC by sorting, expected calibration error with bucketize, running averages, and tensor
printing under set_printoptions (precision, sci_mode, threshold/edgeitems, linewidth)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
C = 4
X = torch.randn(60, 6)
W = torch.randn(6, C)
y = (X @ W + 0.5 * torch.randn(60, C)).argmax(1)
print(torch.bincount(y, minlength=C), y[:10])
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Dropout(0.2), nn.Linear(12, C))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
for ep in range(5):
    model.train()
    for xb, yb in zip(X.split(20), y.split(20)):
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(); loss.backward(); opt.step()
    print(ep, round(loss.item(), 5), model.training)

model.eval()
with torch.no_grad():
    logits = model(X)
print(model.training, [m.training for m in model], logits.requires_grad, logits.grad_fn)
probs = logits.softmax(1)
pred = probs.argmax(1)
top2 = probs.topk(2, dim=1).indices
print("acc", (pred == y).float().mean().item(), "top2", (top2 == y[:, None]).any(1).float().mean().item())
cm = torch.bincount(y * C + pred, minlength=C * C).reshape(C, C)
print(cm)
tp = cm.diag().float()
prec = tp / cm.sum(0).clamp(min=1)
rec = tp / cm.sum(1).clamp(min=1)
f1 = torch.where(prec + rec > 0, 2 * prec * rec / (prec + rec), torch.zeros_like(prec))
print(prec, rec, f1, f1.mean())
print(torch.nan_to_num(tp / cm.sum(0)), (tp / torch.zeros(C)).isinf().sum())


def auc(scores, labels):
    order = scores.argsort(descending=True)
    l = labels[order].float()
    tpr = l.cumsum(0) / l.sum()
    fpr = (1 - l).cumsum(0) / (1 - l).sum()
    tpr = torch.cat([torch.zeros(1), tpr]); fpr = torch.cat([torch.zeros(1), fpr])
    return torch.trapezoid(tpr, fpr)


for c in range(C):
    print("auc", c, round(auc(probs[:, c], (y == c).long()).item(), 6))
conf, hit = probs.max(1).values, (pred == y).float()
edges = torch.linspace(0, 1, 6)
bins = torch.bucketize(conf, edges[1:-1])
ece = torch.zeros(())
for b in range(5):
    m = bins == b
    if m.any():
        ece += m.float().mean() * (conf[m].mean() - hit[m].mean()).abs()
print("ece", ece, bins.bincount(minlength=5))
with torch.inference_mode():
    out = model(X[:3])
    print(out.is_inference(), torch.is_grad_enabled(), out.requires_grad)
try:
    out.add_(1)
except Exception as e:
    print(type(e).__name__, e)
try:
    with torch.inference_mode():
        t = torch.ones(2)
    t.requires_grad_(True)
    (t * 2).sum().backward()
except Exception as e:
    print(type(e).__name__, e)
with torch.no_grad():
    z = model[0](X[:2])
print(z.requires_grad, torch.enable_grad()(lambda: model[0](X[:2]))().requires_grad)

torch.set_printoptions(precision=2)
print(probs[:3])
torch.set_printoptions(sci_mode=True)
print(probs[:2] * 1e-3)
torch.set_printoptions(profile="default")
print(torch.tensor([1e-8, 1.0, 1e6]), torch.tensor([123456789.0, 1.5]))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(20), torch.arange(40.).view(8, 5))
torch.set_printoptions(profile="default")
torch.set_printoptions(linewidth=40)
print(torch.randn(2, 8))
torch.set_printoptions(profile="default")
print(torch.tensor([0.1, 0.25], dtype=torch.float64), torch.tensor([1, -2], dtype=torch.int8), torch.tensor([True, False]))
print(torch.tensor([float("nan"), float("inf"), -1.5]), torch.tensor([2.0, 3.0]).half(), torch.tensor([1.5], dtype=torch.bfloat16))
print(torch.tensor(3.14159, requires_grad=True) * 2, torch.zeros(0, 3), torch.empty(2, 0).shape)
print(torch.tensor([1e-5, 1e-4]), torch.tensor([100000.0, 1.0]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]) / 3)
print(torch.tensor(1 + 2j), torch.tensor([0.5 - 1j, 2j]), torch.randn(3, dtype=torch.complex64))
print(repr(torch.tensor([1.0, 2.0]).to(torch.float64).numpy()), torch.tensor([1, 2]).tolist(), f"{torch.tensor(2.5):.3f}")
