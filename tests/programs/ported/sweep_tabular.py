"""A Kaggle-style tabular model: categorical embeddings + numeric features with BatchNorm1d,
class imbalance via WeightedRandomSampler and BCEWithLogitsLoss(pos_weight), k-fold with Subset,
OneCycleLR per batch, ReduceLROnPlateau, early stopping keeping the best state_dict."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset, TensorDataset, WeightedRandomSampler

torch.manual_seed(0)
N = 96
cat_a = torch.randint(0, 5, (N,))
cat_b = torch.randint(0, 3, (N,))
num = torch.randn(N, 4) * torch.tensor([1.0, 10.0, 0.1, 3.0]) + torch.tensor([0.0, 50.0, 1.0, -2.0])
logit = 0.8 * (cat_a == 2).float() - 0.5 * cat_b.float() + 0.05 * (num[:, 1] - 50) + num[:, 3] * 0.3
target = (logit + 0.3 * torch.randn(N) > 0.6).float()
print(f"positives {int(target.sum())}/{N}")
mean, std = num.mean(0), num.std(0)
num = (num - mean) / std
print(mean, std)
ds = TensorDataset(cat_a, cat_b, num, target)


class TabNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_a = nn.Embedding(5, 3)
        self.emb_b = nn.Embedding(3, 2, max_norm=1.0)
        # no biases before the BatchNorm1d: it cancels any shift, so their gradient would be
        # pure rounding noise, which Adam scales up to full-size steps
        self.num_proj = nn.Linear(4, 4, bias=False)
        self.mlp = nn.Sequential(nn.Linear(9, 16, bias=False), nn.BatchNorm1d(16), nn.SiLU(), nn.Dropout(0.1),
                                 nn.Linear(16, 1))

    def forward(self, a, b, x):
        h = torch.cat([self.emb_a(a), self.emb_b(b), self.num_proj(x)], dim=1)
        return self.mlp(h).squeeze(-1)


def run_fold(k, train_idx, val_idx):
    torch.manual_seed(10 + k)
    model = TabNet()
    tr = Subset(ds, train_idx.tolist())
    labels = target[train_idx]
    class_w = 1.0 / torch.bincount(labels.long()).float()
    sampler = WeightedRandomSampler(class_w[labels.long()], num_samples=len(tr), replacement=True)
    loader = DataLoader(tr, batch_size=16, sampler=sampler, drop_last=True)
    val = DataLoader(Subset(ds, val_idx.tolist()), batch_size=32)
    pos_weight = (labels == 0).sum() / (labels == 1).sum()
    crit = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    epochs = 4
    onecycle = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=epochs * len(loader))
    best, best_state, bad = float("inf"), None, 0
    for epoch in range(epochs):
        model.train()
        for a, b, x, y in loader:
            opt.zero_grad()
            loss = crit(model(a, b, x), y)
            loss.backward()
            opt.step()
            onecycle.step()
        model.eval()
        with torch.no_grad():
            outs, ys = [], []
            for a, b, x, y in val:
                outs.append(model(a, b, x))
                ys.append(y)
            out, yv = torch.cat(outs), torch.cat(ys)
            vloss = F.binary_cross_entropy_with_logits(out, yv).item()
            acc = ((out > 0).float() == yv).float().mean().item()
        print(f"fold {k} epoch {epoch} val {vloss:.4f} acc {acc:.3f} lr {onecycle.get_last_lr()[0]:.6f}")
        if vloss < best - 1e-4:
            best, best_state, bad = vloss, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= 2:
                print("early stop")
                break
    model.load_state_dict(best_state)
    print(f"fold {k} best {best:.4f} emb_b max norm {model.emb_b.weight.norm(dim=1).max().item():.4f}")
    return best


perm = torch.randperm(N)
folds = perm.chunk(3)
scores = []
for k in range(3):
    val_idx = folds[k]
    train_idx = torch.cat([folds[j] for j in range(3) if j != k])
    scores.append(run_fold(k, train_idx, val_idx))
print(f"cv {sum(scores) / len(scores):.4f} +- {torch.tensor(scores).std().item():.4f}")

# ReduceLROnPlateau on a plateauing metric
p = nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=1.0)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1,
                                                     threshold=0.01, cooldown=1, min_lr=0.05)
for i, metric in enumerate([1.0, 0.9, 0.895, 0.894, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]):
    plateau.step(metric)
    print(i, opt.param_groups[0]["lr"], plateau.num_bad_epochs, plateau.cooldown_counter)
print(plateau.state_dict()["best"], plateau.get_last_lr())
