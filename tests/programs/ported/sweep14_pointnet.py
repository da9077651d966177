"""PointNet and DGCNN on random point clouds: a shared MLP as Conv1d with kernel 1, max over
points, a T-Net whose output has torch.eye added and an orthogonality regulariser (bmm, norm),
and EdgeConv on a kNN graph built with torch.cdist + topk and gathered by advanced indexing on
[B, N, k] indices."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
B, N, K, CLASSES = 2, 16, 4, 3


class TNet(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Conv1d(k, 16, 1), nn.ReLU())
        self.fc = nn.Linear(16, k * k)

    def forward(self, x):
        h = self.mlp(x).max(dim=2)[0]
        return self.fc(h).view(-1, self.k, self.k) + torch.eye(self.k).unsqueeze(0)


class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.tnet = TNet(3)
        self.mlp = nn.Sequential(nn.Conv1d(3, 16, 1), nn.ReLU(), nn.Conv1d(16, 32, 1))
        self.head = nn.Linear(32, CLASSES)

    def forward(self, pts):
        trans = self.tnet(pts)
        x = torch.bmm(trans, pts)
        feats = self.mlp(x)
        pooled, idx = torch.max(feats, 2)
        return self.head(pooled), trans, idx


def orthogonality(trans):
    eye = torch.eye(trans.size(1)).expand_as(trans)
    return torch.norm(torch.bmm(trans, trans.transpose(1, 2)) - eye, dim=(1, 2)).mean()


def knn(x, k):
    d = torch.cdist(x, x)
    return d.topk(k, dim=-1, largest=False)[1]


class EdgeConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Sequential(nn.Linear(2 * cin, cout), nn.LeakyReLU(0.2))

    def forward(self, x, idx):
        nbrs = x[torch.arange(x.size(0)).view(-1, 1, 1), idx]
        center = x.unsqueeze(2).expand_as(nbrs)
        edge = torch.cat([center, nbrs - center], dim=-1)
        return self.lin(edge).max(dim=2).values


pts = torch.randn(B, 3, N)
labels = torch.tensor([0, 2])
net = PointNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(3):
    logits, trans, idx = net(pts)
    reg = orthogonality(trans)
    loss = F.cross_entropy(logits, labels) + 1e-3 * reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{reg.item():.5f}", tuple(idx.shape))
print("grad_fns", logits.grad_fn.name(), trans.grad_fn.name(), reg.grad_fn.name(),
      net.tnet.fc.weight.grad.shape, net.tnet.fc.bias.grad.abs().sum() > 0)

xyz = pts.transpose(1, 2).contiguous()
nn_idx = knn(xyz, K)
print("knn", nn_idx.shape, nn_idx.dtype, bool((nn_idx[:, :, 0] == torch.arange(N)).all()))
d = torch.cdist(xyz, xyz)
gathered = torch.gather(d, 2, nn_idx)
print("cdist", d.shape, f"{d.sum().item():.4f}", torch.allclose(d, d.transpose(1, 2)),
      gathered.shape, f"{gathered.sum().item():.4f}")
ec1, ec2 = EdgeConv(3, 8), EdgeConv(8, 8)
head = nn.Linear(8, CLASSES)
opt2 = torch.optim.SGD(list(ec1.parameters()) + list(ec2.parameters()) + list(head.parameters()),
                       lr=0.1, momentum=0.9)
for step in range(2):
    h = ec1(xyz, nn_idx)
    h = ec2(h, knn(h, K))
    out = head(h.max(dim=1)[0])
    loss = F.cross_entropy(out, labels)
    opt2.zero_grad()
    loss.backward()
    opt2.step()
    print("dgcnn", step, f"{loss.item():.5f}", h.shape, h.grad_fn.name())
print("edge grad", f"{ec1.lin[0].weight.grad.norm().item():.5f}")
for other in (torch.randn(B, N, 4), xyz[0, 0]):
    try:
        torch.cdist(other, xyz)
    except RuntimeError as e:
        print("RuntimeError", e)
