"""Audio features and a spectral loss: torch.stft / istft with a Hann window (center=True,
return_complex=True), magnitude and phase via abs / angle, a mel filterbank built by hand,
log-mel features with clamp_min / log10, torch.fft.rfft / irfft, and a multi-resolution STFT
loss whose gradients train a tiny conv1d generator."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
sr, n = 800, 512
t = torch.arange(n) / sr
wave = 0.6 * torch.sin(2 * math.pi * 50 * t) + 0.3 * torch.sin(2 * math.pi * 130 * t)
wave = wave + 0.05 * torch.randn(n)

win = torch.hann_window(64)
spec = torch.stft(wave, n_fft=64, hop_length=16, win_length=64, window=win, center=True,
                  return_complex=True)
print("spec", spec.shape, spec.dtype, spec.is_complex())
mag, phase = spec.abs(), spec.angle()
print("mag", mag.shape, round(mag.sum().item(), 3), "peak bins", mag.mean(1).topk(2).indices.tolist())
print("phase", phase.dtype, round(phase[4].abs().mean().item(), 4), torch.angle(torch.tensor([-1.0, -0.0, 0.0, 2.0])))
recon = torch.istft(spec, n_fft=64, hop_length=16, win_length=64, window=win, center=True, length=n)
print("istft", recon.shape, recon.dtype, (recon - wave).abs().max().item() < 1e-5)
polar = torch.polar(mag, phase)
print("polar", polar.dtype, round((polar - spec).abs().max().item(), 4))


def mel_filterbank(n_freqs, n_mels, sr):
    def hz_to_mel(f):
        return 2595.0 * torch.log10(1.0 + f / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)

    freqs = torch.linspace(0, sr / 2, n_freqs)
    mels = torch.linspace(hz_to_mel(torch.tensor(0.0)).item(), hz_to_mel(torch.tensor(sr / 2)).item(), n_mels + 2)
    pts = mel_to_hz(mels)
    lower = (freqs[None, :] - pts[:-2, None]) / (pts[1:-1, None] - pts[:-2, None])
    upper = (pts[2:, None] - freqs[None, :]) / (pts[2:, None] - pts[1:-1, None])
    return torch.clamp(torch.minimum(lower, upper), min=0.0)   # (n_mels, n_freqs)


fb = mel_filterbank(33, 8, sr)
print("filterbank", fb.shape, [round(v, 4) for v in fb.sum(1).tolist()])
mel = fb @ mag.pow(2)
logmel = torch.log10(mel.clamp_min(1e-5))
print("logmel", logmel.shape, round(logmel.mean().item(), 4), round(logmel.std().item(), 4))

# mu-law companding (WaveNet): 256 codes and back
mu = 255
enc = torch.sign(wave) * torch.log1p(mu * wave.abs()) / math.log1p(mu)
codes = ((enc + 1) / 2 * mu + 0.5).long()
dec = torch.sign(2 * codes / mu - 1) * ((1 + mu) ** (2 * codes / mu - 1).abs() - 1) / mu
print("mu-law", codes[:8].tolist(), codes.dtype, round((dec - wave).abs().max().item(), 4))

# rfft / irfft round trip and a spectral low-pass
F_ = torch.fft.rfft(wave)
print("rfft", F_.shape, F_.dtype, torch.fft.rfftfreq(n, 1 / sr)[F_.abs().topk(2).indices].tolist())
F_[100:] = 0
low = torch.fft.irfft(F_, n=n)
print("lowpass", low.shape, round(low.pow(2).mean().item(), 5), round(wave.pow(2).mean().item(), 5))


def stft_mag(x, n_fft, hop):
    s = torch.stft(x, n_fft, hop_length=hop, window=torch.hann_window(n_fft, device=x.device),
                   return_complex=True)
    return s.abs().clamp_min(1e-7)


def mr_stft_loss(pred, target, res=((32, 8), (64, 16), (128, 32))):
    total = 0.0
    for n_fft, hop in res:
        p, q = stft_mag(pred, n_fft, hop), stft_mag(target, n_fft, hop)
        sc = torch.linalg.norm(q - p, ord="fro", dim=(-2, -1)) / torch.linalg.norm(q, ord="fro", dim=(-2, -1))
        lm = F.l1_loss(torch.log1p(p), torch.log1p(q))   # log1p: compressed magnitudes
        total = total + sc.mean() + lm
    return total / len(res)


gen = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.Tanh(), nn.Conv1d(8, 1, 9, padding=4))
noise = torch.randn(2, 1, n)
target = torch.stack([wave, torch.roll(wave, 7)])
opt = torch.optim.Adam(gen.parameters(), lr=3e-3)
for step in range(5):
    out = gen(noise).squeeze(1)
    loss = mr_stft_loss(out, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} mr-stft {loss.item():.5f} grad {gen[0].weight.grad.norm().item():.5f}")
print(loss.grad_fn.name(), out.shape)
x = torch.randn(n, requires_grad=True)
y = torch.stft(x, 32, hop_length=8, window=torch.hann_window(32), return_complex=True)
y.abs().sum().backward()
print(y.grad_fn.name(), x.grad.shape, round(x.grad.abs().sum().item(), 3))
try:
    torch.stft(wave, 64)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
try:
    torch.fft.rfft(torch.zeros(0))   # an empty frame
except RuntimeError as e:
    print("RuntimeError:", e)
