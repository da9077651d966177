"""Inspecting and surgically editing a model before fine-tuning: named_modules/named_buffers
(shared and non-persistent members included), counting calls with forward pre-hooks, forward
hooks with kwargs, full backward (pre-)hooks, freezing with requires_grad_(False), parameter
counts, flattening with parameters_to_vector/vector_to_parameters, and partial state_dict
loads with strict=False that print the missing and unexpected keys."""
from collections import Counter, OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.register_buffer("scale", torch.ones(d))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x, gate=None):
        self.calls += 1
        h = torch.relu(self.fc(self.norm(x))) * self.scale
        return x + (h if gate is None else gate * h)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 8)
        shared = Block(8)
        self.blocks = nn.ModuleList([shared, Block(8), shared])
        self.head = nn.Sequential(OrderedDict(drop=nn.Dropout(0.1), out=nn.Linear(8, 3)))
        self.head_alias = self.head.out

    def forward(self, x):
        x = self.stem(x)
        for i, blk in enumerate(self.blocks):
            x = blk(x, gate=torch.tensor(0.5)) if i == 1 else blk(x)
        return self.head(x)


net = Net()
print([name for name, _ in net.named_modules()])
print(len(list(net.named_modules(remove_duplicate=False))), len(list(net.modules())))
print([n for n, _ in net.named_buffers()])
print([n for n, _ in net.named_parameters(prefix="model")][:4])
print(len(list(net.parameters())), len(list(net.named_parameters(remove_duplicate=False))))
print([n for n, _ in net.named_children()], net.get_submodule("blocks.1.norm"))
print(list(net.state_dict().keys()))
total = sum(p.numel() for p in net.parameters())
print("parameters", total, "buffers", sum(b.numel() for b in net.buffers()))

counts = Counter()
shapes = {}


def pre_hook(mod, args):
    counts[type(mod).__name__ + ".pre"] += 1


def fwd_hook(mod, args, kwargs, out):
    counts[type(mod).__name__ + ".fwd"] += 1
    shapes.setdefault("gate", []).append(None if kwargs.get("gate") is None
                                         else float(kwargs["gate"]))


def bwd_hook(mod, grad_input, grad_output):
    counts[type(mod).__name__ + ".bwd"] += 1
    shapes[type(mod).__name__] = ([None if g is None else tuple(g.shape) for g in grad_input],
                                  [tuple(g.shape) for g in grad_output])


def bwd_pre_hook(mod, grad_output):
    counts["head.bwd_pre"] += 1
    return (grad_output[0] * 2,)


handles = [m.register_forward_pre_hook(pre_hook) for m in net.modules() if isinstance(m, Block)]
handles.append(net.blocks[1].register_forward_hook(fwd_hook, with_kwargs=True))
handles.append(net.blocks[0].register_forward_hook(fwd_hook, with_kwargs=True))
handles.append(net.stem.register_full_backward_hook(bwd_hook))
handles.append(net.head.register_full_backward_pre_hook(bwd_pre_hook))
x = torch.randn(5, 6)
out = net(x)
out.sum().backward()
print(sorted(counts.items()), shapes)
print("block calls", net.blocks[0].calls.item(), net.blocks[1].calls.item())
g_doubled = net.head.out.bias.grad.clone()
for h in handles:
    h.remove()
net.zero_grad()
net(x).sum().backward()
print("pre-hook doubled grad", torch.allclose(g_doubled, 2 * net.head.out.bias.grad),
      sorted(counts.items()) == sorted(Counter(counts).items()), sum(counts.values()))

# freeze everything but the head, as for linear probing
net.requires_grad_(False)
net.head.requires_grad_(True)
trainable = [n for n, p in net.named_parameters() if p.requires_grad]
print("trainable", trainable, sum(p.numel() for p in net.parameters() if p.requires_grad))
opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1)
before = parameters_to_vector(net.parameters())
print("vector", before.shape, before.dtype, before.grad_fn.name())
for _ in range(3):
    loss = nn.functional.cross_entropy(net(x), torch.tensor([0, 1, 2, 0, 1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"probe loss {loss.item():.4f}", net.stem.weight.grad is None)
after = parameters_to_vector(net.parameters())
changed = (after != before).nonzero().squeeze(1)
print("changed", changed.numel(), changed.min().item(), changed.max().item())
vector_to_parameters(before, net.parameters())
print("restored", torch.equal(parameters_to_vector(net.parameters()), before),
      net.head.out.weight.requires_grad, net.stem.weight.requires_grad)
trainable_vec = parameters_to_vector(p for p in net.parameters() if p.requires_grad)
print(trainable_vec.shape, trainable_vec.requires_grad, trainable_vec.grad_fn.name())

# partial loads: a checkpoint from an older version of the model
sd = net.state_dict()
old = {k.replace("head.out", "classifier"): v for k, v in sd.items()}
old["blocks.0.extra"] = torch.zeros(2)
fresh = Net()
res = fresh.load_state_dict(old, strict=False)
print(res)
print("missing", res.missing_keys)
print("unexpected", res.unexpected_keys)
print(torch.equal(fresh.stem.weight, net.stem.weight),
      torch.equal(fresh.head.out.weight, net.head.out.weight))
try:
    fresh.load_state_dict(old)
except RuntimeError as e:
    print("RuntimeError:", e)
bad = dict(sd)
bad["stem.weight"] = torch.zeros(8, 5)
try:
    fresh.load_state_dict(bad, strict=False)
except RuntimeError as e:
    print("RuntimeError:", e)
sub = {k[len("blocks.1."):]: v for k, v in sd.items() if k.startswith("blocks.1.")}
print(sorted(sub), Block(8).load_state_dict(sub))
print(list(net.head.state_dict(prefix="head.", keep_vars=True))[:2],
      type(net.head.state_dict(keep_vars=True)["out.weight"]).__name__)
try:
    net.get_submodule("blocks.7")
except AttributeError as e:
    print("AttributeError:", e)
try:
    net.get_parameter("stem.scale")
except AttributeError as e:
    print("AttributeError:", e)
print(net.get_parameter("blocks.1.fc.bias").shape, net.get_buffer("blocks.1.scale").shape)

# state_dict / load hooks, assign=True loads and dtype conversions
seen = []
net.register_load_state_dict_post_hook(
    lambda mod, keys: seen.append((type(mod).__name__, len(keys.missing_keys))))


def drop_alias(mod, sd, prefix, local_metadata):
    for k in [k for k in sd if k.startswith(prefix + "head_alias.")]:
        del sd[k]


net.register_state_dict_post_hook(drop_alias)
print("post-hook dropped alias", "head_alias.weight" in net.state_dict(), len(net.state_dict()))
print(net.load_state_dict(net.state_dict(), strict=False), seen)
meta = Block(8)
res = meta.load_state_dict({k: v.clone() for k, v in net.blocks[1].state_dict().items()},
                           assign=True)
print(res, type(meta.fc.weight).__name__, meta.fc.weight.requires_grad,
      torch.equal(meta.fc.weight, net.blocks[1].fc.weight))
net.blocks[1].double()
print({n: str(t.dtype) for n, t in net.blocks[1].named_buffers()},
      net.blocks[1].fc.weight.dtype)
try:
    parameters_to_vector(net.parameters())
except RuntimeError as e:
    print("RuntimeError:", e)
net.add_module("extra", nn.Identity())
net.register_module("extra2", None)
del net.head_alias
print([n for n, _ in net.named_children()], net.extra2, hasattr(net, "head_alias"))
inits = []
net.apply(lambda m: inits.append(type(m).__name__) if not list(m.children()) else None)
print(Counter(inits))
print(net.blocks)
