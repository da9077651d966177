"""Keyword spotting on synthetic "utterances" (tone patterns per class): log-power spectrogram
features from torch.stft (center=False and reflect padding, normalized=True, a Hamming window),
an istft round trip, view_as_real, int16 PCM refused by stft then scaled to float,
SpecAugment-style time and frequency masks built with arange comparisons, a
depthwise-separable Conv1d model (groups, dilation, padding="same", BatchNorm1d, adaptive
pooling) trained with cross_entropy, and per-class accuracy."""
# tolerance: 1e-3
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SR, N, CLASSES = 1000, 400, 4
BASE = torch.tensor([80.0, 150.0, 230.0, 310.0])


def utterance(label, gen):
    t = torch.arange(N, dtype=torch.float32) / SR
    f0 = BASE[label] * (1 + 0.05 * torch.randn(1, generator=gen))
    sweep = f0 + 60.0 * t                 # a gentle up-chirp, the "keyword"
    phase = 2 * math.pi * torch.cumsum(sweep / SR, dim=0)
    env = torch.exp(-((t - 0.2) ** 2) / 0.01)
    return env * torch.sin(phase) + 0.1 * torch.randn(N, generator=gen)


gen = torch.Generator().manual_seed(7)
labels = torch.arange(CLASSES).repeat(6)
waves = torch.stack([utterance(int(y), gen) for y in labels])
print("waves", waves.shape, waves.dtype, round(waves.abs().max().item(), 4))

win = torch.hamming_window(64)
print("window", win.shape, round(win[0].item(), 5), round(win.sum().item(), 4))
spec = torch.stft(waves, n_fft=64, hop_length=32, window=win, center=True, pad_mode="reflect",
                  normalized=True, return_complex=True)
print("spec", spec.shape, spec.dtype)
spec_nc = torch.stft(waves[0], 64, hop_length=32, window=win, center=False, return_complex=True)
print("center=False", spec_nc.shape, round(spec_nc.abs().mean().item(), 4))
ri = torch.view_as_real(spec[0])
print("view_as_real", ri.shape, ri.dtype, round(ri[..., 0].pow(2).add(ri[..., 1].pow(2)).sum().item(), 3))
back = torch.istft(spec, n_fft=64, hop_length=32, window=win, center=True, normalized=True,
                   length=N)
print("istft", back.shape, round((back - waves).abs().max().item(), 4) < 1e-4)
try:
    torch.stft(waves[0], 64, window=win)
except RuntimeError as e:
    print("RuntimeError:", str(e).split(".")[0])
# audio read from a 16-bit WAV arrives as int16 PCM: stft wants floats
pcm = (waves / waves.abs().max() * 32767).round().to(torch.int16)
try:
    torch.stft(pcm[:2], 64, hop_length=32, window=win, center=False, return_complex=True)
except RuntimeError as e:
    print("RuntimeError:", str(e))
as_float = pcm.float() / 32768
print("pcm", pcm.dtype, pcm.abs().max().item(), round((as_float - waves / waves.abs().max()).abs().max().item(), 4))

power = spec.abs().pow(2)
logspec = torch.log(power + 1e-6)
mean = logspec.mean(dim=(0, 2), keepdim=True)
std = logspec.std(dim=(0, 2), keepdim=True)
feats = (logspec - mean) / std
print("features", feats.shape, feats.mean().abs().item() < 1e-5, round(feats.std().item(), 4))


def spec_augment(x, gen, max_f=4, max_t=3):
    b, f, t = x.shape
    fw = torch.randint(0, max_f + 1, (b, 1, 1), generator=gen)
    f0 = torch.randint(0, f - max_f, (b, 1, 1), generator=gen)
    tw = torch.randint(0, max_t + 1, (b, 1, 1), generator=gen)
    t0 = torch.randint(0, t - max_t, (b, 1, 1), generator=gen)
    fi = torch.arange(f).view(1, f, 1)
    ti = torch.arange(t).view(1, 1, t)
    mask = ((fi >= f0) & (fi < f0 + fw)) | ((ti >= t0) & (ti < t0 + tw))
    return x.masked_fill(mask, 0.0), mask


aug, mask = spec_augment(feats, gen)
print("specaugment", mask.dtype, mask.shape, int(mask.sum()), round(aug.abs().sum().item(), 3))


class DSConv(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.dw = nn.Conv1d(ch, ch, 3, padding="same", dilation=dilation, groups=ch, bias=False)
        self.pw = nn.Conv1d(ch, ch, 1, bias=False)   # BN follows: a bias would only see noise
        self.bn = nn.BatchNorm1d(ch)

    def forward(self, x):
        return x + F.relu(self.bn(self.pw(self.dw(x))))


class KWS(nn.Module):
    def __init__(self, n_freq, ch=24):
        super().__init__()
        self.stem = nn.Conv1d(n_freq, ch, 3, padding=1)
        self.blocks = nn.Sequential(DSConv(ch, 1), DSConv(ch, 2))
        self.avg = nn.AdaptiveAvgPool1d(1)
        self.max = nn.AdaptiveMaxPool1d(1)
        self.head = nn.Linear(2 * ch, CLASSES)

    def forward(self, x):
        h = self.blocks(F.relu(self.stem(x)))
        pooled = torch.cat([self.avg(h), self.max(h)], dim=1).flatten(1)
        return self.head(pooled)


model = KWS(feats.shape[1])
print(model.blocks[0])
print("dw weight", model.blocks[1].dw.weight.shape, "params", sum(p.numel() for p in model.parameters()))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(12):
    x, _ = spec_augment(feats, gen)
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad_fn {loss.grad_fn.name()}")

print("running_mean", model.blocks[0].bn.running_mean[:4], model.blocks[0].bn.num_batches_tracked)
model.eval()
with torch.no_grad():
    logits = model(feats)
    probs = logits.softmax(-1)
    pred = probs.argmax(-1)
print("pred", pred.tolist())
correct = (pred == labels).float()
per_class = torch.zeros(CLASSES).scatter_add_(0, labels, correct) / torch.bincount(labels)
print("per-class acc", per_class.tolist(), "acc", correct.mean().item())
print("confidence", probs.max(-1).values.mean().item() > 0.25, probs.sum(-1).allclose(torch.ones(len(labels))))
