"""Classic DSP in PyTorch: a noisy two-tone signal cleaned three ways - a windowed-sinc FIR
low-pass (hamming / blackman / kaiser windows) applied with F.conv1d, a brick-wall filter in
the frequency domain with torch.fft.rfft / rfftfreq / irfft, and spectral gating on an STFT
(hann window, hop, center and onesided options) inverted with torch.istft; then an FIR filter
learnt by gradient descent on a frequency-response target, and the errors people hit."""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(3)
FS = 200.0
N = 400
t = torch.arange(N) / FS
clean = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 12 * t)
noisy = clean + 0.4 * torch.sin(2 * math.pi * 60 * t) + 0.2 * torch.randn(N)
print("signal", noisy.shape, noisy.dtype, f"{noisy.std().item():.5f}")


def snr_db(x):
    return 10 * torch.log10(clean.pow(2).sum() / (x - clean).pow(2).sum()).item()


print("snr noisy", f"{snr_db(noisy):.3f}")

# windowed-sinc low-pass FIR design
TAPS, CUTOFF = 41, 20.0
n = torch.arange(TAPS) - (TAPS - 1) / 2
ideal = 2 * CUTOFF / FS * torch.sinc(2 * CUTOFF / FS * n)
windows = {
    "hamming": torch.hamming_window(TAPS, periodic=False),
    "blackman": torch.blackman_window(TAPS, periodic=False),
    "kaiser": torch.kaiser_window(TAPS, periodic=False, beta=6.0),
}
for name, w in windows.items():
    h = ideal * w
    h = h / h.sum()
    out = F.conv1d(noisy.view(1, 1, -1), h.flip(0).view(1, 1, -1), padding=TAPS // 2).view(-1)
    response = torch.fft.rfft(h, n=256).abs()
    freqs = torch.fft.rfftfreq(256, d=1 / FS)
    stop = response[freqs >= 40].max()
    print("fir", name, out.shape, f"{w[TAPS // 2].item():.4f}", f"{w[0].item():.5f}",
          f"snr {snr_db(out):.3f}", f"stopband {20 * torch.log10(stop).item():.2f} dB")
print("periodic", [f"{v:.4f}" for v in torch.hann_window(6).tolist()],
      [f"{v:.4f}" for v in torch.hann_window(6, periodic=False).tolist()])

# frequency-domain brick wall
spec = torch.fft.rfft(noisy)
freqs = torch.fft.rfftfreq(N, d=1 / FS)
print("rfft", spec.shape, spec.dtype, freqs.shape, freqs[:3].tolist(), freqs[-1].item())
peaks = spec.abs().topk(3).indices.sort().values
print("peaks Hz", freqs[peaks].tolist())
masked = torch.where(freqs <= CUTOFF, spec, torch.zeros_like(spec))
brick = torch.fft.irfft(masked, n=N)
print("brick", brick.shape, brick.dtype, f"snr {snr_db(brick):.3f}")
centered = torch.fft.fftshift(torch.fft.fftfreq(8, d=0.5))
print("fftshift", centered.tolist(), torch.fft.ifftshift(centered).tolist())

# spectral gating on an STFT
N_FFT, HOP = 64, 16
window = torch.hann_window(N_FFT)
S = torch.stft(noisy, N_FFT, hop_length=HOP, window=window, return_complex=True)
print("stft", S.shape, S.dtype)
mag = S.abs()
noise_floor = mag.median()
gate = (mag > 3 * noise_floor).to(S.dtype)
gated = torch.istft(S * gate, N_FFT, hop_length=HOP, window=window, length=N)
print("gated", gated.shape, f"kept {gate.real.mean().item():.4f}", f"snr {snr_db(gated):.3f}")
recon = torch.istft(S, N_FFT, hop_length=HOP, window=window, length=N)
print("istft roundtrip", f"{(recon - noisy).abs().max().item():.2e}")
S2 = torch.stft(noisy, N_FFT, hop_length=HOP, window=window, center=False,
                normalized=True, onesided=False, return_complex=True)
print("stft2", S2.shape, f"{S2.abs().sum().item():.4f}")
power = torch.stft(noisy, 32, hop_length=8, window=torch.hamming_window(32),
                   return_complex=True).abs().pow(2)
print("power", power.shape, f"{power.sum(dim=1).argmax().item()}",
      f"{power.mean().item():.5f}")

# learn a 15-tap FIR whose magnitude response matches a target band-pass
taps = (0.1 * torch.randn(15)).requires_grad_()
grid = torch.fft.rfftfreq(128, d=1 / FS)
target = ((grid > 8) & (grid < 30)).float()
opt = torch.optim.Adam([taps], lr=0.05)
for it in range(30):
    opt.zero_grad()
    H = torch.fft.rfft(taps, n=128)
    loss = (H.abs() - target).pow(2).mean()
    loss.backward()
    opt.step()
    if it % 10 == 9:
        print("fir fit", it, f"{loss.item():.6f}", f"{taps.grad.abs().max().item():.6f}")
print("H", H.grad_fn.name(), H.abs().grad_fn.name(), H.dtype)
y = F.conv1d(noisy.view(1, 1, -1), taps.detach().view(1, 1, -1))
print("filtered", y.shape, f"{y.std().item():.5f}")

try:
    torch.stft(noisy, N_FFT, window=window)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0][:120])
try:
    torch.stft(noisy, N_FFT, window=torch.hann_window(32), return_complex=True)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    F.conv1d(noisy.view(1, -1), torch.ones(1, 2, 3))
except RuntimeError as e:
    print("RuntimeError:", e)
