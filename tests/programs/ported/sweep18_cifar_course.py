"""A course-style CIFAR-like CNN: nn.Sequential with BatchNorm2d and Dropout2d, model.apply with
kaiming/xavier inits, channels_last inputs, label smoothing, MultiStepLR, running accuracy,
eval under inference_mode, a confusion matrix through bincount, the model's repr and a
parameter count."""
import torch
import torch.nn as nn

torch.manual_seed(0)
classes = 3
model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
    nn.MaxPool2d(2), nn.Dropout2d(0.25),
    nn.Flatten(), nn.Linear(4 * 4 * 4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, classes))


def init_fn(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.constant_(m.bias, 0.01)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


model.apply(init_fn)
print(model)
n_params = sum(p.numel() for p in model.parameters())
n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"params: {n_params} trainable: {n_train}")
model = model.to(memory_format=torch.channels_last)
print(model[0].weight.is_contiguous(memory_format=torch.channels_last))

criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 2], gamma=0.1)
data = torch.randn(3, 6, 3, 8, 8)
labels = torch.randint(0, classes, (3, 6))

for epoch in range(3):
    model.train()
    correct, total, running = 0, 0, 0.0
    for x, y in zip(data, labels):
        x = x.to(memory_format=torch.channels_last)
        opt.zero_grad(set_to_none=True)
        out = model(x)
        loss = criterion(out, y)
        loss.backward()
        opt.step()
        running += loss.item() * x.size(0)
        pred = out.argmax(dim=1)
        correct += pred.eq(y).sum().item()
        total += y.size(0)
    sched.step()
    print(f"epoch {epoch} loss {running / total:.4f} acc {100.0 * correct / total:.1f}% "
          f"lr {sched.get_last_lr()[0]:.4f}")
print(out.grad_fn.name(), x.is_contiguous(), x.is_contiguous(memory_format=torch.channels_last))
print(model[1].running_mean, model[1].num_batches_tracked)

model.eval()
with torch.inference_mode():
    x = data.flatten(0, 1).contiguous(memory_format=torch.channels_last)
    logits = model(x)
    probs = torch.softmax(logits, dim=1)
    conf, pred = probs.max(dim=1)
    y = labels.flatten()
    print(logits.requires_grad, logits.is_inference(), pred.dtype, conf.shape)
    cm = torch.bincount(y * classes + pred, minlength=classes * classes).reshape(classes, classes)
    print(cm)
    print("acc", (pred == y).float().mean().item(), "per-class",
          (cm.diag() / cm.sum(1).clamp(min=1)).tolist())
    top2 = logits.topk(2, dim=1).indices
    print("top2", (top2 == y[:, None]).any(dim=1).sum().item())
try:
    logits.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
