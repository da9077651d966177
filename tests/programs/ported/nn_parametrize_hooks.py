"""Parametrizations (weight_norm, spectral_norm, custom), kwargs hooks, backward pre-hooks, reprs."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parametrizations

torch.manual_seed(0)

lin = nn.Linear(4, 3)
print(lin.weight)
wn = parametrizations.weight_norm(nn.Linear(4, 3))
print(wn)
print(sorted(n for n, _ in wn.named_parameters()))
print(list(wn.state_dict().keys()))
print(f"{wn.weight.norm(dim=1).sum().item():.4f}", wn.parametrizations.weight.original0.shape)
sn = parametrizations.spectral_norm(nn.Linear(5, 4))
x = torch.randn(2, 5)
for _ in range(3):
    y = sn(x)
print(f"{torch.linalg.matrix_norm(sn.weight, 2).item():.4f}", f"{y.sum().item():.4f}")
print(sorted(sn.state_dict().keys()))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
print(layer)
print(torch.allclose(layer.weight, layer.weight.T), parametrize.is_parametrized(layer, "weight"))
layer(torch.randn(2, 3)).sum().backward()
print(layer.parametrizations.weight.original.grad)
with parametrize.cached():
    w1 = layer.weight
    w2 = layer.weight
print(w1 is w2)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print(type(layer.weight).__name__, parametrize.is_parametrized(layer))

model = nn.Sequential(OrderedDict([("fc1", nn.Linear(4, 6)), ("act", nn.SiLU()),
                                   ("drop", nn.Dropout(0.25)), ("fc2", nn.Linear(6, 2))]))
print(model)
print(model.fc1, model[-1], model[1:3])
log = []
model.fc1.register_forward_hook(lambda m, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                                with_kwargs=True)
model.fc2.register_forward_pre_hook(lambda m, args: log.append(("pre", tuple(args[0].shape))),
                                    prepend=True)
model.fc2.register_full_backward_pre_hook(
    lambda m, gout: log.append(("bpre", f"{gout[0].abs().sum().item():.4f}")))
model.act.register_full_backward_hook(
    lambda m, gin, gout: log.append(("bwd", f"{gin[0].abs().sum().item():.4f}")))
model.eval()
out = model(torch.randn(3, 4))
out.pow(2).sum().backward()
for entry in log:
    print(entry)
sd_keys = []
model.register_state_dict_pre_hook(lambda m, prefix, keep_vars: sd_keys.append(prefix))
print(list(model.state_dict(prefix="net.").keys()), sd_keys)
print(nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()}))
print(nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(2, 3))]))
print(nn.ParameterDict({"w": nn.Parameter(torch.zeros(2, 2))}))
del model.drop
print(model)
m = nn.Linear(2, 2).half()
print(m.weight.dtype, m(torch.ones(1, 2, dtype=torch.half)).dtype)
m.register_parameter("extra", None)
m.register_buffer("counter", torch.tensor(0))
print(list(m.state_dict().keys()), m.extra)
print(repr(nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False)))
