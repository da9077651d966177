"""Custom modules: register_buffer, ModuleDict, ParameterList, ParameterDict, hooks, apply init."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Scaler(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("running", torch.zeros(n))
        self.register_buffer("tmp", torch.ones(1), persistent=False)
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(n) * (i + 1)) for i in range(2)])
        self.extra = nn.ParameterDict({"shift": nn.Parameter(torch.zeros(n))})

    def forward(self, x):
        if self.training:
            self.running.mul_(0.9).add_(x.detach().mean(0), alpha=0.1)
        for s in self.scales:
            x = x * s
        return x + self.extra["shift"]

    def extra_repr(self):
        return f"n={self.running.numel()}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 3), "b": nn.Linear(4, 3)})
        self.body = nn.Sequential(nn.Linear(5, 4), nn.GELU(), nn.LayerNorm(4))
        self.scaler = Scaler(3)
        self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])

    def forward(self, x, head="a"):
        h = self.body(x)
        h = self.heads[head](h)
        for blk in self.blocks:
            h = h + torch.tanh(blk(h))
        return self.scaler(h)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        m.weight.data.fill_(1.0)


net = Net()
net.apply(init_weights)
print(net)
for name, p in net.named_parameters():
    print(f"{name:24s} {str(tuple(p.shape)):10s} {p.requires_grad}")
print(list(net.state_dict().keys()))
print([n for n, _ in net.named_buffers()])
print([n for n, _ in net.named_modules()])
print(sum(p.numel() for p in net.parameters()))

calls = []


def fwd_hook(module, inp, out):
    calls.append(("fwd", type(module).__name__, tuple(inp[0].shape), tuple(out.shape)))


def pre_hook(module, args):
    calls.append(("pre", type(module).__name__))
    return (args[0] * 2,)


def bwd_hook(module, grad_input, grad_output):
    calls.append(("bwd", type(module).__name__, [None if g is None else tuple(g.shape) for g in grad_input],
                  f"{grad_output[0].abs().sum().item():.4f}"))


h1 = net.body[0].register_forward_hook(fwd_hook)
h2 = net.heads["a"].register_forward_pre_hook(pre_hook)
h3 = net.blocks[1].register_full_backward_hook(bwd_hook)
x = torch.randn(2, 5)
out = net(x)
out.sum().backward()
for c in calls:
    print(c)
print(f"{out.sum().item():.4f}", out.grad_fn.name())
h1.remove()
h2.remove()
h3.remove()
calls.clear()
out2 = net(x)
print(len(calls), f"{out2.sum().item():.4f}")
print(f"running {[round(v, 4) for v in net.scaler.running.tolist()]}")

feats = {}


def save(name):
    def hook(m, i, o):
        feats[name] = o.detach()
    return hook


for name, m in net.named_modules():
    if isinstance(m, nn.Linear):
        m.register_forward_hook(save(name))
net(x, head="b")
print(sorted(feats), feats["heads.b"].shape, feats["heads.b"].requires_grad)

net.zero_grad(set_to_none=True)
print(all(p.grad is None for p in net.parameters()))
for p in net.body.parameters():
    p.requires_grad_(False)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
net.eval()
print(net.training, net.scaler.training)
net.float()
print(net.scaler.running.dtype, net.heads.a.weight.dtype)
net.double()
print(net.scaler.running.dtype, next(net.parameters()).dtype, net.scaler.tmp.dtype)
print(net.get_submodule("body.2"), net.get_parameter("scaler.scales.1").tolist())
print(isinstance(net.scaler.scales[0], nn.Parameter), len(net.scaler.scales), "shift" in net.scaler.extra)
