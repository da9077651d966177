"""A small VAE on random binary data: reparameterisation trick, KL term, BCE loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, d_in=20, d_hidden=16, d_latent=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc_mu = nn.Linear(d_hidden, d_latent)
        self.fc_logvar = nn.Linear(d_hidden, d_latent)
        self.fc3 = nn.Linear(d_latent, d_hidden)
        self.fc4 = nn.Linear(d_hidden, d_in)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 20))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 20), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld, bce, kld


data = (torch.rand(64, 20) > 0.5).float()
loader = DataLoader(TensorDataset(data), batch_size=16, shuffle=True)
model = VAE()
print(model)
print("params:", sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(3):
    model.train()
    total = 0.0
    for batch_idx, (x,) in enumerate(loader):
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        loss, bce, kld = loss_function(recon, x, mu, logvar)
        loss.backward()
        total += loss.item()
        optimizer.step()
        if batch_idx == 0:
            print(f"epoch {epoch} batch {batch_idx} bce={bce.item():.4f} kld={kld.item():.4f}")
    print(f"====> Epoch: {epoch} Average loss: {total / len(loader.dataset):.4f}")

model.eval()
with torch.no_grad():
    sample = torch.randn(3, 4)
    out = model.decode(sample)
    print(out.shape, out.dtype, out.requires_grad)
    print(f"{out.mean().item():.4f} {out.min().item():.4f} {out.max().item():.4f}")
    recon, mu, logvar = model(data[:2])
    print(recon.grad_fn, mu.shape, logvar.shape)
print(recon.grad_fn is None, loss.grad_fn.name())
