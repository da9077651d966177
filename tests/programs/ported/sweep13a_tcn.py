"""A temporal conv net on waveforms: causal dilated Conv1d through left F.pad, the
torch.nn.utils.parametrizations.weight_norm wrapper, residual blocks with 1x1 downsampling,
a spectral L1 loss on torch.stft(..., return_complex=True).abs() with a Hann window,
torch.istft back to the waveform, and OneCycleLR driving Adam."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)


class CausalConv(nn.Module):
    def __init__(self, cin, cout, k, dilation):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv = weight_norm(nn.Conv1d(cin, cout, k, dilation=dilation))

    def forward(self, x):
        return self.conv(F.pad(x, (self.pad, 0)))


class Block(nn.Module):
    def __init__(self, cin, cout, dilation):
        super().__init__()
        self.c1 = CausalConv(cin, cout, 3, dilation)
        self.c2 = CausalConv(cout, cout, 3, dilation)
        self.down = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = F.relu(self.c1(x))
        h = F.dropout(h, 0.1, self.training)
        return F.relu(self.c2(h) + self.down(x))


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(1, 6, 1), Block(6, 6, 2), Block(6, 6, 4))
        self.out = nn.Conv1d(6, 1, 1)

    def forward(self, x):
        return self.out(self.blocks(x))


n = 128
t = torch.arange(n) / 64.0
clean = torch.sin(2 * math.pi * 3 * t) + 0.5 * torch.sin(2 * math.pi * 11 * t)
noisy = clean + 0.3 * torch.randn(2, n)
win = torch.hann_window(32)


def spectral_l1(a, b):
    sa = torch.stft(a, n_fft=32, hop_length=8, window=win, return_complex=True)
    sb = torch.stft(b, n_fft=32, hop_length=8, window=win, return_complex=True)
    return (sa.abs() - sb.abs()).abs().mean(), sa


model = TCN()
conv = model.blocks[0].c1.conv
print("parametrized", type(conv).__name__, [name for name, _ in conv.named_parameters()])
print("weight", conv.weight.shape, conv.parametrizations.weight.original0.shape)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.02, total_steps=5, pct_start=0.4)
model.train()
for step in range(5):
    out = model(noisy.unsqueeze(1)).squeeze(1)
    spec_loss, spec = spectral_l1(out, clean.expand(2, n))
    loss = F.l1_loss(out, clean.expand(2, n)) + spec_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(step, f"{loss.item():.5f}", f"{spec_loss.item():.5f}", f"lr={sched.get_last_lr()[0]:.6f}",
          f"beta1={opt.param_groups[0]['betas'][0]:.4f}")
print("spec", spec.shape, spec.dtype, spec_loss.grad_fn.name(), out.grad_fn.name())
g = conv.parametrizations.weight.original0.grad
print("g grad", g.shape, g.abs().sum() > 0)

model.eval()
with torch.no_grad():
    x = noisy[:1].unsqueeze(1)
    y1 = model(x)
    x2 = x.clone()
    x2[..., 100:] += 5.0
    y2 = model(x2)
    print("causal", torch.allclose(y1[..., :100], y2[..., :100]), (y1[..., 100:] - y2[..., 100:]).abs().max() > 0)
    rf = 1 + 2 * 2 * (1 + 2 + 4)
    print("receptive field", rf)
    spec = torch.stft(y1.squeeze(1), n_fft=32, hop_length=8, window=win, return_complex=True)
    back = torch.istft(spec, n_fft=32, hop_length=8, window=win, length=n)
    print("istft", back.shape, torch.allclose(back, y1.squeeze(1), atol=1e-5))
    mag = spec.abs()
    print("mag", mag.shape, f"{mag.sum().item():.4f}", mag.argmax(1).tolist()[0][:6])

plain = nn.utils.parametrize.remove_parametrizations(conv, "weight")
print("removed", type(plain).__name__, [name for name, _ in plain.named_parameters()])
lin = weight_norm(nn.Linear(3, 2), dim=None)
print("dim=None", lin.parametrizations.weight.original0.shape, lin.parametrizations.weight.original0.dim())
try:
    torch.stft(noisy, n_fft=32, hop_length=8, window=win)
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0])
