"""Module plumbing seen in research code: register_buffer (persistent or not), forward hooks
collecting activations, full backward hooks, named_modules filtering, apply(init_fn),
state_dict surgery (prefix stripping, strict=False loading, missing/unexpected keys),
freezing layers with requires_grad, parameter counting, printing modules and tensors."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)
        self.norm = nn.GroupNorm(2, c)
        self.register_buffer("scale", torch.ones(c, 1))
        self.register_buffer("tmp", torch.zeros(1), persistent=False)

    def forward(self, x):
        return x + F.silu(self.norm(self.conv(x))) * self.scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv1d(2, 4, 1)
        self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.extra = nn.ParameterList([nn.Parameter(torch.randn(2)) for _ in range(2)])

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        x = x.mean(-1)
        return self.heads["cls"](x), self.heads["reg"](x)


model = Model()
print(model)
print([n for n, m in model.named_modules() if isinstance(m, (nn.Conv1d, nn.Linear))])
print([n for n, _ in model.named_buffers()], list(model.state_dict().keys()))
print([(n, tuple(p.shape)) for n, p in model.named_parameters()][-4:])
print(model.blocks[0].scale.shape, "tmp" in model.blocks[0].state_dict())
print(model.get_submodule("blocks.1.norm"), model.get_parameter("heads.reg.bias").shape)


def init_fn(m):
    if isinstance(m, (nn.Conv1d, nn.Linear)):
        nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("relu"))
        if m.bias is not None:
            nn.init.constant_(m.bias, 0.01)


model.apply(init_fn)
print(f"{model.stem.weight.sum().item():.5f} {model.heads.cls.bias[0].item():.3f}")

acts = {}


def save(name):
    def hook(mod, inp, out):
        acts[name] = out.detach()
    return hook


handles = [m.register_forward_hook(save(n)) for n, m in model.named_modules() if isinstance(m, nn.GroupNorm)]
grads = []
h_back = model.stem.register_full_backward_hook(lambda m, gi, go: grads.append((gi[0] is None, go[0].shape)))
pre = model.heads["cls"].register_forward_pre_hook(lambda m, inp: (inp[0] * 2,))
x = torch.randn(5, 2, 7, requires_grad=True)
c, r = model(x)
(c.sum() + r.sum()).backward()
print(sorted(acts), {k: tuple(v.shape) for k, v in acts.items()}, grads)
print(f"{acts['blocks.0.norm'].mean().item():.5f} {acts['blocks.1.norm'].std().item():.5f}")
for h in handles + [h_back, pre]:
    h.remove()
c2, _ = model(x)
print(torch.allclose(c, c2), len(acts))

# freeze the stem and first block, as in fine-tuning
for name, p in model.named_parameters():
    if name.startswith(("stem", "blocks.0")):
        p.requires_grad = False
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print(len(trainable), trainable[:3])
opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.1, momentum=0.9)
before = model.stem.weight.clone()
model.zero_grad()
for _ in range(3):
    c, r = model(x)
    loss = F.cross_entropy(c, torch.tensor([0, 1, 2, 0, 1])) + F.smooth_l1_loss(r.squeeze(1), torch.randn(5))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"loss {loss.item():.5f}")
print(torch.equal(before, model.stem.weight), model.stem.weight.grad, model.blocks[1].conv.weight.grad.shape)

# state_dict surgery: a checkpoint saved from DataParallel with a "module." prefix
sd = OrderedDict(("module." + k, v.clone()) for k, v in model.state_dict().items())
clean = OrderedDict((k[len("module."):] if k.startswith("module.") else k, v) for k, v in sd.items())
fresh = Model()
res = fresh.load_state_dict(clean)
print(res)
del clean["heads.reg.weight"]
clean["unexpected.weight"] = torch.zeros(1)
res = fresh.load_state_dict(clean, strict=False)
print(res.missing_keys, res.unexpected_keys)
try:
    fresh.load_state_dict(clean)
except RuntimeError as e:
    print(str(e).splitlines()[0])
bad = dict(model.state_dict())
bad["stem.weight"] = torch.zeros(3, 2, 1)
try:
    fresh.load_state_dict(bad)
except RuntimeError as e:
    print(str(e))
print(sum(p.numel() for p in fresh.parameters()), fresh.stem.weight.dtype)
fresh.half()
print(fresh.stem.weight.dtype, fresh.blocks[0].scale.dtype)
fresh.to(torch.float64)
print(fresh.heads.cls.weight.dtype, next(fresh.parameters()).is_leaf)

torch.manual_seed(1)
for shape in [(), (3,), (2, 3), (2, 2, 3), (12,), (1001,), (30, 30)]:
    t = torch.randn(shape) * 100
    print(t)
print(torch.tensor([1e-8, 1.0, 1e8]), torch.tensor([0.1, 0.25]), torch.tensor([1.0, 2.0]))
print(torch.arange(12).reshape(3, 4), torch.tensor([True, False]), torch.zeros(2, 0))
print(torch.randn(3, dtype=torch.float64), torch.randn(2).to(torch.bfloat16), torch.randn(2).half())
print(torch.tensor([float("nan"), float("inf"), -1.5]), torch.tensor(3.14159), torch.tensor([123456789.0]))
print(c.detach()[:2], r[:2])
print(torch.randn(2, 3, requires_grad=True), torch.randn(2, 2).mean(0))
