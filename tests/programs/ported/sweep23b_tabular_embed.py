"""Tabular classification with entity embeddings: categorical columns through nn.Embedding
(one per column, a padding index for unseen values, one with max_norm), numeric columns
standardised with nanmean/nan_to_num imputation and quantile bucketing, BatchNorm1d + dropout
in the head, class-weighted CrossEntropyLoss for an imbalanced target, early stopping on a
validation split with a deep-copied best state_dict, and evaluation under inference_mode."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N = 240
CARD = [5, 8, 3]
cats = torch.stack([torch.randint(1, c, (N,)) for c in CARD], dim=1)
num = torch.randn(N, 4)
num[torch.rand(N, 4) < 0.08] = float("nan")
score = (cats[:, 0] == 2).float() * 1.5 + torch.nan_to_num(num[:, 0]) - 0.8 * \
    torch.nan_to_num(num[:, 2]) + 0.3 * torch.randn(N)
y = torch.bucketize(score, torch.tensor([0.9, 1.9]))
print("class counts", torch.bincount(y, minlength=3).tolist(), "nans", int(num.isnan().sum()))

perm = torch.randperm(N)
tr, va = perm[:180], perm[180:]
mean = num[tr].nanmean(dim=0)
filled = torch.where(num.isnan(), mean, num)
std = filled[tr].std(dim=0, unbiased=True)
num_z = (filled - mean) / std
edges = torch.quantile(filled[tr, 1], torch.tensor([0.25, 0.5, 0.75]))
num_bin = torch.bucketize(filled[:, 1], edges)
print("mean", [f"{v:.3f}" for v in mean.tolist()], "edges", [f"{v:.3f}" for v in edges.tolist()])
print("missing per column", num.isnan().sum(0).tolist(), num_z.dtype, num_bin.dtype)
cats = torch.cat([cats, num_bin[:, None] + 1], dim=1)
CARD = CARD + [5]
cats[va[:3], 1] = 0   # "unseen" category at validation time maps to the padding row


class TabularNet(nn.Module):
    def __init__(self, cards, n_num, n_classes=3):
        super().__init__()
        dims = [min(6, (c + 1) // 2) for c in cards]
        self.embeds = nn.ModuleList(
            nn.Embedding(c, d, padding_idx=0, max_norm=1.0 if i == 1 else None)
            for i, (c, d) in enumerate(zip(cards, dims)))
        self.emb_drop = nn.Dropout(0.1)
        self.bn_num = nn.BatchNorm1d(n_num)
        width = sum(dims) + n_num
        self.head = nn.Sequential(nn.Linear(width, 32), nn.ReLU(), nn.BatchNorm1d(32),
                                  nn.Dropout(0.2), nn.Linear(32, n_classes))

    def forward(self, cats, nums):
        e = torch.cat([emb(cats[:, i]) for i, emb in enumerate(self.embeds)], dim=1)
        return self.head(torch.cat([self.emb_drop(e), self.bn_num(nums)], dim=1))


model = TabularNet(CARD, 4)
print(model.embeds)
print("embedding dims", [e.embedding_dim for e in model.embeds],
      "padding rows zero", all(bool(e.weight[0].eq(0).all()) for e in model.embeds))
counts = torch.bincount(y[tr], minlength=3).float()
weights = counts.sum() / (len(counts) * counts)
print("class weights", [f"{w:.4f}" for w in weights.tolist()])
criterion = nn.CrossEntropyLoss(weight=weights)
opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)


def evaluate(idx):
    model.eval()
    with torch.inference_mode():
        logits = model(cats[idx], num_z[idx])
        loss = F.cross_entropy(logits, y[idx], weight=weights)
        pred = logits.argmax(1)
    return loss, pred, logits


best, best_state, patience, bad_epochs = float("inf"), None, 3, 0
for epoch in range(30):
    model.train()
    for b in tr.split(45):
        loss = criterion(model(cats[b], num_z[b]), y[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
    val_loss, pred, logits = evaluate(va)
    acc = (pred == y[va]).float().mean().item()
    print(f"epoch {epoch:2d} train {loss.item():.4f} val {val_loss.item():.4f} acc {acc:.3f}")
    if val_loss.item() < best - 1e-3:
        best, bad_epochs = val_loss.item(), 0
        best_state = copy.deepcopy(model.state_dict())
    else:
        bad_epochs += 1
        if bad_epochs >= patience:
            print("early stop at epoch", epoch, "best", f"{best:.4f}")
            break

print("max_norm respected", bool(model.embeds[1].weight.norm(dim=1).le(1.0 + 1e-5).all()))
model.load_state_dict(best_state)
val_loss, pred, logits = evaluate(va)
print("restored val", f"{val_loss.item():.4f}", logits.is_inference(), logits.requires_grad,
      torch.is_inference_mode_enabled())
conf = torch.bincount(y[va] * 3 + pred, minlength=9).reshape(3, 3)
print("confusion\n", conf)
tp = conf.diag().float()
precision = tp / conf.sum(0).clamp(min=1)
recall = tp / conf.sum(1).clamp(min=1)
f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
print("precision", [f"{v:.3f}" for v in precision.tolist()], "recall",
      [f"{v:.3f}" for v in recall.tolist()], "macro f1", f"{f1.mean().item():.4f}")
probs = logits.softmax(1)
print("probs", probs.shape, probs.dtype, f"{probs.max(1).values.mean().item():.4f}")
print(sorted(best_state)[:6], len(best_state))
print(best_state["bn_num.num_batches_tracked"], best_state["head.2.running_var"].shape)

# raw string-like categorical codes -> contiguous ids, multi-valued tags via EmbeddingBag
raw_city = torch.tensor([907, 12, 907, 33, 12, 12, 5051, 33])
vocab, ids, freq = torch.unique(raw_city, sorted=True, return_inverse=True, return_counts=True)
print("vocab", vocab.tolist(), ids.tolist(), freq.tolist())
uc, inv = torch.unique_consecutive(raw_city.sort().values, return_inverse=True)
print("consecutive", uc.tolist(), inv.tolist())
print("one-hot", F.one_hot(ids, num_classes=len(vocab)).sum(0).tolist())
tags = torch.tensor([1, 2, 4, 3, 3, 0, 2])
offsets = torch.tensor([0, 2, 3, 5])
bag_mean = nn.EmbeddingBag(6, 3, mode="mean", padding_idx=0)
bag_sum = nn.EmbeddingBag(6, 3, mode="sum")
bag_max = nn.EmbeddingBag(6, 3, mode="max")
psw = torch.tensor([1.0, 0.5, 2.0, 1.0, 1.0, 0.3, 0.7])
outs = [bag_mean(tags, offsets), bag_sum(tags, offsets, per_sample_weights=psw),
        bag_max(tags, offsets)]
print([o.shape for o in outs], [o.grad_fn.name() for o in outs])
(outs[0].sum() + outs[1].pow(2).sum() + outs[2].sum()).backward()
print("bag grads", bag_mean.weight.grad[0].tolist(),
      f"{bag_sum.weight.grad.abs().sum().item():.4f}",
      bag_max.weight.grad.ne(0).sum().item())
pre = nn.Embedding.from_pretrained(torch.arange(12.0).reshape(4, 3), freeze=True, padding_idx=3)
print(pre, pre.weight.requires_grad, pre(torch.tensor([[0, 3], [2, 1]])).sum(-1).tolist())
col = torch.tensor([3.0, float("nan"), 1.0, 7.0, float("nan"), 2.0, 9.0])
print("nanmedian", col.nanmedian().item(), "nanquantile",
      [f"{v:.3f}" for v in torch.nanquantile(col, torch.tensor([0.1, 0.5, 0.9])).tolist()],
      [torch.quantile(col.nan_to_num(0.0), 0.4, interpolation=m).item()
       for m in ("linear", "lower", "higher", "midpoint", "nearest")])
print("histc", torch.histc(score, bins=5, min=-3, max=4).tolist())

try:
    (logits * 2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
w = torch.ones(3, requires_grad=True)
try:
    (w * logits[0]).sum().backward()
    print("grad through inference tensor", w.grad)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    logits.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    nn.Embedding(5, 3)(torch.tensor([5]))
except IndexError as e:
    print("IndexError:", e)
try:
    nn.CrossEntropyLoss(weight=torch.ones(2))(logits, y[va])
except RuntimeError as e:
    print("RuntimeError:", e)
