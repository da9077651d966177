"""CIFAR-style CNN: BatchNorm2d, Dropout, tensor-op augmentation, custom Dataset + collate_fn,
SGD+Nesterov with no-decay param groups, MultiStepLR, grad accumulation, clip_grad_value_,
EMA via AveragedModel, checkpoint save/load and resume."""
import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class ToyImages(Dataset):
    def __init__(self, n, train=True):
        g = torch.Generator().manual_seed(1 if train else 2)
        self.x = torch.randn(n, 3, 12, 12, generator=g)
        self.y = torch.randint(0, 4, (n,), generator=g)
        # make the labels learnable: add a class-dependent bias to one channel
        self.x[:, 0] += self.y.view(-1, 1, 1).float() * 0.5
        self.train = train

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        img = self.x[i]
        if self.train:
            if torch.rand(1).item() < 0.5:
                img = img.flip(-1)
            img = F.pad(img, (2, 2, 2, 2), mode="reflect")
            dx, dy = torch.randint(0, 5, (2,)).tolist()
            img = img[:, dy:dy + 12, dx:dx + 12]
        return img, int(self.y[i])


def collate(batch):
    imgs = torch.stack([b[0] for b in batch])
    labels = torch.tensor([b[1] for b in batch], dtype=torch.long)
    return imgs, labels


class Net(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(16, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0, 0.01)
        nn.init.zeros_(m.bias)


model = Net()
model.apply(init_weights)
print(model)

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim <= 1 else decay).append(p)
print(len(decay), len(no_decay))
opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4},
                       {"params": no_decay, "weight_decay": 0.0}],
                      lr=0.1, momentum=0.9, nesterov=True)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 3], gamma=0.1)
ema = torch.optim.swa_utils.AveragedModel(
    model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))

train_ds, test_ds = ToyImages(48), ToyImages(16, train=False)
train_loader = DataLoader(train_ds, batch_size=8, shuffle=True, collate_fn=collate)
test_loader = DataLoader(test_ds, batch_size=8, shuffle=False, collate_fn=collate)
accum = 2


def evaluate(net):
    net.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in test_loader:
            out = net(x)
            loss_sum += F.cross_entropy(out, y, reduction="sum").item()
            correct += (out.argmax(1) == y).sum().item()
            total += y.numel()
    return loss_sum / total, correct / total


def train_epoch(epoch):
    model.train()
    running = 0.0
    opt.zero_grad()
    for i, (x, y) in enumerate(train_loader):
        out = model(x)
        loss = F.cross_entropy(out, y, label_smoothing=0.1) / accum
        loss.backward()
        running += loss.item()
        if (i + 1) % accum == 0:
            nn.utils.clip_grad_value_(model.parameters(), 0.5)
            opt.step()
            opt.zero_grad(set_to_none=True)
            ema.update_parameters(model)
    sched.step()
    tl, ta = evaluate(model)
    el, ea = evaluate(ema)
    print(f"epoch {epoch} lr {sched.get_last_lr()[0]:.4f} train {running:.5f} "
          f"test {tl:.5f} acc {ta:.3f} ema {el:.5f} {ea:.3f}")


for epoch in range(2):
    train_epoch(epoch)

buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "ema": ema.state_dict(), "epoch": 2, "rng": torch.get_rng_state()}, buf)
print(sorted(ema.state_dict().keys())[:3], ema.n_averaged)
snapshot = copy.deepcopy(model.state_dict())
buf.seek(0)
ckpt = torch.load(buf)
print(sorted(ckpt["opt"]["state"].keys())[:4], ckpt["opt"]["param_groups"][0]["nesterov"])
print(ckpt["sched"]["milestones"], ckpt["sched"]["last_epoch"])

# resume into fresh objects
model = Net()
model.load_state_dict(ckpt["model"])
opt = torch.optim.SGD([{"params": [p for p in model.parameters() if p.ndim > 1], "weight_decay": 5e-4},
                       {"params": [p for p in model.parameters() if p.ndim <= 1], "weight_decay": 0.0}],
                      lr=0.1, momentum=0.9, nesterov=True)
opt.load_state_dict(ckpt["opt"])
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 3], gamma=0.1)
sched.load_state_dict(ckpt["sched"])
torch.set_rng_state(ckpt["rng"])
ema = torch.optim.swa_utils.AveragedModel(
    model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
ema.load_state_dict(ckpt["ema"])
print(all(torch.equal(snapshot[k], v) for k, v in model.state_dict().items()))
print([g["lr"] for g in opt.param_groups])
for epoch in range(2, 4):
    train_epoch(epoch)
torch.optim.swa_utils.update_bn(train_loader, ema)
print(f"ema bn mean {ema.module.features[1].running_mean.sum().item():.5f}")
print(evaluate(ema))
