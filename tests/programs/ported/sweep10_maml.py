"""MAML on sine regression: functional_call with a params dict, an inner loop through
autograd.grad(create_graph=True), an outer Adam step; then the same with torch.func.grad and
vmap over tasks."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)


def sample_tasks(n_tasks, k):
    amp = torch.rand(n_tasks, 1, 1) * 4.9 + 0.1
    phase = torch.rand(n_tasks, 1, 1) * math.pi
    x = torch.rand(n_tasks, 2 * k, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return x[:, :k], y[:, :k], x[:, k:], y[:, k:]


model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
params = dict(model.named_parameters())
print("params", list(params), [tuple(p.shape) for p in params.values()])
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
inner_lr = 0.01


def adapt(params, x, y, steps=1, create_graph=True):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
        params = {n: p - inner_lr * g for (n, p), g in zip(params.items(), grads)}
    return params


for it in range(6):
    xs, ys, xq, yq = sample_tasks(4, 5)
    meta_opt.zero_grad()
    outer = 0.0
    for t in range(4):
        fast = adapt(dict(model.named_parameters()), xs[t], ys[t])
        outer = outer + F.mse_loss(functional_call(model, fast, (xq[t],)), yq[t])
    outer = outer / 4
    outer.backward()
    meta_opt.step()
    print(f"iter {it} meta loss {outer.item():.5f}")
print("outer grad_fn", outer.grad_fn.name())
print("fast grad_fn", fast["0.weight"].grad_fn.name(), fast["0.weight"].is_leaf)
w_grad = model[0].weight.grad
print("second-order grad", w_grad.shape, w_grad.abs().sum().item() > 0)

# first-order MAML: no graph through the inner step
xs, ys, xq, yq = sample_tasks(1, 5)
fo = adapt(dict(model.named_parameters()), xs[0], ys[0], steps=2, create_graph=False)
print("first order", fo["2.bias"].requires_grad, fo["2.bias"].grad_fn.name())
try:
    fo_loss = F.mse_loss(functional_call(model, fo, (xq[0],)), yq[0])
    g2 = torch.autograd.grad(fo_loss, model[0].weight)
    print("fo grad", g2[0].shape)
except RuntimeError as e:
    print("RuntimeError", e)

# double backward through the inner gradient by hand
w = torch.tensor([1.5, -0.5], requires_grad=True)
x = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
inner = ((x @ w) ** 2).sum()
(gw,) = torch.autograd.grad(inner, w, create_graph=True)
adapted = w - 0.1 * gw
meta = (adapted ** 3).sum()
meta.backward()
print("w.grad", w.grad, gw.grad_fn.name())

# torch.func version: grad of the inner loss, vmap over tasks
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {}


def inner_loss(p, x, y):
    return F.mse_loss(functional_call(model, (p, buffers), (x,)), y)


def task_loss(p, xs, ys, xq, yq):
    g = grad(inner_loss)(p, xs, ys)
    fast = {k: p[k] - inner_lr * g[k] for k in p}
    return inner_loss(fast, xq, yq)


xs, ys, xq, yq = sample_tasks(8, 5)
losses = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(params, xs, ys, xq, yq)
print("vmap losses", losses.shape, losses)
batched = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))
meta_grads = grad(lambda p: batched(p, xs, ys, xq, yq).mean())(params)
print("meta grads", sorted(meta_grads), meta_grads["4.bias"])
loop = torch.stack([task_loss(params, xs[i], ys[i], xq[i], yq[i]) for i in range(8)])
print("same as loop", torch.allclose(loop, losses, atol=1e-5))

fparams = {k: v.clone().requires_grad_() for k, v in params.items()}
opt = torch.optim.Adam(fparams.values(), lr=1e-2)
for k, v in fparams.items():
    v.grad = meta_grads[k]
opt.step()
with torch.no_grad():
    ev = vmap(task_loss, in_dims=(None, 0, 0, 0, 0))(fparams, xs, ys, xq, yq)
print("after step", ev.mean().item() < losses.mean().item(), ev.requires_grad)
print("state", len(opt.state), opt.state[fparams["0.weight"]]["step"])
try:   # integer targets passed as the differentiated argument
    grad(lambda y, p: inner_loss(p, xs[0], y), argnums=0)(yq[0].long(), params)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    grad(lambda lr: task_loss(params, xs[0], ys[0], xq[0], yq[0]) * lr)(0.5)
except ValueError as e:
    print("ValueError", e)
