"""A "beginner" CIFAR-style image classifier on synthetic data: hand-written tensor transforms
(per-channel normalize, random crop with zero padding via F.pad + slicing, horizontal flip by
torch.flip, all drawn from a seeded Generator), a small CNN built with nn.Sequential over an
OrderedDict, CrossEntropyLoss(label_smoothing=0.1), SGD with nesterov momentum and weight decay,
MultiStepLR, evaluation under torch.no_grad with argmax, a confusion matrix via torch.bincount,
per-class accuracy, top-k accuracy via topk, and a model summary (repr, parameter counts,
state_dict keys and shapes)."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
gen = torch.Generator().manual_seed(7)
N_CLASSES, N_TRAIN, N_TEST, SIZE = 4, 48, 24, 12


def make_split(n, g):
    """Class k puts a brighter blob in quadrant k, plus noise."""
    labels = torch.randint(0, N_CLASSES, (n,), generator=g)
    images = torch.rand(n, 3, SIZE, SIZE, generator=g) * 0.5
    half = SIZE // 2
    for i, k in enumerate(labels.tolist()):
        r, c = divmod(k, 2)
        images[i, :, r * half:(r + 1) * half, c * half:(c + 1) * half] += 0.6
    return images, labels


train_x, train_y = make_split(N_TRAIN, gen)
test_x, test_y = make_split(N_TEST, gen)
mean = train_x.mean(dim=(0, 2, 3))
std = train_x.std(dim=(0, 2, 3))
print("mean", mean, "std", std)
print("class counts", torch.bincount(train_y, minlength=N_CLASSES).tolist())


def normalize(x):
    return (x - mean[:, None, None]) / std.view(3, 1, 1)


def random_crop(x, pad, g):
    """x: (N, C, H, W); pad with zeros then cut a random SIZE x SIZE window per image."""
    padded = F.pad(x, (pad, pad, pad, pad), mode="constant", value=0.0)
    offsets = torch.randint(0, 2 * pad + 1, (x.shape[0], 2), generator=g)
    out = torch.empty_like(x)
    for i, (dy, dx) in enumerate(offsets.tolist()):
        out[i] = padded[i, :, dy:dy + SIZE, dx:dx + SIZE]
    return out


def random_hflip(x, g):
    flip = torch.rand(x.shape[0], generator=g) < 0.5
    x = x.clone()
    x[flip] = torch.flip(x[flip], dims=[3])
    return x, flip


def augment(x, g):
    x = random_crop(x, 2, g)
    x, flipped = random_hflip(x, g)
    return normalize(x), flipped


aug, flipped = augment(train_x[:4], gen)
print("aug", aug.shape, aug.dtype, flipped.tolist(), f"{aug.mean().item():.5f}")
print("pad shape", F.pad(train_x[:1], (2, 2, 2, 2)).shape,
      F.pad(train_x[:1], (1, 0, 0, 3), value=-1.0)[0, 0, -1, :3])

model = nn.Sequential(OrderedDict([
    ("conv1", nn.Conv2d(3, 8, kernel_size=3, padding=1)),
    ("bn1", nn.BatchNorm2d(8)),
    ("relu1", nn.ReLU(inplace=True)),
    ("pool1", nn.MaxPool2d(2)),
    ("conv2", nn.Conv2d(8, 16, 3, padding=1, bias=False)),
    ("bn2", nn.BatchNorm2d(16)),
    ("relu2", nn.ReLU(inplace=True)),
    ("pool2", nn.AdaptiveAvgPool2d((1, 1))),
    ("flatten", nn.Flatten()),
    ("dropout", nn.Dropout(0.1)),
    ("fc", nn.Linear(16, N_CLASSES)),
]))
print(model)
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print("params", total, trainable)
for name, tensor in model.state_dict().items():
    print(" ", name, tuple(tensor.shape), tensor.dtype)
print("conv1 via attr", model.conv1.weight.shape, "via index", model[0] is model.conv1)
print("children", [n for n, _ in model.named_children()][:4], len(model))

criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                            weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 4], gamma=0.1)
print(optimizer)

BATCH = 16
for epoch in range(5):
    model.train()
    perm = torch.randperm(N_TRAIN, generator=gen)
    running, correct, seen = 0.0, 0, 0
    for start in range(0, N_TRAIN, BATCH):
        idx = perm[start:start + BATCH]
        xb, _ = augment(train_x[idx], gen)
        yb = train_y[idx]
        logits = model(xb)
        loss = criterion(logits, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
        correct += (logits.argmax(dim=1) == yb).sum().item()
        seen += xb.size(0)
    scheduler.step()
    print(f"epoch {epoch} loss {running / seen:.5f} acc {correct / seen:.4f} "
          f"lr {scheduler.get_last_lr()[0]:.6f} bn1_rm {model.bn1.running_mean[:2].tolist()}")
    if epoch == 0:
        print("loss grad_fn", loss.grad_fn.name(), "logits", logits.grad_fn.name())
        print("fc grad norm", f"{model.fc.weight.grad.norm().item():.5f}")
        print("momentum buf", optimizer.state[model.fc.weight]["momentum_buffer"].shape)

model.eval()
with torch.no_grad():
    logits = model(normalize(test_x))
    probs = F.softmax(logits, dim=1)
    preds = logits.argmax(dim=1)
print("eval requires_grad", logits.requires_grad, logits.grad_fn)
print("preds", preds.tolist())
print("probs[0]", probs[0], probs.sum(1)[:3])
conf = torch.bincount(test_y * N_CLASSES + preds, minlength=N_CLASSES ** 2)
conf = conf.reshape(N_CLASSES, N_CLASSES)
print("confusion\n", conf)
per_class = conf.diag().float() / conf.sum(1).clamp(min=1).float()
print("per-class acc", per_class)
print("overall acc", (preds == test_y).float().mean().item())
for k in (1, 2, 3):
    topk = logits.topk(k, dim=1).indices
    hit = (topk == test_y.unsqueeze(1)).any(dim=1)
    print(f"top-{k}", hit.float().mean().item(), topk.shape)
values, indices = torch.topk(probs, 2, dim=1, largest=True, sorted=True)
print("top2 vals", values[:3], indices[:3])
print("smallest", torch.topk(probs[0], 2, largest=False))

# the same loss without smoothing, by hand, as a sanity check
with torch.no_grad():
    plain = F.cross_entropy(logits, test_y)
    logp = F.log_softmax(logits, dim=1)
    smooth = 0.1
    manual = -(1 - smooth) * logp.gather(1, test_y[:, None]).mean() - smooth * logp.mean()
    print("ce", f"{plain.item():.5f}", "smoothed", f"{criterion(logits, test_y).item():.5f}",
          "manual", f"{manual.item():.5f}")
    print("ce sum", F.cross_entropy(logits, test_y, reduction="sum").item(),
          "none", F.cross_entropy(logits, test_y, reduction="none", label_smoothing=0.2).shape)
    soft = F.one_hot(test_y, N_CLASSES).float() * 0.9 + 0.025
    print("soft targets", f"{F.cross_entropy(logits, soft).item():.5f}")

# typical beginner mistakes
try:
    nn.CrossEntropyLoss(label_smoothing=1.5)(logits, test_y)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    criterion(logits, test_y.float())
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
try:
    torch.bincount(torch.tensor([1, -1, 2]))
except RuntimeError as e:
    print("RuntimeError", e)
try:
    torch.bincount(torch.tensor([[1, 2]]))
except RuntimeError as e:
    print("RuntimeError", e)
try:
    logits.topk(5, dim=1)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    model(test_x[0])
except (RuntimeError, ValueError) as e:
    print(type(e).__name__, e)
try:
    torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True)
except ValueError as e:
    print("ValueError", e)
print("bincount weights", torch.bincount(torch.tensor([0, 1, 1, 3]),
                                         weights=torch.tensor([0.5, 1.0, 2.0, 0.25])))
print("flip", torch.flip(torch.arange(6).view(2, 3), [0, 1]), torch.arange(4).flip(0))
print("fliplr", torch.fliplr(torch.arange(6).view(2, 3)))
print("state keys", list(optimizer.state_dict()["state"].keys())[:3],
      optimizer.state_dict()["param_groups"][0]["nesterov"])
print("sched", scheduler.state_dict()["milestones"], scheduler.last_epoch)
