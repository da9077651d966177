"""A debugging session's printouts: weights, grads and activations of a small conv net shown
under different set_printoptions (precision, sci_mode, linewidth, threshold, edgeitems,
profiles), summarised big tensors, odd values (-0., nan/inf mixes, huge and tiny magnitudes,
integral floats), half / bfloat16 / float64 / complex / bool / uint8 / int64 tensors, reprs
inside containers and f-strings, and the default dtype changed to float64."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
x = torch.randn(2, 3, 5, 5)
out = net(x)
loss = out.logsumexp(1).mean()
loss.backward()
print(out)
print(loss)
print(net[0].bias)
print(net[5].weight.grad)
print(net[1].running_var, net[1].num_batches_tracked)

torch.set_printoptions(precision=2, sci_mode=False)
print(net[0].weight.grad[0])
print(x[0, 0] * 1e-4)
torch.set_printoptions(precision=6)
print(net[5].weight)
torch.set_printoptions(sci_mode=True)
print(net[5].bias.detach(), torch.tensor([0.0, 1.0]))
torch.set_printoptions(profile="default")

# the default threshold summarises; a bigger one prints everything
w = net[0].weight.detach()
print(w.shape)
print(torch.arange(1500.0).reshape(30, 50)[:2] / 3)
torch.set_printoptions(edgeitems=2, linewidth=120)
print(w)
print(torch.arange(1001))
torch.set_printoptions(threshold=sys.maxsize, linewidth=60)
print(torch.arange(0, 30, dtype=torch.int64) * 123457)
torch.set_printoptions(profile="default")

print(torch.tensor([-0.0, 0.0, 1.0]), torch.tensor(-0.0))
print(torch.tensor([1.0, float("nan"), 3.0]), torch.tensor([float("inf"), -float("inf")]))
print(torch.tensor([1e-5, 1.0, 2e4]), torch.tensor([1e-3, 5e-3]), torch.tensor([2e6, 3.5]))
print(torch.tensor([1.0, 2.0, 1e16]), torch.tensor([100000.0, 1.0]))
print(torch.tensor([float("nan"), 1e10]), torch.tensor([1e-20, 0.0]))
print(torch.tensor([3.0, -7.0, 12.0]), torch.tensor([[1.5, -2.0], [0.25, 8.0]]))
print(torch.tensor([2 ** 40, -3, 7]), torch.tensor([1, 2], dtype=torch.int8))
print(x[0, 0, :2].half(), x[0, 0, :2].bfloat16(), x[0, 0, :2].double())
print(torch.tensor([65504.0, 1e-7], dtype=torch.float16))
print(torch.complex(x[0, 0, 0, :3], x[0, 0, 1, :3]))
print(torch.tensor([1 + 2j, float("nan") + 0j]), torch.tensor([1e5 + 1j]))
print(torch.rand(2, 3) > 0.5, torch.zeros(1500, dtype=torch.bool))
print((torch.rand(2, 2, 3) * 255).to(torch.uint8))
print(torch.zeros(2, 0, 3), torch.ones(0, dtype=torch.int32), torch.empty(0, 2, dtype=torch.float16))
print(torch.ones(2, 1, 1, 2) * 0.5)

# containers and formatting as logging code does it
stats = {"mean": x.mean(), "std": x.std(), "per_channel": x.mean((0, 2, 3))}
print(stats)
print([x.amax(), x.amin()], (out.argmax(1),))
print(f"loss={loss:.4f} | mean={x.mean().item():.3e} | {x.shape} {x.dtype}")
print("{:.2f}".format(torch.tensor(3.14159)), str(torch.tensor(2)), format(torch.tensor(1.5)))
print(torch._tensor_str.get_printoptions())

torch.set_default_dtype(torch.float64)
print(torch.tensor([1.0, 2.5]), torch.tensor([1.0, 2.5], dtype=torch.float32))
print(torch.ones(2, requires_grad=True) * 3, torch.tensor([1.0 + 1j]))
print(torch.arange(3.0), torch.linspace(0, 1, 3).dtype, nn.Linear(2, 1).weight.dtype)
torch.set_default_dtype(torch.float32)
print(torch.tensor([1.0, 2.5]), torch.tensor([1.0], dtype=torch.float64))
p = nn.Parameter(torch.tensor([[0.123456, -1.0]]))
print(p, p[0], p.T.contiguous())
print(repr(torch.tensor([0.1, 0.2]).sum()), torch.tensor([1.0, 2.0]).to(torch.float64).mean())
