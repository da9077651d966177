"""A spectral-mask speech-style denoiser: noisy chirps and tone bursts are turned into complex
spectrograms by torch.stft(return_complex=True) with a Hann window, a tiny Conv2d net predicts
a [0, 1] magnitude mask from the log-magnitude, the masked magnitude is recombined with the
noisy phase through torch.polar(mag, angle) and inverted with torch.istft; trained on an
SI-SNR-style loss plus a spectral L1 term, evaluated with SNR in dB. Also checks the STFT
round trip, onesided/centered variants, frame counts and the errors torch gives for bad
windows."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
SR, N_FFT, HOP, LEN = 800, 64, 16, 800
window = torch.hann_window(N_FFT)


def make_clean(batch, gen):
    t = torch.arange(LEN, dtype=torch.float32) / SR
    f0 = 40 + 60 * torch.rand(batch, 1, generator=gen)
    sweep = 80 * torch.rand(batch, 1, generator=gen)
    chirp = torch.sin(2 * math.pi * (f0 * t + 0.5 * sweep * t ** 2))
    gate = (torch.sin(2 * math.pi * 2.0 * t + torch.rand(batch, 1, generator=gen) * 6) > 0).float()
    return 0.6 * chirp * gate


def spec(x):
    return torch.stft(x, N_FFT, hop_length=HOP, window=window, center=True,
                      pad_mode="reflect", return_complex=True)


def snr_db(est, ref):
    noise = est - ref
    return 10 * torch.log10(ref.pow(2).sum(-1) / noise.pow(2).sum(-1).clamp_min(1e-12))


def si_snr(est, ref, eps=1e-8):
    est = est - est.mean(-1, keepdim=True)
    ref = ref - ref.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) / (ref.pow(2).sum(-1, keepdim=True) + eps) * ref
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


class MaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
            nn.Conv2d(8, 8, (5, 3), padding=(2, 1)), nn.LeakyReLU(0.1),
            nn.Conv2d(8, 1, 1))

    def forward(self, logmag):
        return torch.sigmoid(self.net(logmag.unsqueeze(1))).squeeze(1)


def denoise(model, noisy):
    X = spec(noisy)
    mag, phase = X.abs(), torch.angle(X)
    mask = model(torch.log1p(mag))
    Y = torch.polar(mask * mag, phase)
    return torch.istft(Y, N_FFT, hop_length=HOP, window=window, length=noisy.shape[-1]), mask


gen = torch.Generator().manual_seed(3)
clean = make_clean(6, gen)
noisy = clean + 0.3 * torch.randn(clean.shape, generator=gen)
X = spec(noisy)
print("stft", X.shape, X.dtype, "frames", 1 + LEN // HOP)
print("window", window[:4], window.sum().item())
print("noisy snr", snr_db(noisy, clean))
rt = torch.istft(X, N_FFT, hop_length=HOP, window=window, length=LEN)
print("round trip close", torch.allclose(rt, noisy, atol=1e-5))
mag, ph = X.abs(), X.angle()
rebuilt = torch.polar(mag, ph)
print("polar rebuild close", torch.allclose(rebuilt, X, atol=1e-5), rebuilt.dtype)
print("bin 5 frame 3", X[0, 5, 3], "mag %.5f phase %.5f" % (mag[0, 5, 3].item(), ph[0, 5, 3].item()))

model = MaskNet()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=1e-4)
for step in range(8):
    model.train()
    opt.zero_grad()
    est, mask = denoise(model, noisy)
    l_time = -si_snr(est, clean).mean()
    l_spec = F.l1_loss(spec(est).abs(), spec(clean).abs())
    loss = l_time + 0.5 * l_spec
    loss.backward()
    opt.step()
    sched.step()
    print("step %d loss %.5f sisnr %.5f spec %.5f mask mean %.5f lr %.6f" % (
        step, loss.item(), -l_time.item(), l_spec.item(), mask.mean().item(),
        sched.get_last_lr()[0]))
print("conv grad norm %.5f" % model.net[0].weight.grad.norm().item())
print("est grad_fn", est.grad_fn.name(), "mask grad_fn", mask.grad_fn.name())

model.eval()
with torch.no_grad():
    test_clean = make_clean(4, gen)
    test_noisy = test_clean + 0.3 * torch.randn(test_clean.shape, generator=gen)
    est, mask = denoise(model, test_noisy)
    print("test snr in ", snr_db(test_noisy, test_clean))
    print("test snr out", snr_db(est, test_clean))
    print("test si-snr", si_snr(est, test_clean))

# gradient through stft / polar / istft to the waveform itself
x = noisy[:1].clone().requires_grad_(True)
S = spec(x)
print("stft grad_fn", S.grad_fn.name(), "abs", S.abs().grad_fn.name(), "angle", S.angle().grad_fn.name())
P = torch.polar(S.abs(), S.angle())
print("polar grad_fn", P.grad_fn.name())
back = torch.istft(P * 0.5, N_FFT, hop_length=HOP, window=window, length=LEN)
print("istft grad_fn", back.grad_fn.name())
back.pow(2).sum().backward()
print("waveform grad norm %.5f" % x.grad.norm().item(), "first", x.grad[0, :3])

# variants and shapes
y1 = torch.randn(2, 100)
for kw in [dict(center=False), dict(onesided=False), dict(normalized=True),
           dict(hop_length=7, win_length=20, window=torch.hamming_window(20)),
           dict(pad_mode="constant")]:
    s = torch.stft(y1, 32, return_complex=True, window=kw.pop("window", torch.hann_window(32)), **kw)
    print(sorted(kw.items()), tuple(s.shape), "%.5f" % s.abs().sum().item())
s_real = torch.view_as_real(torch.stft(y1[0], 16, window=torch.hann_window(16), return_complex=True))
print("view_as_real", s_real.shape, s_real[1, 2])
for bad in [lambda: torch.stft(y1, 32, window=torch.hann_window(20), return_complex=True),
            lambda: torch.stft(y1, 32, window=torch.hann_window(32)),
            lambda: torch.stft(y1, 32, hop_length=0, window=torch.hann_window(32), return_complex=True),
            lambda: torch.istft(torch.randn(2, 17, 5), 32, window=torch.hann_window(32)),
            lambda: torch.stft(y1, 200, window=torch.hann_window(200), return_complex=True, center=False)]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
