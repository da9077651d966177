# A SegNet-style encoder/decoder (pooling indices reused by MaxUnpool2d) whose shapes are
# inferred by lazy modules, with a zoo of less common layers from mobile/AlexNet-era networks.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SegNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.enc1 = nn.Sequential(nn.LazyConv2d(8, 3, padding=1), nn.LazyBatchNorm2d(),
                                  nn.Hardswish())
        self.enc2 = nn.Sequential(nn.CircularPad2d(1), nn.Conv2d(8, 8, 3, groups=2),
                                  nn.ChannelShuffle(2), nn.Mish())
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.unpool = nn.MaxUnpool2d(2)
        self.dec = nn.Sequential(nn.ZeroPad2d((1, 1, 1, 1)), nn.Conv2d(8, 8, 3),
                                 nn.LocalResponseNorm(3), nn.RReLU())
        self.out = nn.LazyConv2d(classes, 1)

    def forward(self, x):
        x = self.enc1(x)
        x, idx1 = self.pool(x)
        size1 = x.shape
        x = self.enc2(x)
        x, idx2 = self.pool(x)
        x = self.unpool(x, idx2, output_size=size1)
        x = self.unpool(x, idx1)
        return self.out(self.dec(x))


def dice_loss(logits, target, eps=1.0):
    probs = nn.Softmax2d()(logits)
    onehot = F.one_hot(target, logits.size(1)).permute(0, 3, 1, 2).float()
    inter = (probs * onehot).sum((0, 2, 3))
    union = probs.sum((0, 2, 3)) + onehot.sum((0, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


net = SegNet()
print(net.enc1)
print("lazy?", net.enc1[0].has_uninitialized_params(), type(net.enc1[0].weight).__name__)
x = torch.randn(2, 2, 8, 8)
target = (x[:, 0] > 0).long() + (x[:, 1] > 1).long()
out = net(x)
print(net.enc1, net.out)
print("materialized", type(net.enc1[0]).__name__, net.enc1[0].weight.shape,
      net.enc1[1].running_mean.shape, net.out.weight.shape)
print("out", out.shape, out.grad_fn.name())
print("params", sum(p.numel() for p in net.parameters()))

opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
for step in range(4):
    out = net(x)
    ce = F.cross_entropy(out, target)
    dl = dice_loss(out, target)
    loss = ce + dl
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{ce.item():.5f}", f"{dl.item():.5f}", dl.grad_fn.name())

net.eval()
with torch.no_grad():
    pred = net(x).argmax(1)
    print("pixel acc", (pred == target).float().mean().item(), pred.shape, pred.dtype)
    print("bn", net.enc1[1].running_var[:3], net.enc1[1].num_batches_tracked)

# the pooling/unpooling pair on its own
t = torch.arange(16.).view(1, 1, 4, 4)
pooled, idx = F.max_pool2d(t, 2, return_indices=True)
print(pooled, idx)
print(F.max_unpool2d(pooled, idx, 2))
print(F.max_unpool2d(pooled, idx, 2, output_size=(5, 5)).shape)
print(nn.LPPool2d(2, 2)(t), nn.LPPool1d(1, 2)(t[0, :, 0]))
print(nn.ChannelShuffle(3)(torch.arange(6.).view(1, 6, 1, 1)).flatten())
print(nn.CircularPad1d((2, 1))(torch.arange(4.).view(1, 1, 4)))
print(nn.Unflatten(1, (2, 3))(torch.arange(12.).view(2, 6)).shape)
print(nn.Softmin(dim=0)(torch.tensor([1., 2., 3.])), nn.Threshold(0.5, -1.)(torch.tensor([0.2, 0.8])))
print(nn.RReLU(0.1, 0.3).eval()(torch.tensor([-1., 2.])))
print(F.hardswish(torch.tensor([-4., -1., 0.5, 4.])), F.mish(torch.tensor([-1., 1.])))
y = torch.tensor([-2., 0.5], requires_grad=True)
F.hardswish(y).sum().backward()
print(y.grad, F.hardswish(y).grad_fn.name(), F.mish(y).grad_fn.name())

errors = [
    lambda: F.max_unpool2d(pooled, idx, 2, output_size=(7, 7)),
    lambda: nn.ChannelShuffle(4)(torch.zeros(1, 6, 2, 2)),
    lambda: nn.LazyLinear(3).weight.shape,
    lambda: nn.CircularPad2d(5)(torch.zeros(1, 1, 2, 2)),
]
for f in errors:
    try:
        f()
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e).splitlines()[0])
