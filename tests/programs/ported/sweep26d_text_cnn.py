"""Kim-style text CNN sentence classifier: pretrained word vectors loaded with
nn.Embedding.from_pretrained(freeze=False, padding_idx=0), parallel Conv1d filters of widths
2/3/4 over time, max-over-time pooling, dropout, label-smoothed cross-entropy, and an
evaluation pass that builds a confusion matrix with torch.bincount and per-class
precision/recall."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
VOCAB, EMB, CLASSES, MAXLEN = 30, 12, 3, 9
PAD = 0


def make_corpus(n, g):
    # each class draws its tokens mostly from its own slice of the vocabulary
    labels = torch.randint(0, CLASSES, (n,), generator=g)
    lengths = torch.randint(4, MAXLEN + 1, (n,), generator=g)
    base = 1 + labels * 9
    toks = base.unsqueeze(1) + torch.randint(0, 9, (n, MAXLEN), generator=g)
    noise = torch.randint(1, VOCAB, (n, MAXLEN), generator=g)
    swap = torch.rand(n, MAXLEN, generator=g) < 0.25
    toks = torch.where(swap, noise, toks)
    pad_mask = torch.arange(MAXLEN).unsqueeze(0) >= lengths.unsqueeze(1)
    toks = toks.masked_fill(pad_mask, PAD)
    return toks, labels, lengths


class TextCNN(nn.Module):
    def __init__(self, vectors, widths=(2, 3, 4), n_filters=8, n_classes=CLASSES, p=0.3):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(vectors, freeze=False, padding_idx=PAD)
        self.convs = nn.ModuleList(
            [nn.Conv1d(vectors.size(1), n_filters, kernel_size=w) for w in widths])
        self.dropout = nn.Dropout(p)
        self.fc = nn.Linear(n_filters * len(widths), n_classes)

    def forward(self, x):
        emb = self.embedding(x)            # (B, T, E)
        emb = emb.permute(0, 2, 1)         # (B, E, T) for Conv1d
        pooled = []
        for conv in self.convs:
            h = F.relu(conv(emb))          # (B, F, T - w + 1)
            pooled.append(h.max(dim=2)[0])  # max over time
        feats = torch.cat(pooled, dim=1)
        return self.fc(self.dropout(feats))


g = torch.Generator().manual_seed(1234)
train_x, train_y, train_len = make_corpus(96, g)
test_x, test_y, _ = make_corpus(48, g)
print("train tokens", train_x.shape, train_x.dtype, "pad fraction",
      round((train_x == PAD).float().mean().item(), 4))
print("first row", train_x[0].tolist(), "len", train_len[0].item(), "label", train_y[0].item())

vectors = torch.randn(VOCAB, EMB, generator=g) * 0.5
model = TextCNN(vectors)
print(model)
print("embedding padding_idx", model.embedding.padding_idx,
      "requires_grad", model.embedding.weight.requires_grad)
print("pad row is the pretrained one:", torch.equal(model.embedding.weight[PAD], vectors[PAD]))
print("state_dict keys", list(model.state_dict().keys()))
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("trainable parameters", n_params)

loader = DataLoader(TensorDataset(train_x, train_y), batch_size=32, shuffle=True,
                    generator=torch.Generator().manual_seed(7))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
pad_before = model.embedding.weight[PAD].detach().clone()
for epoch in range(4):
    model.train()
    total, correct, seen = 0.0, 0, 0
    for xb, yb in loader:
        logits = model(xb)
        loss = F.cross_entropy(logits, yb, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * xb.size(0)
        correct += (logits.argmax(1) == yb).sum().item()
        seen += xb.size(0)
    print(f"epoch {epoch} loss {total / seen:.4f} acc {correct / seen:.3f}")
print("last loss grad_fn", type(loss.grad_fn).__name__ if loss.grad_fn else None,
      loss.grad_fn.name())
grad_pad = model.embedding.weight.grad[PAD]
print("padding row gradient is zero:", bool((grad_pad == 0).all()),
      "pad row unchanged:", torch.allclose(model.embedding.weight[PAD], pad_before))

# plain vs smoothed loss on the same logits
with torch.no_grad():
    logits = model.eval()(test_x)
    plain = F.cross_entropy(logits, test_y)
    smooth = F.cross_entropy(logits, test_y, label_smoothing=0.1)
    smooth_sum = F.cross_entropy(logits, test_y, label_smoothing=0.1, reduction="sum")
print(f"test ce {plain.item():.4f} smoothed {smooth.item():.4f} sum {smooth_sum.item():.4f}")

preds = logits.argmax(dim=1)
cm = torch.bincount(test_y * CLASSES + preds, minlength=CLASSES * CLASSES).view(CLASSES, CLASSES)
print("confusion matrix (rows=true)\n", cm)
print("cm dtype", cm.dtype, "total", cm.sum().item())
tp = cm.diag().float()
precision = tp / cm.sum(0).clamp(min=1).float()
recall = tp / cm.sum(1).clamp(min=1).float()
f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
print("precision", precision)
print("recall", recall)
print("macro f1", round(f1.mean().item(), 4))
print("class counts", torch.bincount(test_y), "weighted counts",
      torch.bincount(test_y, weights=torch.full((48,), 0.5)))

# a batch of a single short sentence: shorter than the widest filter after padding is removed
short = torch.tensor([[3, 5, 7, 0, 0, 0, 0, 0, 0]])
print("short sentence probs", F.softmax(model(short), dim=-1))
try:
    model.convs[2](model.embedding(torch.tensor([[3, 5, 7]])).permute(0, 2, 1))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.bincount(torch.tensor([1, -1, 2]))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    model.embedding(torch.tensor([[VOCAB]]))
except IndexError as e:
    print("IndexError:", e)
