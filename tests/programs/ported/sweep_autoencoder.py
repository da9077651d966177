"""A convolutional autoencoder: Conv2d encoder, ConvTranspose2d and Upsample/F.interpolate
decoder (nearest, bilinear, bicubic, align_corners), MSE + L1 losses, RMSprop, StepLR, and a
denoising variant with a noise schedule."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
imgs = torch.rand(16, 1, 12, 12)
imgs = (imgs > 0.6).float() * 0.8 + 0.1


class AE(nn.Module):
    def __init__(self, mode="transpose"):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.ReLU())
        if mode == "transpose":
            self.dec = nn.Sequential(
                nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
                nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Sigmoid())
        else:
            self.dec = nn.Sequential(
                nn.Upsample(scale_factor=2, mode=mode), nn.Conv2d(8, 4, 3, padding=1), nn.ReLU(),
                nn.Upsample(size=(12, 12), mode="nearest"), nn.Conv2d(4, 1, 3, padding=1),
                nn.Sigmoid())

    def forward(self, x):
        z = self.enc(x)
        return self.dec(z), z


for mode in ["transpose", "nearest", "bilinear"]:
    torch.manual_seed(1)
    model = AE(mode)
    if mode == "transpose":
        print(model)
    opt = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    for epoch in range(6):
        noisy = (imgs + 0.1 * torch.randn_like(imgs)).clamp(0, 1)
        rec, z = model(noisy)
        loss = F.mse_loss(rec, imgs) + 0.1 * F.l1_loss(rec, imgs)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if epoch % 2 == 1:
            print(f"{mode} epoch {epoch} loss {loss.item():.5f} z {tuple(z.shape)} lr {opt.param_groups[0]['lr']}")
    with torch.no_grad():
        rec, _ = model(imgs[:2])
        print(f"{mode} psnr {(10 * torch.log10(1 / F.mse_loss(rec, imgs[:2]))).item():.3f}")

x = torch.arange(16.0).view(1, 1, 4, 4)
for kw in [dict(scale_factor=2, mode="nearest"), dict(size=(6, 5), mode="nearest"),
           dict(scale_factor=2, mode="bilinear", align_corners=False),
           dict(scale_factor=2, mode="bilinear", align_corners=True),
           dict(size=(3, 7), mode="bicubic", align_corners=False),
           dict(scale_factor=1.5, mode="nearest-exact"), dict(size=(2, 2), mode="area"),
           dict(scale_factor=0.5, mode="bilinear", antialias=True)]:
    out = F.interpolate(x, **kw)
    print(kw, tuple(out.shape), f"{out.sum().item():.4f}", out[0, 0, 0, :3])
print(F.interpolate(torch.arange(6.0).view(1, 2, 3), scale_factor=2, mode="linear"))
print(F.interpolate(torch.arange(8.0).view(1, 1, 2, 2, 2), scale_factor=2, mode="trilinear").sum())
xg = torch.arange(16.0).view(1, 1, 4, 4).requires_grad_()
F.interpolate(xg, scale_factor=2, mode="bilinear").pow(2).sum().backward()
print(xg.grad)
print(nn.Upsample(scale_factor=2, mode="bilinear"), nn.UpsamplingNearest2d(scale_factor=3))
ct = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1, dilation=1, groups=1)
print(ct, ct(torch.randn(1, 2, 5, 5)).shape, ct(torch.randn(1, 2, 5, 5), output_size=[9, 9]).shape)
ps = nn.PixelShuffle(2)
print(ps(torch.arange(16.0).view(1, 4, 2, 2)))
