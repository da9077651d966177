"""Module introspection in a small adapter-style model: nested Sequential / ModuleDict /
ModuleList / ParameterList / ParameterDict reprs with extra_repr, named_parameters and
named_buffers (non-persistent buffers stay out of state_dict), apply(init_fn), state_dict
pre/post hooks renaming keys for an old checkpoint layout, load_state_dict pre/post hooks,
forward pre-hooks and forward hooks with kwargs, and hook handles removed again."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Scale(nn.Module):
    def __init__(self, dim, init=1.0):
        super().__init__()
        self.dim = dim
        self.gamma = nn.Parameter(torch.full((dim,), init))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x, *, temperature=1.0):
        self.calls += 1
        return x * self.gamma / temperature

    def extra_repr(self):
        return f"dim={self.dim}, init={self.gamma[0].item():.2f}"


class Adapter(nn.Module):
    def __init__(self, dim, rank):
        super().__init__()
        self.down = nn.Linear(dim, rank, bias=False)
        self.up = nn.Linear(rank, dim, bias=False)
        self.scale = Scale(dim, 0.5)

    def forward(self, x, temperature=1.0):
        return x + self.scale(self.up(F.gelu(self.down(x))), temperature=temperature)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.SiLU())
        self.adapters = nn.ModuleDict({"task_a": Adapter(8, 2), "task_b": Adapter(8, 3)})
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(2)])
        self.prompts = nn.ParameterList([nn.Parameter(torch.zeros(8)), nn.Parameter(torch.ones(8))])
        self.heads = nn.ParameterDict({"cls": nn.Parameter(torch.randn(8, 3)),
                                       "reg": nn.Parameter(torch.randn(8, 1))})
        self.register_buffer("mean", torch.zeros(6))
        self.register_buffer("step_cache", torch.zeros(2), persistent=False)

    def forward(self, x, task="task_a", head="cls", temperature=1.0):
        h = self.stem(x - self.mean)
        h = self.adapters[task](h, temperature=temperature)
        for i, block in enumerate(self.blocks):
            h = block(h + self.prompts[i])
        return h @ self.heads[head]


torch.manual_seed(0)
model = Model()
print(model)
print(model.adapters["task_a"].scale)
print([(n, tuple(p.shape)) for n, p in model.named_parameters()][:6])
print([n for n, _ in model.named_parameters(prefix="model", recurse=True) if "heads" in n])
print([n for n, _ in model.named_parameters(recurse=False)])
print([n for n, _ in model.named_buffers()])
print(list(model.state_dict().keys()))
print(sum(p.numel() for p in model.parameters()), len(list(model.modules())))
print([n for n, m in model.named_modules() if isinstance(m, nn.Linear)])
print(type(model.get_submodule("blocks.1.0")).__name__, model.get_parameter("heads.reg").shape)
try:
    model.get_submodule("blocks.2")
except AttributeError as e:
    print("AttributeError:", e)


@torch.no_grad()
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, std=0.1)
        if m.bias is not None:
            m.bias.fill_(0.01)
    elif isinstance(m, nn.LayerNorm):
        m.weight.fill_(1.5)


print(model.apply(init_weights) is model)
print(model.stem[0].bias[:3], model.stem[1].weight[:2])

# forward hooks that see keyword arguments
seen = []


def pre_hook(module, args, kwargs):
    seen.append(("pre", type(module).__name__, tuple(args[0].shape), sorted(kwargs)))
    if "temperature" in kwargs:
        kwargs = dict(kwargs, temperature=kwargs["temperature"] * 2)
        return args, kwargs


def post_hook(module, args, kwargs, output):
    seen.append(("post", kwargs.get("temperature"), tuple(output.shape)))
    return output * 0.5


h1 = model.adapters["task_a"].scale.register_forward_pre_hook(pre_hook, with_kwargs=True)
h2 = model.adapters["task_a"].scale.register_forward_hook(post_hook, with_kwargs=True)
x = torch.randn(4, 6)
out_hooked = model(x, temperature=2.0)
print(seen)
h1.remove()
h2.remove()
out_plain = model(x, temperature=2.0)
print(out_hooked.sum().item(), out_plain.sum().item(), out_hooked.grad_fn.name())
print(model.adapters["task_a"].scale.calls, model.adapters["task_b"].scale.calls)

# checkpoints written by an older version used "backbone." instead of "stem."
def rename_on_save(module, state_dict, prefix, local_metadata):
    for k in [k for k in state_dict if k.startswith(prefix + "stem.")]:
        state_dict[prefix + "backbone." + k[len(prefix) + 5:]] = state_dict.pop(k)


def pre_save(module, prefix, keep_vars):
    print("pre-save", type(module).__name__, repr(prefix), keep_vars)


def rename_on_load(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
                   errors):
    for k in [k for k in state_dict if k.startswith(prefix + "backbone.")]:
        state_dict[prefix + "stem." + k[len(prefix) + 9:]] = state_dict.pop(k)


def after_load(module, incompatible):
    print("post-load", incompatible.missing_keys, incompatible.unexpected_keys)
    incompatible.unexpected_keys[:] = [k for k in incompatible.unexpected_keys
                                       if not k.startswith("legacy")]


model.register_state_dict_pre_hook(pre_save)
model.register_state_dict_post_hook(rename_on_save)
sd = model.state_dict()
print([k for k in sd if "backbone" in k], "stem.0.weight" in sd)
print(sd["backbone.0.bias"][:3], sd["backbone.0.bias"].requires_grad)

fresh = Model()
fresh.register_load_state_dict_pre_hook(rename_on_load)
fresh.register_load_state_dict_post_hook(after_load)
sd["legacy.counter"] = torch.tensor(3)
print(fresh.load_state_dict(sd))
print(torch.equal(fresh.stem[0].weight, model.stem[0].weight))
fresh.step_cache.fill_(7)
print(fresh.state_dict(keep_vars=True)["stem.1.weight"].requires_grad)
print(torch.allclose(fresh(x), model(x)), fresh.step_cache)

# training a single task's adapter with the rest frozen
for n, p in model.named_parameters():
    p.requires_grad_(n.startswith("adapters.task_b") or n.startswith("heads.reg"))
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print(trainable)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
y = torch.randn(4, 1)
for step in range(3):
    loss = F.mse_loss(model(x, task="task_b", head="reg"), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 6), model.stem[0].weight.grad is None,
          model.heads["reg"].grad.norm().item())
