# BatchNorm bookkeeping in a small CNN, as detection/classification repos do it: a cumulative
# moving average (momentum=None), "precise BN" (re-estimating running stats over a few
# batches after training), freezing BN layers while fine-tuning (eval() on BN modules only,
# requires_grad off for their affine params), track_running_stats=False layers and
# InstanceNorm with running stats, and the eval-vs-train output gap that motivates it all.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8, momentum=None)
        self.norm3 = nn.InstanceNorm2d(8, affine=True, track_running_stats=True)
        self.head = nn.Linear(8, 4)
        self.bn_head = nn.BatchNorm1d(4, track_running_stats=False)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = self.norm3(x)
        x = F.adaptive_max_pool2d(x, 1).flatten(1)
        return self.bn_head(self.head(x))


net = Net()
print(net.bn2, net.bn_head, net.norm3, sep="\n")
print("bn_head buffers", net.bn_head.running_mean, net.bn_head.num_batches_tracked)
print("buffers", [(n, tuple(b.shape), b.dtype) for n, b in net.named_buffers()])

data = [(torch.randn(6, 3, 8, 8) * 2 + 0.5, torch.randint(0, 4, (6,))) for _ in range(4)]
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    net.train()
    for x, y in data:
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.5f} tracked {net.bn1.num_batches_tracked.item()} "
          f"{int(net.bn2.num_batches_tracked)} {net.norm3.num_batches_tracked.item()}")
print("bn1 running_mean", net.bn1.running_mean[:4])
print("bn2 running_var", net.bn2.running_var[:4])
print("in running_mean", net.norm3.running_mean[:4])

# momentum=None is the plain average of the batch statistics seen so far
probe = nn.BatchNorm1d(3, momentum=None)
batches = [torch.randn(5, 3) + i for i in range(3)]
for b in batches:
    probe(b)
means = torch.stack([b.mean(0) for b in batches]).mean(0)
variances = torch.stack([b.var(0) for b in batches]).mean(0)
print("cma mean ok", torch.allclose(probe.running_mean, means, atol=1e-6),
      "var ok", torch.allclose(probe.running_var, variances, atol=1e-6))

# train/eval gap, then precise BN: reset and recompute the statistics with a cumulative average
x_eval = torch.cat([x for x, _ in data])
net.eval()
with torch.no_grad():
    before = net(x_eval)
    net.train()
    train_out = net(x_eval)
    net.eval()
print("eval-train gap", f"{(before - train_out).abs().mean().item():.5f}")

bns = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
print("bn layers", [type(m).__name__ for m in bns], [m.track_running_stats for m in bns])
saved_momentum = [m.momentum for m in bns]
for m in bns:
    if m.track_running_stats:
        m.reset_running_stats()
        m.momentum = None
print("after reset", net.bn1.running_mean.sum().item(), net.bn1.running_var.sum().item(),
      net.bn1.num_batches_tracked)
net.train()
with torch.no_grad():
    for x, _ in data:
        net(x)
for m, mom in zip(bns, saved_momentum):
    m.momentum = mom
net.eval()
with torch.no_grad():
    after = net(x_eval)
print("precise bn tracked", net.bn1.num_batches_tracked.item(), "momentum back", net.bn1.momentum)
print("eval change", f"{(after - before).abs().mean().item():.5f}")

# freeze BN for fine-tuning: keep stats, stop affine updates


def freeze_bn(module):
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.eval()
            for p in m.parameters():
                p.requires_grad_(False)


net.train()
net.zero_grad(set_to_none=True)
freeze_bn(net)
print("modes", [(n, m.training) for n, m in net.named_children()])
frozen_mean = net.bn1.running_mean.clone()
trainable = [p for p in net.parameters() if p.requires_grad]
print("trainable", len(trainable), sum(p.numel() for p in trainable))
ft_opt = torch.optim.SGD(trainable, lr=0.01)
for x, y in data[:2]:
    ft_opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    ft_opt.step()
print("ft loss", round(loss.item(), 5), "bn1 stats unchanged", torch.equal(frozen_mean, net.bn1.running_mean))
print("bn1 weight grad", net.bn1.weight.grad, "conv1 grad norm", f"{net.conv1.weight.grad.norm():.5f}")

# functional form with explicit buffers, and the state_dict entries
rm, rv = torch.zeros(4), torch.ones(4)
z = torch.randn(10, 4) * 3 + 1
out = F.batch_norm(z, rm, rv, training=True, momentum=0.2)
print("F.batch_norm", out.mean(0).abs().max().item() < 1e-6, rm, rv)
out_eval = F.batch_norm(z, rm, rv, weight=torch.full((4,), 2.0), bias=torch.ones(4), training=False)
print("eval out", out_eval[0])
sd = net.state_dict()
print([k for k in sd if "bn" in k or "norm" in k])
print("num_batches_tracked dtype", sd["bn2.num_batches_tracked"].dtype, sd["bn2.num_batches_tracked"])
