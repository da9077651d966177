"""Knowledge distillation between two small CNNs: KL-divergence on temperature-softened logits
(log_target both ways), label-smoothed cross_entropy, mixup with a Beta draw and cutmix with a
random box, SGD with nesterov momentum under MultiStepLR, eval mode and inference_mode."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Beta

torch.manual_seed(0)


def cnn(width):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1), nn.Linear(2 * width, 5))


teacher, student = cnn(12), cnn(4)
teacher.eval()
print(sum(p.numel() for p in teacher.parameters()), sum(p.numel() for p in student.parameters()))
images = torch.randn(16, 3, 8, 8)
labels = torch.randint(0, 5, (16,))


def kd_loss(s_logits, t_logits, T):
    log_p = F.log_softmax(s_logits / T, dim=1)
    log_q = F.log_softmax(t_logits / T, dim=1)
    a = F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)
    b = F.kl_div(log_p, log_q.exp(), reduction="batchmean")
    return a * T * T, b * T * T


beta = Beta(torch.tensor(0.4), torch.tensor(0.4))


def mixup(x, y):
    lam = beta.sample()
    perm = torch.randperm(x.size(0))
    return lam * x + (1 - lam) * x[perm], y, y[perm], lam


def cutmix(x, y):
    lam = beta.sample().item()
    perm = torch.randperm(x.size(0))
    h, w = x.shape[2:]
    cut = int(h * (1 - lam) ** 0.5)
    cy, cx = torch.randint(0, h, (2,)).tolist()
    y0, y1 = max(cy - cut // 2, 0), min(cy + cut // 2, h)
    x0, x1 = max(cx - cut // 2, 0), min(cx + cut // 2, w)
    x = x.clone()
    x[:, :, y0:y1, x0:x1] = x[perm, :, y0:y1, x0:x1]
    lam = 1 - (y1 - y0) * (x1 - x0) / (h * w)
    return x, y, y[perm], lam


opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                      weight_decay=5e-4)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 5], gamma=0.2)
for step in range(7):
    student.train()
    if step % 2 == 0:
        x, ya, yb, lam = mixup(images, labels)
    else:
        x, ya, yb, lam = cutmix(images, labels)
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    kd, kd2 = kd_loss(s_logits, t_logits, T=4.0)
    ce = lam * F.cross_entropy(s_logits, ya, label_smoothing=0.1) + \
        (1 - lam) * F.cross_entropy(s_logits, yb, label_smoothing=0.1)
    loss = 0.6 * kd + 0.4 * ce
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} lam {float(lam):.4f} kd {kd.item():.5f} {kd2.item():.5f} "
          f"ce {ce.item():.5f} lr {sched.get_last_lr()[0]:.5f}")
print(loss.grad_fn.name(), kd.grad_fn.name(), ce.grad_fn.next_functions[0][0].name())
print(opt.state_dict()["param_groups"][0]["nesterov"], sched.state_dict()["milestones"])

student.eval()
with torch.inference_mode():
    s = student(images)
    t = teacher(images)
    print(s.requires_grad, s.is_inference(), t.shape)
    agree = (s.argmax(1) == t.argmax(1)).float().mean()
    acc = (s.argmax(1) == labels).float().mean()
    print(f"agree {agree.item():.4f} acc {acc.item():.4f}")
    probs = F.softmax(s / 2.0, dim=1)
    print(probs.sum(1).allclose(torch.ones(16)), probs.max(1).values.mean().item() > 0.2)
try:
    s.requires_grad_(True)
    (s * 2).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
print(F.cross_entropy(torch.zeros(2, 5), torch.tensor([1, 2]), label_smoothing=0.3))
print(F.kl_div(torch.zeros(3), torch.zeros(3), log_target=True, reduction="sum"))
smooth = F.cross_entropy(torch.randn(4, 5, requires_grad=True), labels[:4],
                         label_smoothing=0.2, reduction="none")
print(smooth.grad_fn.name(), smooth.shape)
