"""A small ResNet: BasicBlock with BatchNorm2d, shortcut conv, AdaptiveAvgPool2d, train/eval."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, stride=2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = torch.flatten(self.pool(out), 1)
        return self.fc(self.dropout(out))


model = ResNet()
print(model)
total = sum(p.numel() for p in model.parameters())
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"Total params: {total:,} trainable: {trainable:,}")
print("buffers:", [(n, tuple(b.shape)) for n, b in model.named_buffers()][:4])
print(len(list(model.modules())), len(list(model.children())))

x = torch.randn(6, 3, 8, 8)
y = torch.randint(0, 5, (6,))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
for step in range(3):
    model.train()
    opt.zero_grad()
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    acc = (out.argmax(1) == y).float().mean()
    print(f"step {step} loss {loss.item():.4f} acc {acc.item():.4f} train={model.training}")

print(model.bn1.num_batches_tracked, model.layer1[0].bn1.training)
print(f"running_mean {model.bn1.running_mean.sum().item():.4f} running_var {model.bn1.running_var.sum().item():.4f}")
model.eval()
print(model.training, model.layer1[0].bn1.training, model.dropout.training)
with torch.no_grad():
    e1 = model(x)
    e2 = model(x)
print(torch.equal(e1, e2), e1.shape)
print(f"eval logits sum {e1.sum().item():.4f}")
with torch.inference_mode():
    probs = model(x[:2]).softmax(dim=1)
print(probs.is_inference(), [f"{v:.4f}" for v in probs[0].tolist()])
model.train()
print(model.training, model.layer2[0].shortcut[1].training)
grads = {n: p.grad.norm().item() for n, p in model.named_parameters() if "shortcut" in n}
for n, g in grads.items():
    print(n, f"{g:.4f}")
