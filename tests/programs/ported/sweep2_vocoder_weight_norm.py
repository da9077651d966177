"""A tiny HiFi-GAN-style vocoder as in TTS repositories: the deprecated hook-based
torch.nn.utils.weight_norm on every conv (weight_g / weight_v parameters), ConvTranspose1d
upsampling, dilated residual blocks with leaky_relu and padding helpers, an L1 + STFT magnitude
loss (torch.stft with a Hann window), AdamW with ExponentialLR, then remove_weight_norm for
inference and a state_dict round trip into the parametrization-based weight_norm."""
# tolerance: 1e-3
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import remove_weight_norm, weight_norm

warnings.simplefilter("ignore", FutureWarning)
torch.manual_seed(0)
LRELU = 0.1


def get_padding(k, d=1):
    return (k * d - d) // 2


def init_weights(m, mean=0.0, std=0.02):
    if "Conv" in m.__class__.__name__:
        m.weight.data.normal_(mean, std)


class ResBlock(nn.Module):
    def __init__(self, ch, k=3, dilations=(1, 3)):
        super().__init__()
        self.convs = nn.ModuleList([weight_norm(nn.Conv1d(ch, ch, k, 1, dilation=d, padding=get_padding(k, d)))
                                    for d in dilations])
        self.convs.apply(init_weights)

    def forward(self, x):
        for c in self.convs:
            x = x + c(F.leaky_relu(x, LRELU))
        return x

    def remove_weight_norm(self):
        for c in self.convs:
            remove_weight_norm(c)


class Generator(nn.Module):
    def __init__(self, n_mels=4, ch=8):
        super().__init__()
        self.pre = weight_norm(nn.Conv1d(n_mels, ch, 5, 1, padding=2))
        self.ups = nn.ModuleList([weight_norm(nn.ConvTranspose1d(ch, ch // 2, 4, 2, padding=1)),
                                  weight_norm(nn.ConvTranspose1d(ch // 2, ch // 4, 4, 2, padding=1))])
        self.res = nn.ModuleList([ResBlock(ch // 2), ResBlock(ch // 4, dilations=(1, 2))])
        self.post = weight_norm(nn.Conv1d(ch // 4, 1, 5, 1, padding=2))
        self.ups.apply(init_weights)
        self.post.apply(init_weights)

    def forward(self, mel):
        x = self.pre(mel)
        for up, res in zip(self.ups, self.res):
            x = res(up(F.leaky_relu(x, LRELU)))
        return torch.tanh(self.post(F.leaky_relu(x)))

    def remove_weight_norm(self):
        for m in [self.pre, *self.ups, self.post]:
            remove_weight_norm(m)
        for r in self.res:
            r.remove_weight_norm()


def stft_mag(x, n_fft=16, hop=4):
    spec = torch.stft(x, n_fft, hop_length=hop, win_length=n_fft, window=torch.hann_window(n_fft),
                      return_complex=True)
    return spec.abs().clamp(min=1e-5)


t = torch.arange(64.) / 64
wave = (torch.sin(2 * torch.pi * 3 * t) * 0.5 + 0.1 * torch.sin(2 * torch.pi * 11 * t))[None].repeat(2, 1)
wave[1] *= 0.7
mel = F.avg_pool1d(wave[:, None], 4).repeat(1, 4, 1) + 0.01 * torch.randn(2, 4, 16)

G = Generator()
print(G.pre, G.ups[0])
print([n for n, _ in G.named_parameters()][:6])
print(G.pre.weight_g.shape, G.ups[0].weight_g.shape, G.pre.weight.grad_fn.name())
opt = torch.optim.AdamW(G.parameters(), lr=2e-3, betas=(0.8, 0.99))
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
for step in range(12):
    y = G(mel).squeeze(1)
    l1 = F.l1_loss(y, wave)
    sc = F.l1_loss(stft_mag(y).log(), stft_mag(wave).log())
    loss = 45 * l1 + sc
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 4 == 3:
        print(f"step {step} l1 {l1.item():.5f} stft {sc.item():.5f} lr {sched.get_last_lr()[0]:.6f}")
print(stft_mag(wave).shape, y.shape, y.grad_fn.name())
print(G.res[0].convs[0].weight_g.grad.flatten()[:4])

G.eval()
with torch.no_grad():
    before = G(mel)
sd = {k: v.clone() for k, v in G.state_dict().items()}
G.remove_weight_norm()
print([n for n, _ in G.pre.named_parameters()], len(G.pre._forward_pre_hooks))
with torch.no_grad():
    after = G(mel)
print(f"max diff {(before - after).abs().max().item():.2e}", after.shape)

conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 8, 5, 1, padding=2))
print(conv.load_state_dict({k[4:]: v for k, v in sd.items() if k.startswith("pre.")}))
print(torch.allclose(conv.weight, G.pre.weight, atol=1e-6), conv.parametrizations.weight.original0.shape)
