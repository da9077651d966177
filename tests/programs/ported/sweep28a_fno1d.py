"""A 1-D Fourier neural operator learning a smoothing operator (the heat equation's solution
map u0 -> u(t) on a periodic grid): spectral convolution layers with learnable complex weights
(an nn.Parameter of dtype cfloat and one built from view_as_complex of a real parameter),
torch.fft.rfft / irfft, a complex einsum over the kept modes, a pointwise 1x1 Conv1d bypass,
GELU, Adam with weight decay on real and complex parameters alike, gradient clipping, and
printouts of losses, gradient norms, complex reprs and the state_dict."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_GRID, MODES, WIDTH, BATCH = 32, 6, 8, 16


def make_data(n, gen):
    """Random band-limited initial conditions and their heat-kernel smoothed versions."""
    x = torch.linspace(0, 2 * math.pi, N_GRID + 1)[:-1]
    k = torch.arange(1, 6, dtype=torch.float32)
    a = torch.randn(n, 5, generator=gen) / k
    b = torch.randn(n, 5, generator=gen) / k
    u0 = (a[:, :, None] * torch.sin(k[None, :, None] * x) +
          b[:, :, None] * torch.cos(k[None, :, None] * x)).sum(1)
    # exact solution operator in Fourier space: multiply mode k by exp(-nu k^2 t)
    spec = torch.fft.rfft(u0, dim=-1)
    freqs = torch.fft.rfftfreq(N_GRID, d=1.0 / N_GRID)
    decay = torch.exp(-0.05 * freqs ** 2)
    u1 = torch.fft.irfft(spec * decay, n=N_GRID, dim=-1)
    return u0, u1


class SpectralConv1d(nn.Module):
    def __init__(self, cin, cout, modes, use_view):
        super().__init__()
        self.modes = modes
        self.use_view = use_view
        scale = 1.0 / (cin * cout)
        if use_view:
            # real storage, viewed as complex at every call (as some FNO ports do)
            self.weight_ri = nn.Parameter(scale * torch.rand(cin, cout, modes, 2))
        else:
            self.weight = nn.Parameter(scale * torch.rand(cin, cout, modes, dtype=torch.cfloat))

    def complex_weight(self):
        return torch.view_as_complex(self.weight_ri) if self.use_view else self.weight

    def forward(self, x):
        b, _, n = x.shape
        x_ft = torch.fft.rfft(x)
        w = self.complex_weight()
        out_ft = torch.zeros(b, w.shape[1], n // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, :self.modes] = torch.einsum("bix,iox->box", x_ft[:, :, :self.modes], w)
        return torch.fft.irfft(out_ft, n=n)


class FNO1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.lift = nn.Linear(2, WIDTH)
        self.spectral = nn.ModuleList([SpectralConv1d(WIDTH, WIDTH, MODES, use_view=i == 1)
                                       for i in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv1d(WIDTH, WIDTH, 1) for _ in range(2)])
        self.proj = nn.Sequential(nn.Linear(WIDTH, 16), nn.GELU(), nn.Linear(16, 1))

    def forward(self, u):
        grid = torch.linspace(0, 1, u.shape[-1]).expand(u.shape[0], -1)
        h = self.lift(torch.stack([u, grid], dim=-1)).permute(0, 2, 1)
        for i, (sc, pw) in enumerate(zip(self.spectral, self.pointwise)):
            h = sc(h) + pw(h)
            if i == 0:
                h = F.gelu(h)
        return self.proj(h.permute(0, 2, 1)).squeeze(-1)


gen = torch.Generator().manual_seed(7)
u0, u1 = make_data(BATCH, gen)
u0_test, u1_test = make_data(8, gen)
print("data", tuple(u0.shape), u0.dtype, "target mean %.6f std %.6f" % (u1.mean().item(), u1.std().item()))
spec = torch.fft.rfft(u0[:2, :8])
print("spectrum", spec.shape, spec.dtype, spec.abs().round(decimals=4))
print("rfftfreq", torch.fft.rfftfreq(8, d=0.5))
print("fftfreq", torch.fft.fftfreq(6))

model = FNO1d()
print(model)
for name, p in model.named_parameters():
    print(name, tuple(p.shape), p.dtype, p.is_complex())
w0 = model.spectral[0].weight
print("complex weight slice", w0[0, 0, :3])
print("view_as_real of it", torch.view_as_real(w0[0, 0, :2]))

opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
for step in range(12):
    opt.zero_grad()
    pred = model(u0)
    loss = F.mse_loss(pred, u1)
    loss.backward()
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    cg = model.spectral[0].weight.grad
    vg = model.spectral[1].weight_ri.grad
    opt.step()
    if step % 3 == 0 or step == 11:
        print("step %2d loss %.6f gnorm %.6f cgrad %s %.6f vgrad %.6f" % (
            step, loss.item(), gnorm.item(), cg.dtype, cg.abs().sum().item(), vg.norm().item()))

print("loss grad_fn", loss.grad_fn.name())
with torch.no_grad():
    test_pred = model(u0_test)
    rel = (test_pred - u1_test).norm(dim=-1) / u1_test.norm(dim=-1)
print("test rel err", rel.round(decimals=4))
print("mean rel %.5f" % rel.mean().item())

# grad_fn chain through the complex path
x = torch.randn(2, WIDTH, N_GRID, requires_grad=True)
y = model.spectral[0](x)
print("spectral out", y.grad_fn.name(), y.shape)
xf = torch.fft.rfft(x)
print("rfft grad_fn", xf.grad_fn.name(), xf.dtype)
print("einsum grad_fn", torch.einsum("bix,iox->box", xf[:, :, :MODES], w0).grad_fn.name())
print("view_as_complex grad_fn", model.spectral[1].complex_weight().grad_fn.name())
y.pow(2).sum().backward()
print("input grad norm %.6f" % x.grad.norm().item())

state = opt.state[model.spectral[0].weight]
print("adam state", sorted(state.keys()), state["exp_avg"].dtype, state["exp_avg_sq"].dtype)
print("exp_avg_sq real?", state["exp_avg_sq"].is_complex(), "step", state["step"])
sd = model.state_dict()
print("state_dict", [(k, v.dtype) for k, v in sd.items()][:4])

# complex tensor arithmetic oddities
z = torch.complex(torch.tensor([1.0, -2.0]), torch.tensor([0.5, 3.0]))
print(z, z.conj(), z.abs(), z.angle())
print(z * 1j, z.real, z.imag, torch.view_as_real(z.conj().resolve_conj()))
# unit-modulus (phase-only) weights, as complex-valued nets use them: sgn and polar gradients
zc = torch.tensor([1 + 1j, 0j, -2 + 0.5j], requires_grad=True)
(zc.sgn() * torch.tensor([1 + 2j, 1j, 2 - 1j])).real.sum().backward()
print("sgn grad", zc.grad)
mag = torch.tensor([1.0, 0.0, 2.0], requires_grad=True)
ph = torch.tensor([0.3, 1.0, -2.0], requires_grad=True)
(torch.polar(mag, ph) * (0.5 - 1j)).real.sum().backward()
print("polar grads", mag.grad, ph.grad)
zc.grad = None
zc.abs().sum().backward()
print("abs grad", zc.grad)
try:
    F.relu(z)
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.fft.irfft(torch.randn(4, dtype=torch.cfloat), n=4, dim=2)
except Exception as e:
    print(type(e).__name__, e)
