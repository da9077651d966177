"""Fine-tuning surgery on a pretrained backbone: copy.deepcopy, set_submodule / get_submodule to
swap the head, partial load_state_dict(strict=False) and its missing/unexpected keys, freezing
with requires_grad_(False) and per-group learning rates, state_dict(keep_vars=True),
parameters_to_vector / vector_to_parameters, global module hooks, a forward pre-hook with
kwargs, a full backward pre-hook, named_modules with remove_duplicate, and weight tying."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x))


pre = Backbone()
x = torch.randn(6, 1, 8, 8)
pre(x)
pretrained = copy.deepcopy(pre.state_dict())
print(list(pretrained)[:7], pretrained["features.1.num_batches_tracked"])

model = Backbone()
model.set_submodule("fc", nn.Linear(16, 3))
print(model.get_submodule("features.1"), model.fc)
res = model.load_state_dict({k: v for k, v in pretrained.items() if not k.startswith("fc.")} |
                            {"extra.weight": torch.zeros(1)}, strict=False)
print(res.missing_keys, res.unexpected_keys, type(res).__name__)
try:
    model.load_state_dict(pretrained)
except RuntimeError as e:
    print(str(e).splitlines()[0])
    print(str(e).splitlines()[1].strip())
print(torch.equal(model.features[0].weight, pre.features[0].weight),
      model.features[1].running_mean.equal(pre.features[1].running_mean))

model.features.requires_grad_(False)
print([n for n, p in model.named_parameters() if p.requires_grad])
kv = model.state_dict(keep_vars=True)
print(type(kv["fc.weight"]).__name__, kv["fc.weight"].requires_grad, kv["features.1.running_var"].requires_grad)

calls = []
h1 = nn.modules.module.register_module_forward_hook(lambda m, i, o: calls.append(type(m).__name__))
model(x[:2])
h1.remove()
print(calls)


def pre_hook(module, args, kwargs):
    kwargs = dict(kwargs)
    return (args[0] * 2,), kwargs


class Scaled(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


s = Scaled()
hk = s.register_forward_pre_hook(pre_hook, with_kwargs=True)
print(s(torch.ones(2), scale=3.0))
hk.remove()
seen = []
hb = model.fc.register_full_backward_pre_hook(lambda m, go: seen.append(go[0].shape) or (go[0] * 0.5,))
opt = torch.optim.SGD([{"params": model.fc.parameters(), "lr": 0.1},
                       {"params": model.features.parameters(), "lr": 0.0}], momentum=0.9)
model.features.eval()
for step in range(5):
    logits = model(x)
    loss = F.cross_entropy(logits, torch.arange(6) % 3)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
hb.remove()
print(seen[:2], model.features[0].weight.grad, model.features[1].num_batches_tracked)

vec = parameters_to_vector(model.fc.parameters())
print(vec.shape, f"{vec.norm().item():.5f}", vec.grad_fn.name())
vector_to_parameters(torch.arange(vec.numel(), dtype=torch.float32) / 100, model.fc.parameters())
print(model.fc.bias, model.fc.weight[0, :4])


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.proj = nn.Linear(4, 4)
        self.out = nn.Linear(4, 7, bias=False)
        self.out.weight = self.emb.weight
        self.shared = self.proj

    def forward(self, idx):
        return self.out(torch.tanh(self.shared(self.emb(idx))))


lm = TiedLM()
print([n for n, _ in lm.named_parameters()], len(list(lm.parameters())))
print([n for n, _ in lm.named_modules()], [n for n, _ in lm.named_modules(remove_duplicate=False)])
print(list(lm.state_dict()), lm.out.weight is lm.emb.weight)
out = lm(torch.tensor([[1, 2, 3]]))
out.sum().backward()
print(lm.emb.weight.grad.sum(dim=1))
lm2 = copy.deepcopy(lm)
print(lm2.out.weight is lm2.emb.weight, lm2.shared is lm2.proj, lm2.emb.weight.grad is not None)
