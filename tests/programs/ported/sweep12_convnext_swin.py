"""ConvNeXt and Swin building blocks: a depthwise 7x7 conv (groups=C), NHWC LayerNorm through
permute, GELU(approximate='tanh'), a layer-scale gamma, shifted windows with torch.roll, window
partition/merge with view/permute/contiguous, a relative position bias table indexed through
meshgrid/flatten, AdamW with no weight decay for norms and biases, warmup+cosine via LambdaLR."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU(approximate="tanh")
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-1 * torch.ones(dim))

    def forward(self, x):
        y = self.dwconv(x).permute(0, 2, 3, 1)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


def window_partition(x, w):
    B, H, W, C = x.shape
    x = x.view(B, H // w, w, W // w, w, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, w * w, C)


def window_merge(windows, w, H, W):
    B = windows.shape[0] // ((H // w) * (W // w))
    x = windows.view(B, H // w, W // w, w, w, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class WindowAttention(nn.Module):
    def __init__(self, dim, window, heads, shift):
        super().__init__()
        self.window, self.heads, self.shift = window, heads, shift
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.table = nn.Parameter(torch.zeros((2 * window - 1) ** 2, heads))
        nn.init.trunc_normal_(self.table, std=0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window),
                                            indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
        rel += window - 1
        rel[:, :, 0] *= 2 * window - 1
        self.register_buffer("index", rel.sum(-1), persistent=False)

    def forward(self, x):
        B, H, W, C = x.shape
        if self.shift:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = window_partition(x, self.window)
        n = win.shape[1]  # tokens per window
        q, k, v = self.qkv(win).reshape(-1, n, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q * (C // self.heads) ** -0.5) @ k.transpose(-2, -1)
        bias = self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1)
        attn = (attn + bias.unsqueeze(0)).softmax(-1)  # (no mask: the shifted windows mix)
        out = window_merge(self.proj((attn @ v).transpose(1, 2).reshape(-1, n, C)), self.window, H, W)
        if self.shift:
            out = torch.roll(out, shifts=(self.shift, self.shift), dims=(1, 2))
        return out


class Net(nn.Module):
    def __init__(self, dim=8, classes=3):
        super().__init__()
        self.stem = nn.Conv2d(3, dim, 2, stride=2)
        self.block = ConvNeXtBlock(dim)
        self.attn = nn.ModuleList([WindowAttention(dim, 2, 2, 0), WindowAttention(dim, 2, 2, 1)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.block(self.stem(x)).permute(0, 2, 3, 1)
        for a in self.attn:
            x = x + a(x)
        return self.head(self.norm(x).mean((1, 2)))


model = Net()
print(model.block, "\nindex", model.attn[0].index.tolist())
decay = [p for n, p in model.named_parameters() if p.ndim > 1 and "table" not in n]
no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1 or "table" in n]
print("groups", len(decay), len(no_decay))
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=2e-3)
warmup, total = 2, 5
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / warmup if s < warmup
    else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))))
x, y = torch.randn(2, 3, 8, 8), torch.tensor([0, 2])
for step in range(total):
    out = model(x)
    loss = F.cross_entropy(out, y, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(step, f"{loss.item():.5f}", [f"{lr:.6f}" for lr in sched.get_last_lr()], out.grad_fn.name())
print("table grad", model.attn[1].table.grad.shape, f"{model.attn[1].table.grad.abs().sum():.5f}")
print("gamma", model.block.gamma.data[:4])
