"""Tabular binary classification: one nn.Embedding per categorical column next to continuous
features binned with torch.bucketize, BCEWithLogitsLoss with pos_weight on an imbalanced target,
a WeightedRandomSampler, a DataLoader with a custom collate_fn over dict rows, AUROC computed by
argsort/cumsum, and the best state_dict saved and reloaded with weights_only=True."""
import io

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

torch.manual_seed(0)
N = 96
cards = [5, 3, 7]
cats = torch.stack([torch.randint(0, c, (N,)) for c in cards], dim=1)
cont = torch.randn(N, 3) * torch.tensor([1.0, 10.0, 0.1]) + torch.tensor([0.0, 50.0, 1.0])
score = cont[:, 0] + (cats[:, 0] == 2).float() * 2 - 1.5
target = (score + 0.3 * torch.randn(N) > 0.5).float()
print(target.sum().item(), target.dtype, cats.dtype)
edges = torch.tensor([40.0, 45.0, 50.0, 55.0, 60.0])
bins = torch.bucketize(cont[:, 1], edges)
print(bins[:10], torch.bincount(bins, minlength=6))
print(torch.bucketize(torch.tensor([45.0, 45.5]), edges, right=True),
      torch.searchsorted(edges, torch.tensor([[45.0], [61.0]])))


class Rows(Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        return {"cat": cats[i], "bin": bins[i], "cont": cont[i], "y": target[i]}


def collate(rows):
    out = {k: torch.stack([r[k] for r in rows]) for k in rows[0]}
    out["cat"] = torch.cat([out["cat"], out.pop("bin")[:, None]], dim=1)
    return out


mu, sd = cont.mean(0), cont.std(0, unbiased=True)


class TabNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, min(4, (c + 1) // 2)) for c in cards + [6])
        width = sum(e.embedding_dim for e in self.embs) + 3
        self.mlp = nn.Sequential(nn.Linear(width, 16), nn.BatchNorm1d(16), nn.SiLU(),
                                 nn.Dropout(0.1), nn.Linear(16, 1))

    def forward(self, cat, cont):
        e = [emb(cat[:, i]) for i, emb in enumerate(self.embs)]
        x = torch.cat(e + [(cont - mu) / sd], dim=1)
        return self.mlp(x).squeeze(-1)


def auroc(scores, labels):
    order = torch.argsort(scores, descending=True)
    l = labels[order]
    tps, fps = torch.cumsum(l, 0), torch.cumsum(1 - l, 0)
    tpr = torch.cat([torch.zeros(1), tps / tps[-1]])
    fpr = torch.cat([torch.zeros(1), fps / fps[-1]])
    return torch.trapezoid(tpr, fpr)


pos = target.sum()
class_w = torch.where(target > 0, (N - pos) / pos, torch.tensor(1.0))
sampler = WeightedRandomSampler(class_w.double(), num_samples=64, replacement=True,
                                generator=torch.Generator().manual_seed(3))
loader = DataLoader(Rows(), batch_size=16, sampler=sampler, collate_fn=collate)
batch = next(iter(loader))
print({k: (tuple(v.shape), v.dtype) for k, v in batch.items()}, batch["y"].mean().item())
model = TabNet()
print(model.embs)
loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.5]))
opt = torch.optim.Adam(model.parameters(), lr=0.03, weight_decay=1e-5)
best_auc, buf = -1.0, io.BytesIO()
for epoch in range(4):
    model.train()
    for b in loader:
        loss = loss_fn(model(b["cat"], b["cont"]), b["y"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        full = collate([Rows()[i] for i in range(N)])
        logits = model(full["cat"], full["cont"])
        auc = auroc(logits, target).item()
        acc = ((logits > 0).float() == target).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.5f} auc {auc:.5f} acc {acc:.4f}")
    if auc > best_auc:
        best_auc = auc
        buf = io.BytesIO()
        torch.save({"model": model.state_dict(), "epoch": epoch, "auc": auc}, buf)
print(loss.grad_fn.name(), nn.functional.binary_cross_entropy_with_logits(
    torch.zeros(3), torch.ones(3), pos_weight=torch.tensor(2.0)))
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print(ckpt["epoch"], f"{ckpt['auc']:.5f}", list(ckpt["model"])[:3], len(ckpt["model"]))
print(ckpt["model"]["mlp.1.num_batches_tracked"], ckpt["model"]["embs.0.weight"].shape)
fresh = TabNet()
print(fresh.load_state_dict(ckpt["model"]))
fresh.eval()
with torch.no_grad():
    print(f"{auroc(fresh(full['cat'], full['cont']), target).item():.5f}")
print(auroc(torch.tensor([0.9, 0.8, 0.3, 0.1]), torch.tensor([1.0, 0.0, 1.0, 0.0])))
try:
    nn.Embedding(3, 2)(torch.tensor([3]))
except IndexError as e:
    print("IndexError:", e)
try:
    torch.bucketize(torch.tensor([1.0]), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
except RuntimeError as e:
    print("RuntimeError:", e)
