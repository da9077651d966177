"""Per-sample gradients with vmap(grad(functional_call)) (the torch.func tutorial)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad

torch.manual_seed(0)


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.fc1 = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = torch.flatten(x, 1)
        return F.log_softmax(self.fc1(x), dim=1)


model = SimpleCNN()
data = torch.randn(4, 1, 8, 8)
targets = torch.randint(10, (4,))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.nll_loss(predictions, target.unsqueeze(0))


ft_compute_sample_grad = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

for name in params:
    manual = []
    for i in range(4):
        model.zero_grad()
        F.nll_loss(model(data[i:i + 1]), targets[i:i + 1]).backward()
        manual.append(dict(model.named_parameters())[name].grad.clone())
    manual = torch.stack(manual)
    print(name, tuple(ft_per_sample_grads[name].shape),
          torch.allclose(ft_per_sample_grads[name], manual, atol=1e-6),
          f"{ft_per_sample_grads[name].abs().sum().item():.5f}")

# functional_call with one dict, with kwargs, and strict checking
lin = nn.Linear(3, 2)
w = {"weight": torch.ones(2, 3), "bias": torch.zeros(2)}
print(functional_call(lin, w, (torch.ones(1, 3),)))
print(functional_call(lin, {"weight": torch.eye(2, 3)}, torch.arange(3.0)))
print(lin.weight.shape, lin.weight.requires_grad, type(lin.weight).__name__)
print(functional_call(nn.Softmax(dim=0), {}, args=(), kwargs={"input": torch.zeros(2)}))
# gradient of the mean loss through functional_call equals autograd
g = grad(lambda p: F.mse_loss(functional_call(lin, p, (torch.ones(4, 3),)), torch.zeros(4, 2)))(
    dict(lin.named_parameters()))
print({k: tuple(v.shape) for k, v in g.items()})
