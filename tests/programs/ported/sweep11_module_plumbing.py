"""Module plumbing: activation checkpointing (use_reentrant=False), forward pre-hooks and full
backward hooks, non-persistent buffers, named_modules/named_buffers, state_dict with a prefix,
load_state_dict(strict=False) results, optimizer save/resume matching an uninterrupted run,
ModuleDict/ParameterList, and copy.deepcopy of a model."""
import copy
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.register_buffer("scale", torch.ones(d))
        self.register_buffer("cache", torch.zeros(d), persistent=False)

    def forward(self, x):
        return x + self.scale * F.gelu(self.norm(self.fc(x)))


class Net(nn.Module):
    def __init__(self, d=8, use_ckpt=True):
        super().__init__()
        self.use_ckpt = use_ckpt
        self.blocks = nn.ModuleDict({"a": Block(d), "b": Block(d)})
        self.gains = nn.ParameterList([nn.Parameter(torch.full((d,), 0.5)), nn.Parameter(torch.ones(d))])
        self.head = nn.Linear(d, 3)

    def forward(self, x):
        for i, (name, blk) in enumerate(self.blocks.items()):
            x = checkpoint(blk, x, use_reentrant=False) if self.use_ckpt and self.training else blk(x)
            x = x * self.gains[i]
        return self.head(x)


net = Net()
print(net)
print("modules", [n for n, _ in net.named_modules()])
print("buffers", [n for n, _ in net.named_buffers()])
print("params", [(n, tuple(p.shape)) for n, p in net.named_parameters()])
sd = net.state_dict(prefix="model.")
print("state_dict keys", list(sd)[:4], len(sd), "cache" in " ".join(sd))

calls = []
pre = net.blocks["a"].register_forward_pre_hook(lambda m, args: calls.append(("pre", args[0].shape)))
mod_pre = net.head.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
bwd = net.blocks["b"].fc.register_full_backward_hook(
    lambda m, gin, gout: calls.append(("bwd", [None if g is None else tuple(g.shape) for g in gin],
                                       round(gout[0].abs().sum().item(), 4))))
x, y = torch.randn(5, 8), torch.tensor([0, 1, 2, 1, 0])
out = net(x)
loss = F.cross_entropy(out, y)
loss.backward()
print("ckpt loss", f"{loss.item():.6f}", out.grad_fn.name(), calls)
grads_ckpt = [p.grad.clone() for p in net.parameters()]
net.zero_grad()
net.use_ckpt = False
F.cross_entropy(net(x), y).backward()
print("checkpoint grads equal", all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(grads_ckpt, net.parameters())))
print("handles", type(pre).__name__, isinstance(bwd, torch.utils.hooks.RemovableHandle), pre.id < bwd.id)
pre.remove(), mod_pre.remove(), bwd.remove()
calls.clear()
net(x)
print("hooks removed", calls, f"{net(x).sum().item():.5f}")

# strict=False loading into a model with a different head and an extra buffer
other = Net()
other.head = nn.Linear(8, 4)
other.blocks["a"].register_buffer("extra", torch.zeros(1))
small = {k: v for k, v in net.state_dict().items() if not k.startswith("head")}
small["unknown.weight"] = torch.zeros(2)
res = other.load_state_dict(small, strict=False)
print("missing", res.missing_keys)
print("unexpected", res.unexpected_keys)
print(res)
try:
    other.load_state_dict(net.state_dict())
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
prefixed = net.state_dict(prefix="model.")
fresh = Net()
fresh.load_state_dict({k[len("model."):]: v for k, v in prefixed.items()})
print("prefix round trip", torch.equal(fresh.head.weight, net.head.weight))


def train(model, opt, sched, steps, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        xb = torch.randn(6, 8, generator=g)
        yb = torch.randint(0, 3, (6,), generator=g)
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return loss.item()


def make(seed=1):
    torch.manual_seed(seed)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, amsgrad=True)
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)


ref_model, ref_opt, ref_sched = make()
print("uninterrupted", f"{train(ref_model, ref_opt, ref_sched, 3, 10):.6f}", f"{train(ref_model, ref_opt, ref_sched, 3, 11):.6f}")
m1, o1, s1 = make()
train(m1, o1, s1, 3, 10)
buf = io.BytesIO()
torch.save({"model": m1.state_dict(), "opt": o1.state_dict(), "sched": s1.state_dict()}, buf)
buf.seek(0)
ck = torch.load(buf)
print("opt state keys", sorted(ck["opt"]["state"][0]), ck["opt"]["param_groups"][0]["lr"], ck["sched"]["last_epoch"])
m2, o2, s2 = make(seed=5)
m2.load_state_dict(ck["model"])
o2.load_state_dict(ck["opt"])
s2.load_state_dict(ck["sched"])
print("resumed", f"{train(m2, o2, s2, 3, 11):.6f}")
print("resume equal", all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ref_model.parameters(), m2.parameters())),
      o2.param_groups[0]["lr"], o2.state[m2.head.weight]["step"])

try:
    torch.autograd.grad(checkpoint(net.blocks["a"], x.requires_grad_(), use_reentrant=True).sum(), x)
except RuntimeError as e:
    print("reentrant + grad:", str(e)[:60])

clone = copy.deepcopy(net)
print("deepcopy distinct", clone.head.weight is net.head.weight, torch.equal(clone.head.weight, net.head.weight),
      clone.blocks["a"].cache.data_ptr() != net.blocks["a"].cache.data_ptr())
with torch.no_grad():
    clone.gains[0].add_(1.0)
print("after edit", net.gains[0][0].item(), clone.gains[0][0].item(), type(clone.gains).__name__, len(clone.gains))
flat = torch.arange(6.)
snap = copy.deepcopy({"flat": flat, "rows": flat.view(2, 3), "tail": flat[3:]})
snap["flat"].add_(10)
print("deepcopy shares storage", snap["rows"][1].tolist(), snap["tail"].tolist(), flat[3:].tolist())
net.eval()
print("training flags", net.training, net.blocks["a"].training, clone.training)
print("ModuleDict", list(net.blocks.keys()), "a" in net.blocks, type(net.blocks["b"]).__name__)
