"""Preparing a trained CNN for inference: train Conv-BN-ReLU blocks briefly, switch to eval,
fold each BatchNorm into its conv with torch.nn.utils.fusion.fuse_conv_bn_eval (and a
Linear+BatchNorm1d head with fuse_linear_bn_eval), replace the BN layers with nn.Identity,
compare outputs, then run under torch.inference_mode with channels_last inputs and bfloat16."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

torch.manual_seed(0)


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


net = nn.Sequential(block(3, 6), nn.MaxPool2d(2), block(6, 8), nn.AdaptiveAvgPool2d(1),
                    nn.Flatten(), nn.Linear(8, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
X = torch.randn(16, 3, 8, 8)
Y = torch.randint(0, 3, (16,))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(6):
    loss = F.cross_entropy(net(X), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.5f}", net[0][1].num_batches_tracked, net[6].running_var[:3])

net.eval()
with torch.no_grad():
    ref = net(X)
fused = nn.Sequential(
    fuse_conv_bn_eval(net[0][0], net[0][1]), nn.ReLU(), nn.MaxPool2d(2),
    fuse_conv_bn_eval(net[2][0], net[2][1]), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    fuse_linear_bn_eval(net[5], net[6]), nn.ReLU(), net[8])
print(fused[0], fused[0].bias is not None, type(fused[0].weight).__name__, fused[0].weight.requires_grad)
with torch.no_grad():
    out = fused(X)
print(f"max diff {(out - ref).abs().max().item() < 1e-5}", out.argmax(1))
print(sum(p.numel() for p in net.parameters()), sum(p.numel() for p in fused.parameters()))

net[0][1] = nn.Identity()
print(net[0])

with torch.inference_mode():
    xc = X.to(memory_format=torch.channels_last)
    print(xc.is_contiguous(), xc.is_contiguous(memory_format=torch.channels_last), xc.stride())
    o = fused(xc)
    print(o.is_inference(), o.requires_grad, torch.allclose(o, out, atol=1e-5))
    fb = fused.to(torch.bfloat16)
    ob = fb(X.bfloat16())
    print(ob.dtype, (ob.float().argmax(1) == out.argmax(1)).float().mean().item() > 0.5)
try:
    fuse_conv_bn_eval(net[2][0].train(), net[2][1])
except AssertionError as e:
    print("AssertionError", e)
