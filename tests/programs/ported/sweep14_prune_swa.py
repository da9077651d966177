"""Pruning and weight averaging: torch.nn.utils.prune (l1/random unstructured, global, ln
structured, remove; weight_orig and weight_mask in named_parameters/named_buffers, the forward
pre-hook), torch.optim.swa_utils (AveragedModel plain, with a custom avg_fn and with
get_ema_multi_avg_fn, SWALR, update_bn over a DataLoader), parameters_to_vector and back."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, prune, vector_to_parameters
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
prune.l1_unstructured(net[0], name="weight", amount=0.3)
print("params", [n for n, _ in net[0].named_parameters()])
print("buffers", [n for n, _ in net[0].named_buffers()])
print("zeros", int((net[0].weight == 0).sum()), int(net[0].weight_mask.sum()))
print("hooks", [type(h).__name__ for h in net[0]._forward_pre_hooks.values()])
prune.random_unstructured(net[3], name="bias", amount=0.5)
print("bias mask", net[3].bias_mask.tolist())
prune.ln_structured(net[3], name="weight", amount=0.5, n=2, dim=0)
print("rows kept", (net[3].weight.abs().sum(1) > 0).tolist())
prune.l1_unstructured(net[0], name="weight", amount=1)
print("zeros after repeat", int((net[0].weight == 0).sum()),
      type(net[0]._forward_pre_hooks[next(iter(net[0]._forward_pre_hooks))]).__name__)
print("is_pruned", prune.is_pruned(net), prune.is_pruned(net[1]))

x = torch.randn(16, 4)
y = torch.randint(0, 2, (16,))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(2):
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", int((net[0].weight == 0).sum()),
          net[0].weight.grad_fn.name(), f"{net[0].weight_orig.grad.abs().sum().item():.5f}")
prune.remove(net[0], "weight")
prune.remove(net[3], "weight")
prune.remove(net[3], "bias")
print("after remove", [n for n, _ in net.named_parameters()], [n for n, _ in net.named_buffers()])

other = nn.Sequential(nn.Linear(4, 6), nn.Linear(6, 3))
prune.global_unstructured([(other[0], "weight"), (other[1], "weight")],
                          pruning_method=prune.L1Unstructured, amount=10)
print("global zeros", int((other[0].weight == 0).sum()), int((other[1].weight == 0).sum()))
try:
    prune.l1_unstructured(other[1], name="bias", amount=1.5)
except (ValueError, TypeError) as e:
    print(type(e).__name__, e)

swa = AveragedModel(net)
ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))
custom = AveragedModel(net, avg_fn=lambda avg, p, n: 0.5 * avg + 0.5 * p)
sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="cos")
loader = DataLoader(TensorDataset(x, y), batch_size=8)
for epoch in range(3):
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for avg in (swa, ema, custom):
        avg.update_parameters(net)
    sched.step()
    print("epoch", epoch, f"{loss.item():.5f}", f"lr={sched.get_last_lr()[0]:.5f}",
          int(swa.n_averaged), f"{swa.module[0].weight.sum().item():.5f}",
          f"{ema.module[0].weight.sum().item():.5f}", f"{custom.module[3].weight.sum().item():.5f}")
update_bn(loader, swa)
bn = swa.module[1]
print("bn", f"{bn.running_mean.sum().item():.5f}", f"{bn.running_var.sum().item():.5f}",
      int(bn.num_batches_tracked), bn.momentum)
swa.eval()
print("swa out", swa(x[:2]).shape, f"{swa(x).sum().item():.4f}")

vec = parameters_to_vector(net.parameters())
print("vec", vec.shape, vec.grad_fn.name() if vec.grad_fn else None, f"{vec.sum().item():.5f}")
vector_to_parameters(torch.zeros_like(vec), net.parameters())
print("zeroed", f"{sum(p.abs().sum().item() for p in net.parameters()):.1f}", net[0].weight.is_leaf)
try:
    vector_to_parameters(vec[:-1], net.parameters())
except RuntimeError as e:
    print("RuntimeError", str(e)[:60])
