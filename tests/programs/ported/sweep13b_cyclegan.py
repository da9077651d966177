"""A tiny CycleGAN: ResNet-ish generators with ReflectionPad2d, InstanceNorm2d and ConvTranspose2d,
PatchGAN discriminators, a history image pool drawing with torch.rand, LSGAN (MSE) losses, cycle
and identity L1 losses, one Adam over itertools.chain of both generators' parameters, a LambdaLR
linear decay, and requires_grad toggling of the discriminators around the generator step."""
import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)


def generator():
    return nn.Sequential(
        nn.ReflectionPad2d(1), nn.Conv2d(3, 4, 3), nn.InstanceNorm2d(4), nn.ReLU(True),
        nn.Conv2d(4, 4, 3, stride=2, padding=1), nn.InstanceNorm2d(4, affine=True), nn.ReLU(True),
        nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1),
        nn.InstanceNorm2d(4), nn.ReLU(True),
        nn.ReflectionPad2d(1), nn.Conv2d(4, 3, 3), nn.Tanh())


def discriminator():
    return nn.Sequential(
        nn.Conv2d(3, 4, 4, stride=2, padding=1), nn.InstanceNorm2d(4), nn.LeakyReLU(0.2, True),
        nn.Conv2d(4, 1, 3, padding=1))


class ImagePool:
    def __init__(self, size):
        self.size, self.images = size, []

    def query(self, images):
        out = []
        for image in images:
            image = image.unsqueeze(0)
            if len(self.images) < self.size:
                self.images.append(image)
                out.append(image)
            elif torch.rand(1).item() > 0.5:
                i = int(torch.randint(0, self.size, (1,)).item())
                old = self.images[i].clone()
                self.images[i] = image
                out.append(old)
            else:
                out.append(image)
        return torch.cat(out, 0)


def set_requires_grad(nets, flag):
    for net in nets:
        for p in net.parameters():
            p.requires_grad = flag


G_AB, G_BA, D_A, D_B = generator(), generator(), discriminator(), discriminator()
print(G_AB[5], G_AB[7], G_AB[0])
opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-3, betas=(0.5, 0.999))
opt_D = torch.optim.Adam(itertools.chain(D_A.parameters(), D_B.parameters()), lr=2e-3, betas=(0.5, 0.999))
decay = lambda epoch: 1.0 - max(0, epoch - 1) / 3
sched_G = torch.optim.lr_scheduler.LambdaLR(opt_G, lr_lambda=decay)
sched_D = torch.optim.lr_scheduler.LambdaLR(opt_D, lr_lambda=decay)
mse, l1 = nn.MSELoss(), nn.L1Loss()
pool_A, pool_B = ImagePool(2), ImagePool(2)
real_A, real_B = torch.rand(4, 2, 3, 4, 4) * 2 - 1, torch.rand(4, 2, 3, 4, 4) * 2 - 1

for epoch in range(4):
    a, b = real_A[epoch], real_B[epoch]
    fake_B, fake_A = G_AB(a), G_BA(b)
    rec_A, rec_B = G_BA(fake_B), G_AB(fake_A)
    set_requires_grad([D_A, D_B], False)
    opt_G.zero_grad()
    pred = D_B(fake_B)
    loss_gan = mse(pred, torch.ones_like(pred)) + mse(D_A(fake_A), torch.ones_like(pred))
    loss_cyc = l1(rec_A, a) * 10 + l1(rec_B, b) * 10
    loss_idt = l1(G_AB(b), b) * 5 + l1(G_BA(a), a) * 5
    loss_G = loss_gan + loss_cyc + loss_idt
    loss_G.backward()
    print("D grad while frozen", D_A[0].weight.grad is None, D_B[0].weight.requires_grad)
    opt_G.step()
    set_requires_grad([D_A, D_B], True)
    opt_D.zero_grad()
    loss_D = 0
    for D, real, fake in ((D_A, a, pool_A.query(fake_A.detach())), (D_B, b, pool_B.query(fake_B.detach()))):
        p_real, p_fake = D(real), D(fake)
        loss_D = loss_D + 0.5 * (mse(p_real, torch.ones_like(p_real)) + mse(p_fake, torch.zeros_like(p_fake)))
    loss_D.backward()
    opt_D.step()
    sched_G.step()
    sched_D.step()
    print(epoch, f"G {loss_G.item():.4f} gan {loss_gan.item():.4f} cyc {loss_cyc.item():.4f}",
          f"D {loss_D.item():.4f} lr {sched_G.get_last_lr()[0]:.6f}", pred.shape)

print("grad_fns", fake_B.grad_fn.name(), loss_D.grad_fn.name(), pred.grad_fn.name())
print("inorm stats", G_AB[1](a).mean().item() != 0, G_AB[2].running_mean, G_AB[5].weight.shape)
x = G_AB[0](torch.arange(16.).view(1, 1, 4, 4))
print("reflect", x[0, 0, 0].tolist(), x.shape)
print("pool", len(pool_A.images), pool_A.images[0].shape)
try:
    torch.nn.functional.instance_norm(a, use_input_stats=False)
except RuntimeError as e:
    print("RuntimeError", e)
print("D state", sorted(D_A.state_dict().keys())[:3], opt_G.param_groups[0]["initial_lr"])
