"""A class-balanced sequence classifier's data pipeline and training loop: a map-style Dataset of
variable-length token sequences, WeightedRandomSampler driven by a seeded Generator wrapped in a
BatchSampler, a collate_fn that pads and builds masks, an IterableDataset that consults
get_worker_info (num_workers=0), random_split by fractions, ConcatDataset / Subset bookkeeping,
and a masked-mean-pooling classifier trained with gradient accumulation under OneCycleLR, then a
CyclicLR run on SGD with momentum cycling; prints batches, LRs, momenta and losses per step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              SequentialSampler, Subset, WeightedRandomSampler, get_worker_info,
                              random_split)

torch.manual_seed(0)
VOCAB, PAD, N_CLASSES = 20, 0, 3


class Sequences(Dataset):
    """Token sequences of lengths 2..7; the label is (sum of tokens) mod 3, skewed to class 0."""

    def __init__(self, n, gen):
        self.items = []
        for i in range(n):
            length = int(torch.randint(2, 8, (1,), generator=gen))
            toks = torch.randint(1, VOCAB, (length,), generator=gen)
            label = int(toks.sum()) % N_CLASSES if i % 3 == 0 else 0
            self.items.append((toks, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        toks, label = self.items[i]
        return {"tokens": toks, "label": label, "index": i}


def pad_collate(batch):
    lengths = torch.tensor([len(b["tokens"]) for b in batch])
    longest = int(lengths.max())
    tokens = torch.full((len(batch), longest), PAD, dtype=torch.long)
    for row, b in enumerate(batch):
        tokens[row, :len(b["tokens"])] = b["tokens"]
    mask = torch.arange(longest).unsqueeze(0) < lengths.unsqueeze(1)
    labels = torch.tensor([b["label"] for b in batch])
    return tokens, mask, labels, [b["index"] for b in batch]


class Stream(IterableDataset):
    """Yields (tokens, label) pairs; splits its range across workers when there are any."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        print("  stream worker info:", info)
        lo, hi = self.start, self.end
        if info is not None:
            per = int(math.ceil((hi - lo) / info.num_workers))
            lo = lo + info.id * per
            hi = min(lo + per, hi)
        for k in range(lo, hi):
            toks = torch.arange(k % 5 + 2) + k % VOCAB + 1
            yield {"tokens": toks.clamp(max=VOCAB - 1), "label": k % N_CLASSES, "index": k}


gen = torch.Generator().manual_seed(7)
full = Sequences(60, gen)
labels = torch.tensor([lab for _, lab in full.items])
print("class counts", torch.bincount(labels, minlength=N_CLASSES).tolist())

split_gen = torch.Generator().manual_seed(3)
train_set, val_set, test_set = random_split(full, [0.7, 0.2, 0.1], generator=split_gen)
print("split sizes", len(train_set), len(val_set), len(test_set))
print("train head indices", train_set.indices[:8])
print("val type", type(val_set).__name__, "dataset is full:", val_set.dataset is full)

extra = Subset(full, list(range(50, 60)))
both = ConcatDataset([val_set, extra])
print("concat len", len(both), "cumulative", both.cumulative_sizes)
print("concat[11] index", both[11]["index"], "concat[-1] index", both[-1]["index"])
try:
    both[len(both)]
except IndexError as e:
    print("IndexError:", e)
try:
    both[-len(both) - 1]
except ValueError as e:
    print("ValueError:", e)

# class-balanced sampling: each example weighted by the inverse frequency of its class
train_labels = labels[torch.tensor(train_set.indices)]
counts = torch.bincount(train_labels, minlength=N_CLASSES).float()
weights = (1.0 / counts)[train_labels]
print("weights dtype", weights.dtype, "sum", round(weights.sum().item(), 5))
sampler_gen = torch.Generator().manual_seed(11)
sampler = WeightedRandomSampler(weights, num_samples=24, replacement=True, generator=sampler_gen)
batches = BatchSampler(sampler, batch_size=5, drop_last=False)
print("len sampler", len(sampler), "len batches", len(batches))
loader = DataLoader(train_set, batch_sampler=batches, collate_fn=pad_collate)
print("len loader", len(loader), "batch_size attr", loader.batch_size,
      "drop_last attr", loader.drop_last)
drawn = []
for tokens, mask, y, idx in loader:
    drawn.extend(y.tolist())
print("sampled class counts", torch.bincount(torch.tensor(drawn), minlength=N_CLASSES).tolist())

no_repl = WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0], 4, replacement=False,
                                generator=torch.Generator().manual_seed(5))
print("without replacement", list(no_repl))
try:
    WeightedRandomSampler([0.5, 0.5], 3, replacement=False)
    list(WeightedRandomSampler([0.5, 0.5], 3, replacement=False))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    WeightedRandomSampler([0.5, 0.5], 0)
except ValueError as e:
    print("ValueError:", e)
try:
    BatchSampler(SequentialSampler(range(4)), batch_size=0, drop_last=False)
except ValueError as e:
    print("ValueError:", e)
try:
    DataLoader(train_set, batch_sampler=batches, batch_size=4)
except ValueError as e:
    print("ValueError:", e)

# the stream: no worker info in the main process
stream_loader = DataLoader(Stream(0, 7), batch_size=3, collate_fn=pad_collate)
for tokens, mask, y, idx in stream_loader:
    print("stream batch", tuple(tokens.shape), mask.sum(1).tolist(), y.tolist(), idx)
try:
    len(stream_loader)
except TypeError as e:
    print("TypeError:", e)
try:
    DataLoader(Stream(0, 3), shuffle=True)
except ValueError as e:
    print("ValueError:", e)


class Pooled(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 8, padding_idx=PAD)
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, N_CLASSES)

    def forward(self, tokens, mask):
        h = self.emb(tokens) * mask.unsqueeze(-1)
        pooled = h.sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.head(torch.tanh(self.norm(pooled)))


model = Pooled()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
ACCUM, EPOCHS = 2, 2
steps_per_epoch = math.ceil(len(loader) / ACCUM)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, epochs=EPOCHS,
                                            steps_per_epoch=steps_per_epoch, pct_start=0.4,
                                            anneal_strategy="linear", div_factor=10.0,
                                            final_div_factor=50.0)
print("initial lr", opt.param_groups[0]["lr"], "initial_lr", opt.param_groups[0]["initial_lr"],
      "betas", opt.param_groups[0]["betas"])
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
step = 0
for epoch in range(EPOCHS):
    model.train()
    opt.zero_grad(set_to_none=True)
    for i, (tokens, mask, y, idx) in enumerate(loader):
        logits = model(tokens, mask)
        loss = loss_fn(logits, y) / ACCUM
        loss.backward()
        if (i + 1) % ACCUM == 0 or i + 1 == len(loader):
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            print(f"epoch {epoch} step {step} batch {tuple(tokens.shape)}"
                  f" loss {loss.item() * ACCUM:.5f}"
                  f" norm {norm.item():.5f} lr {sched.get_last_lr()[0]:.6f}"
                  f" beta1 {opt.param_groups[0]['betas'][0]:.5f}")
print("emb pad row grad-free:", model.emb.weight[PAD].abs().sum().item())
print("sched state keys", sorted(k for k in sched.state_dict() if not k.startswith("_")))
try:
    sched.step()
except ValueError as e:
    print("ValueError:", e)

model.eval()
with torch.no_grad():
    val_loader = DataLoader(val_set, batch_size=4, shuffle=False, collate_fn=pad_collate)
    correct = total = 0
    for tokens, mask, y, idx in val_loader:
        pred = model(tokens, mask).argmax(1)
        correct += (pred == y).sum().item()
        total += len(y)
    print("val acc", correct, "/", total)

# CyclicLR with momentum cycling on SGD: triangular2 halves the amplitude each cycle
sgd = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
cyc = torch.optim.lr_scheduler.CyclicLR(sgd, base_lr=0.001, max_lr=0.01, step_size_up=3,
                                        step_size_down=2, mode="triangular2",
                                        base_momentum=0.8, max_momentum=0.95)
lrs, moms = [], []
for _ in range(12):
    sgd.step()
    cyc.step()
    lrs.append(round(sgd.param_groups[0]["lr"], 6))
    moms.append(round(sgd.param_groups[0]["momentum"], 6))
print("cyclic lrs", lrs)
print("cyclic moms", moms)
exp = torch.optim.lr_scheduler.CyclicLR(torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1),
                                        base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                                        gamma=0.9, cycle_momentum=False)
print("exp_range", [round(exp.get_last_lr()[0], 6)] +
      [round((exp.optimizer.step(), exp.step(), exp.get_last_lr()[0])[2], 6) for _ in range(6)])
try:
    torch.optim.lr_scheduler.CyclicLR(torch.optim.Adagrad(model.parameters()), 0.01, 0.1)
except ValueError as e:
    print("ValueError:", e)
print("final logits", model(*pad_collate([full[0], full[1]])[:2]).detach())
print("softmax grad_fn", F.softmax(model(*pad_collate([full[2]])[:2]), -1).grad_fn.name())
