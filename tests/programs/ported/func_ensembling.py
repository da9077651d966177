"""Model ensembling with stack_module_state + vmap(functional_call) (the torch.func tutorial)."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import stack_module_state, functional_call, vmap

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


num_models = 5
minibatches = torch.randn(num_models, 6, 3, 4)
models = [SimpleMLP() for _ in range(num_models)]
minibatch = minibatches[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
print({k: tuple(v.shape) for k, v in params.items()}, buffers)
print(params["fc1.weight"].requires_grad, params["fc1.weight"].is_leaf)

base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print(predictions2_vmap.shape, torch.allclose(predictions2_vmap, torch.stack(predictions2),
                                              atol=1e-6))
predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
predictions1 = [m(mb) for m, mb in zip(models, minibatches)]
print(predictions1_vmap.shape, torch.allclose(predictions1_vmap, torch.stack(predictions1),
                                              atol=1e-6))
print(f"{predictions1_vmap.sum().item():.5f}")
# the stacked parameters train: gradients flow back through vmap
loss = predictions1_vmap.pow(2).mean()
loss.backward()
print(f"{loss.item():.6f}", tuple(params["fc2.bias"].grad.shape),
      f"{params['fc2.bias'].grad.sum().item():.6f}")
