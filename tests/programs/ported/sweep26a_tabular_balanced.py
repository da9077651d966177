"""Imbalanced tabular classification (a fraud-detection style toy): TensorDataset split by
random_split with fractions and a seeded generator, a Subset for a quick sanity run, a
WeightedRandomSampler built from the train split's class counts, an MLP whose square hidden
layer is kept orthogonal (parametrizations.orthogonal) and whose output layer uses
parametrizations.weight_norm; a checkpoint of the parametrized state_dict reloaded into a
fresh model, then the parametrizations baked in with remove_parametrizations."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, parametrize
from torch.utils.data import DataLoader, Subset, TensorDataset, WeightedRandomSampler, random_split

torch.manual_seed(0)
N, F_IN, H = 120, 6, 8
X = torch.randn(N, F_IN)
y = ((X[:, 0] + 0.5 * X[:, 1] * X[:, 2]) > 1.2).long()     # roughly 1 positive in 7
print("positives", int(y.sum()), "of", N)
ds = TensorDataset(X, y)

gen = torch.Generator().manual_seed(42)
train, val, test = random_split(ds, [0.7, 0.15, 0.15], generator=gen)
print("split", len(train), len(val), len(test), type(train).__name__, train.indices[:5])
try:
    random_split(ds, [100, 30])
except ValueError as e:
    print("ValueError:", e)

train_y = y[train.indices]
counts = torch.bincount(train_y, minlength=2)
class_w = 1.0 / counts.float()
sample_w = class_w[train_y]
print("train counts", counts.tolist(), "weights", class_w)
sampler = WeightedRandomSampler(sample_w, num_samples=len(train), replacement=True,
                                generator=torch.Generator().manual_seed(1))
loader = DataLoader(train, batch_size=18, sampler=sampler, drop_last=True)
drawn = torch.cat([yb for _, yb in loader])
print("sampled batches", len(loader), "sampled positives", int(drawn.sum()), "of", drawn.numel())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(F_IN, H)
        self.hidden = parametrizations.orthogonal(nn.Linear(H, H))
        self.out = parametrizations.weight_norm(nn.Linear(H, 2))

    def forward(self, x):
        h = F.silu(self.inp(x))
        h = F.silu(self.hidden(h)) + h
        return self.out(h)


model = Net()
print(model.hidden)
print(list(model.state_dict().keys()))
W = model.hidden.weight
print("orthogonal", torch.allclose(W @ W.T, torch.eye(H), atol=1e-5), W.grad_fn is not None)
print("weight_norm g", model.out.parametrizations.weight.original0.shape,
      model.out.parametrizations.weight.original1.shape)

# a quick overfit run on a tiny Subset to check the pipeline learns at all
tiny = Subset(train, list(range(18)))
xb = torch.stack([tiny[i][0] for i in range(len(tiny))])
yb = torch.stack([tiny[i][1] for i in range(len(tiny))])
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for it in range(10):
    loss = F.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("tiny subset loss", round(loss.item(), 4), loss.grad_fn.name())
print("still orthogonal", torch.allclose(model.hidden.weight @ model.hidden.weight.T, torch.eye(H), atol=1e-4))

model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=1e-4)
val_x, val_y = X[val.indices], y[val.indices]
for epoch in range(4):
    model.train()
    total = 0.0
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(yb)
    model.eval()
    with torch.no_grad():
        pred = model(val_x).argmax(1)
    tp = int(((pred == 1) & (val_y == 1)).sum())
    print(f"epoch {epoch} train {total / (len(loader) * 18):.4f} val acc "
          f"{(pred == val_y).float().mean():.3f} tp {tp} predicted+ {int(pred.sum())}")

with parametrize.cached():
    a = model.hidden.weight
    b = model.hidden.weight
print("cached same object", a is b)

state = model.state_dict()
fresh = Net()
print(fresh.load_state_dict(state))
test_x = X[test.indices]
with torch.no_grad():
    print("reloaded equal", torch.allclose(fresh(test_x), model(test_x)))
parametrize.remove_parametrizations(fresh.hidden, "weight", leave_parametrized=True)
parametrize.remove_parametrizations(fresh.out, "weight")
print(type(fresh.hidden).__name__, parametrize.is_parametrized(fresh.hidden),
      parametrize.is_parametrized(model.hidden), sorted(fresh.state_dict().keys()))
with torch.no_grad():
    probs = F.softmax(fresh(test_x), dim=1)[:, 1]
print("baked equal", torch.allclose(probs, F.softmax(model(test_x), 1)[:, 1], atol=1e-6))
print("test probs", probs[:6])
try:
    parametrize.remove_parametrizations(fresh.hidden, "weight")
except ValueError as e:
    print("ValueError:", e)
