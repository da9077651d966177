"""Evaluation/metric code: confusion matrix via bincount, per-class precision/recall/F1,
top-k accuracy, torch.unique with counts/inverse, argsort ranking, AUC by sorting, histograms,
quantiles, and formatted f-strings of tensor values."""
import torch

torch.manual_seed(0)
num_classes, n = 4, 40
logits = torch.randn(n, num_classes)
target = torch.randint(0, num_classes, (n,))
logits[torch.arange(n), target] += 1.0
pred = logits.argmax(dim=1)

cm = torch.bincount(target * num_classes + pred, minlength=num_classes ** 2).reshape(num_classes, num_classes)
print(cm)
tp = cm.diag()
precision = tp / cm.sum(0).clamp(min=1)
recall = tp / cm.sum(1).clamp(min=1)
f1 = 2 * precision * recall / (precision + recall + 1e-12)
print(precision, recall, sep="\n")
print(f"macro F1 {f1.mean():.4f} micro acc {tp.sum() / cm.sum():.4f}")
for c in range(num_classes):
    print(f"class {c}: P={precision[c]:.3f} R={recall[c]:.3f} F1={f1[c]:.3f} support={cm[c].sum()}")


def topk_acc(output, target, topk=(1,)):
    maxk = max(topk)
    _, p = output.topk(maxk, 1, True, True)
    p = p.t()
    correct = p.eq(target.view(1, -1).expand_as(p))
    return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in topk]


print(topk_acc(logits, target, topk=(1, 2, 3)))
vals, inv, counts = torch.unique(target, sorted=True, return_inverse=True, return_counts=True)
print(vals, counts, inv[:10])
print(torch.unique(torch.tensor([[1, 2], [1, 2], [3, 4]]), dim=0, return_counts=True))
print(torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True))
u, c = target.unique(return_counts=True)
print(dict(zip(u.tolist(), c.tolist())))

scores = torch.softmax(logits, 1)[:, 1]
labels = (target == 1).long()
order = torch.argsort(scores, descending=True)
print(order[:8], scores[order[:3]])
tps = torch.cumsum(labels[order], 0).float()
fps = torch.cumsum(1 - labels[order], 0).float()
tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
auc = torch.trapz(tpr, fpr)
print(f"AUC {auc.item():.4f} {torch.trapezoid(tpr, fpr).item():.4f}")
ranks = torch.empty_like(order)
ranks[order] = torch.arange(n)
print(ranks[:10])
s, idx = torch.sort(scores, stable=True)
print(s[:4], idx[:4])
print(torch.histc(scores, bins=5, min=0, max=1))
print(torch.quantile(scores, torch.tensor([0.1, 0.5, 0.9])), scores.median(), scores.kthvalue(5))
print(torch.bucketize(scores[:6], torch.tensor([0.1, 0.3, 0.6])), torch.searchsorted(torch.tensor([0.1, 0.3, 0.6]), scores[:6]))
mode_val, mode_idx = torch.mode(target[:12])
print(mode_val, mode_idx, torch.count_nonzero(cm, dim=0))
print(f"{logits.mean():.3f} {logits.std():+.2e} {logits.max():8.4f} {scores.sum():g} {int(cm.sum())}")
print("{:.2%}".format((pred == target).float().mean().item()))
print(f"{tp}", f"{precision.tolist()}")
print(logits[:3].numpy().round(3).tolist())
m = torch.zeros(3, 3, dtype=torch.long)
m.index_put_((torch.tensor([0, 0, 1, 2]), torch.tensor([0, 0, 2, 1])), torch.tensor(1), accumulate=True)
print(m, m.float().div(m.sum(1, keepdim=True).clamp(min=1)))
running = {"loss": 0.0, "n": 0}
for i in range(0, n, 10):
    running["loss"] += torch.nn.functional.cross_entropy(logits[i:i + 10], target[i:i + 10], reduction="sum").item()
    running["n"] += 10
print(f"avg loss {running['loss'] / running['n']:.5f}")
