"""A tiny PixelCNN: masked convolutions (type A then B, the mask a registered buffer applied with
`self.weight.data *= self.mask` in forward), 256-way cross entropy per sub-pixel on logits shaped
[B, 256, C, H, W] (both the K-dimensional form and the reshaped 2-D form), and sampling a 4x4
image pixel by pixel with torch.multinomial under torch.no_grad with a seeded generator."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", self.weight.data.clone())
        _, _, kh, kw = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kh // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super().forward(x)


class PixelCNN(nn.Module):
    def __init__(self, channels=1, hidden=8, levels=256):
        super().__init__()
        self.channels, self.levels = channels, levels
        layers = [MaskedConv2d("A", channels, hidden, 5, padding=2, bias=False),
                  nn.BatchNorm2d(hidden), nn.ReLU(True)]
        for _ in range(2):
            layers += [MaskedConv2d("B", hidden, hidden, 3, padding=1, bias=False),
                       nn.BatchNorm2d(hidden), nn.ReLU(True)]
        layers.append(nn.Conv2d(hidden, levels * channels, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        b, c, h, w = x.shape
        return self.net(x).view(b, self.levels, c, h, w)


model = PixelCNN()
first = model.net[0]
print(first)
print("mask A", first.mask[0, 0])
print("mask B", model.net[3].mask[0, 0].tolist())
print("buffers", [n for n, _ in model.named_buffers()][:4], first.mask.requires_grad)
print("state", [k for k in model.state_dict() if k.startswith("net.0")])
data = torch.randint(0, 256, (3, 1, 4, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(4):
    logits = model(data.float() / 255.0)
    loss = F.cross_entropy(logits, data)
    flat = F.cross_entropy(logits.permute(0, 2, 3, 4, 1).reshape(-1, 256), data.view(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    bits = loss.item() / torch.log(torch.tensor(2.0)).item()
    print(step, f"nll {loss.item():.5f} flat {flat.item():.5f} bits/dim {bits:.4f}")
print("logits", logits.shape, logits.grad_fn.name(), loss.grad_fn.name())
masked = first.weight.data[0, 0]
print("masked weight zeros", (masked == 0).sum().item(), first.weight.grad[0, 0, 2])
print("weight version", first.weight._version > 0, first.weight.is_leaf)

model.eval()
gen = torch.Generator().manual_seed(1234)
sample = torch.zeros(2, 1, 4, 4)
with torch.no_grad():
    for i in range(4):
        for j in range(4):
            probs = F.softmax(model(sample)[:, :, 0, i, j], dim=1)
            pixel = torch.multinomial(probs, 1, generator=gen)
            sample[:, 0, i, j] = pixel.squeeze(1).float() / 255.0
print("sample", (sample * 255).round().long()[0, 0])
print("sample grad", sample.requires_grad, probs.shape, probs.sum(1))
print("multinomial", torch.multinomial(torch.tensor([0.1, 0.0, 0.9]), 4, replacement=True, generator=gen))
print("no replacement", torch.multinomial(torch.tensor([[1.0, 2.0, 3.0, 4.0]]), 3, generator=gen))
for bad in (lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1),
            lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1),
            lambda: torch.multinomial(torch.tensor([0.2, 0.8]), 3),
            lambda: F.cross_entropy(logits, data.float())):
    try:
        bad()
    except RuntimeError as e:
        print("RuntimeError", e)
