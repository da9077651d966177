"""Memory-saving training loop: activation checkpointing (torch.utils.checkpoint.checkpoint with
use_reentrant=False and True, selective checkpointing through a policy function,
checkpoint_sequential), gradient clipping by value and by norm (clip_grad_value_,
clip_grad_norm_ with its returned total norm, get_total_norm and clip_grads_with_norm_), a
hand-written linear warmup through LambdaLR, then stochastic weight averaging: AveragedModel,
SWALR annealing and update_bn over a DataLoader."""
import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.checkpoint import (CheckpointPolicy, checkpoint, checkpoint_sequential,
                                    create_selective_checkpoint_contexts)
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.bn = nn.BatchNorm1d(2 * d)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(self.drop(F.gelu(self.bn(self.fc1(x)))))


class Net(nn.Module):
    def __init__(self, d=6, n_blocks=3, reentrant=False):
        super().__init__()
        self.inp = nn.Linear(4, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(n_blocks))
        self.out = nn.Linear(d, 3)
        self.reentrant = reentrant

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            if self.training:
                h = checkpoint(blk, h, use_reentrant=self.reentrant)
            else:
                h = blk(h)
        return self.out(h)


x = torch.randn(32, 4)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True,
                    generator=torch.Generator().manual_seed(1))

# checkpointed and plain forward give the same gradients: the recomputation replays the
# dropout masks because the RNG state is stashed (preserve_rng_state defaults to True)
net = Net()
torch.manual_seed(5)
out = net(x[:16])
print("out", out.shape, out.grad_fn.name())
out.sum().backward()
g_ckpt = [p.grad.clone() for p in net.parameters()]
net.zero_grad()
torch.manual_seed(5)
plain = net.out(net.blocks[2](net.blocks[1](net.blocks[0](net.inp(x[:16])))))
plain.sum().backward()
print("same out", torch.allclose(out, plain), f"{plain.sum().item():.5f}")
print("same grads", all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(g_ckpt, net.parameters())))
net.zero_grad(set_to_none=True)

# the reentrant variant needs an input that requires grad for parameters to get gradients
r = Net(reentrant=True)
r.load_state_dict(net.state_dict())
inp = x[:16].clone().requires_grad_()
r(inp).pow(2).mean().backward()
print("reentrant", inp.grad.shape, r.inp.weight.grad is not None,
      f"{r.blocks[0].fc1.weight.grad.abs().sum().item():.5f}")

# selective checkpointing: keep the matmul results, recompute the cheap pointwise ops
def keep_matmuls(ctx, op, *args, **kwargs):
    if op.name() in ("aten::mm", "aten::addmm"):
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


sac = functools.partial(create_selective_checkpoint_contexts, keep_matmuls)
blk = r.blocks[0]
h_in = r.inp(x[:16]).detach().requires_grad_()
torch.manual_seed(7)
sel = checkpoint(blk, h_in, use_reentrant=False, context_fn=sac)
sel.square().mean().backward()
g_sel = h_in.grad.clone()
h_in.grad = None
torch.manual_seed(7)
blk(h_in).square().mean().backward()
print("selective", sel.grad_fn.name(), torch.allclose(g_sel, h_in.grad, atol=1e-6),
      f"{g_sel.abs().sum().item():.5f}", list(CheckpointPolicy)[:2])
try:
    checkpoint(blk, h_in, use_reentrant=True, context_fn=sac)
except ValueError as e:
    print("ValueError:", e)
try:
    create_selective_checkpoint_contexts("mm")
except TypeError as e:
    print("TypeError:", e)

# the same blocks as one Sequential, checkpointed two segments at a time
seq = nn.Sequential(*r.blocks)
h0 = r.inp(x[:16]).detach()
s_out = checkpoint_sequential(seq, 2, h0, use_reentrant=False)
r.zero_grad()
s_out.sum().backward()
print("seq", s_out.shape, s_out.grad_fn.name(), f"{seq[0].fc1.weight.grad.norm().item():.5f}",
      f"{s_out.sum().item():.5f}", r.inp.weight.grad)

# clipping helpers on hand-made gradients
ps = [nn.Parameter(torch.zeros(3)), nn.Parameter(torch.zeros(2, 2))]
ps[0].grad = torch.tensor([3.0, -4.0, 0.5])
ps[1].grad = torch.tensor([[0.1, -2.5], [1.0, 0.0]])
torch.nn.utils.clip_grad_value_(ps, clip_value=1.0)
print("by value", ps[0].grad.tolist(), ps[1].grad.tolist())
total = torch.nn.utils.clip_grad_norm_(ps, max_norm=1.0)
print("total", total, f"{torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in ps])).item():.5f}")
inf_norm = torch.nn.utils.clip_grad_norm_(ps, max_norm=0.5, norm_type=math.inf)
print("inf norm", f"{inf_norm.item():.5f}", ps[0].grad)
grads = [p.grad for p in ps]
tn = torch.nn.utils.get_total_norm(grads, norm_type=2.0)
torch.nn.utils.clip_grads_with_norm_(ps, max_norm=0.25, total_norm=tn)
print("two-step", f"{tn.item():.5f}", f"{torch.nn.utils.get_total_norm([p.grad for p in ps]).item():.5f}")
ps[0].grad[1] = float("nan")
try:
    torch.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:90])

# training: warmup then cosine via one LambdaLR, clipping every step
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
warmup, total_steps = 2, 4


def lr_lambda(step):
    if step < warmup:
        return (step + 1) / warmup
    t = (step - warmup) / max(1, total_steps - warmup)
    return 0.5 * (1 + math.cos(math.pi * t))


sched = LambdaLR(opt, lr_lambda)
step = 0
for epoch in range(2):
    for xb, yb in loader:
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
        torch.nn.utils.clip_grad_value_(net.out.parameters(), 0.05)
        opt.step()
        sched.step()
        step += 1
        print(f"step {step} loss {loss.item():.5f} gnorm {gn.item():.5f} lr {sched.get_last_lr()[0]:.5f}")
print("sched state", sorted(sched.state_dict()), sched.last_epoch)

# SWA phase
swa_model = AveragedModel(net)
swa_sched = SWALR(opt, swa_lr=0.02, anneal_epochs=2, anneal_strategy="linear")
print("swa lr start", [round(g["lr"], 6) for g in opt.param_groups])
for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        F.cross_entropy(net(xb), yb).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0, foreach=True)
        opt.step()
    swa_model.update_parameters(net)
    swa_sched.step()
    print(f"swa epoch {epoch} n_averaged {swa_model.n_averaged.item()} lr {swa_sched.get_last_lr()[0]:.5f}")
bn = swa_model.module.blocks[0].bn
print("bn before", f"{bn.running_mean.sum().item():.5f}", bn.num_batches_tracked.item())
update_bn(loader, swa_model)
print("bn after", f"{bn.running_mean.sum().item():.5f}", f"{bn.running_var.mean().item():.5f}",
      bn.num_batches_tracked.item(), bn.momentum)
swa_model.eval()
net.eval()
with torch.no_grad():
    acc_swa = (swa_model(x[:16]).argmax(1) == y[:16]).float().mean().item()
    acc_net = (net(x[:16]).argmax(1) == y[:16]).float().mean().item()
print(f"acc swa {acc_swa:.4f} last {acc_net:.4f}")
print("keys", list(swa_model.state_dict())[:3], len(swa_model.state_dict()))
print(type(swa_model.module).__name__, swa_model.training)
