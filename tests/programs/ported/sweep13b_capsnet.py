"""A tiny capsule network: primary capsules from a Conv2d, squash, dynamic routing by agreement
(3 iterations, softmax over the output-capsule dim, broadcasting matmuls on 5-D tensors, the
prediction vectors detached inside the routing loop), margin loss, and a reconstruction decoder
fed capsules masked with one_hot of the labels (or of the longest capsule at test time)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def squash(s, dim=-1):
    sq = (s ** 2).sum(dim=dim, keepdim=True)
    return sq / (1 + sq) * s / torch.sqrt(sq + 1e-8)


class CapsNet(nn.Module):
    def __init__(self, classes=3, in_caps=8, in_dim=4, out_dim=6, routings=3):
        super().__init__()
        self.in_dim, self.routings = in_dim, routings
        self.conv = nn.Conv2d(1, 8, 3)
        self.primary = nn.Conv2d(8, 2 * in_dim, 2, stride=2)
        self.W = nn.Parameter(0.1 * torch.randn(1, in_caps, classes, out_dim, in_dim))
        self.decoder = nn.Sequential(nn.Linear(classes * out_dim, 16), nn.ReLU(inplace=True),
                                     nn.Linear(16, 36), nn.Sigmoid())

    def route(self, u):
        # u: [B, in_caps, in_dim] -> u_hat: [B, in_caps, classes, out_dim]
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)
        b = torch.zeros(*u_hat.shape[:3], 1)
        for i in range(self.routings):
            c = F.softmax(b, dim=2)
            if i == self.routings - 1:
                v = squash((c * u_hat).sum(dim=1, keepdim=True))
            else:
                v = squash((c * u_hat.detach()).sum(dim=1, keepdim=True))
                b = b + (u_hat.detach() * v).sum(dim=-1, keepdim=True)
        return v.squeeze(1), c

    def forward(self, x, y=None):
        h = F.relu(self.conv(x))
        u = self.primary(h).view(x.shape[0], -1, self.in_dim)
        v, c = self.route(squash(u))
        lengths = v.norm(dim=-1)
        if y is None:
            y = lengths.argmax(dim=1)
        mask = F.one_hot(y, v.shape[1]).type_as(v)
        recon = self.decoder((v * mask[:, :, None]).flatten(start_dim=1))
        return lengths, recon.view(-1, 1, 6, 6), c


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    T = F.one_hot(y, lengths.shape[1]).float()
    loss = T * F.relu(m_pos - lengths).pow(2) + lam * (1 - T) * F.relu(lengths - m_neg).pow(2)
    return loss.sum(dim=1).mean()


net = CapsNet()
x, y = torch.rand(4, 1, 6, 6), torch.tensor([0, 1, 2, 1])
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
print("W", net.W.shape, "u_hat", torch.matmul(net.W, torch.ones(4, 8, 1, 4, 1)).shape)
for step in range(4):
    lengths, recon, c = net(x, y)
    m = margin_loss(lengths, y)
    r = F.mse_loss(recon, x, reduction="sum") / x.shape[0]
    loss = m + 0.0005 * r
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"margin {m.item():.5f} recon {r.item():.4f}", f"W grad {net.W.grad.norm().item():.5f}")
print("c", c.shape, c.requires_grad, c.sum(dim=2).flatten()[:3])
print("lengths", lengths.grad_fn.name(), recon.grad_fn.name(), lengths.detach())
net.eval()
with torch.no_grad():
    lengths, recon, _ = net(x)
print("pred", lengths.argmax(1), lengths.max(dim=1).values, recon.shape)
z = torch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
s = squash(z)
s.sum().backward()
print("squash", s, s.norm(dim=-1))
print("squash grad (0 at 0)", z.grad)
print("one_hot", F.one_hot(torch.tensor([[2], [0]])), F.one_hot(torch.arange(3) % 2, 3).dtype)
try:
    F.one_hot(torch.tensor([3]), 3)
except RuntimeError as e:
    print("RuntimeError", e)
