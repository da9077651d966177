"""A tiny VQ-VAE: codebook lookup with torch.cdist + argmin, the straight-through estimator
z + (q - z).detach(), codebook and commitment losses, EMA codebook updates under torch.no_grad
with in-place mul_/add_/index_add_, a Gumbel-softmax (hard=True) quantizer variant, and
codebook perplexity from bincount and one_hot means."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VectorQuantizerEMA(nn.Module):
    def __init__(self, codes, dim, decay=0.9, eps=1e-5):
        super().__init__()
        self.decay, self.eps = decay, eps
        self.register_buffer("embedding", 0.2 * torch.randn(codes, dim))
        self.register_buffer("cluster_size", torch.zeros(codes))
        self.register_buffer("embed_avg", self.embedding.clone())

    def forward(self, z):
        flat = z.permute(0, 2, 1).reshape(-1, z.shape[1])
        dist = torch.cdist(flat, self.embedding)
        idx = dist.argmin(dim=1)
        q = self.embedding[idx].view(z.shape[0], z.shape[2], -1).permute(0, 2, 1)
        if self.training:
            with torch.no_grad():
                onehot = F.one_hot(idx, self.embedding.shape[0]).type(flat.dtype)
                self.cluster_size.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
                sums = torch.zeros_like(self.embed_avg).index_add_(0, idx, flat)
                self.embed_avg.mul_(self.decay).add_(sums, alpha=1 - self.decay)
                n = self.cluster_size.sum()
                size = (self.cluster_size + self.eps) / (n + self.embedding.shape[0] * self.eps) * n
                self.embedding.copy_(self.embed_avg / size.unsqueeze(1))
        commit = F.mse_loss(z, q.detach())
        q_st = z + (q - z).detach()
        counts = torch.bincount(idx, minlength=self.embedding.shape[0]).float()
        probs = counts / counts.sum()
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
        return q_st, commit, perplexity, idx


class GumbelQuantizer(nn.Module):
    def __init__(self, dim, codes):
        super().__init__()
        self.proj = nn.Conv1d(dim, codes, 1)
        self.embed = nn.Embedding(codes, dim)

    def forward(self, z, tau=1.0):
        logits = self.proj(z)
        soft = F.gumbel_softmax(logits, tau=tau, hard=True, dim=1)
        q = torch.einsum("bnl,nd->bdl", soft, self.embed.weight)
        avg = F.softmax(logits, dim=1).mean((0, 2))
        kl = (avg * torch.log(avg * logits.shape[1] + 1e-10)).sum()
        return q, kl, soft


enc = nn.Sequential(nn.Conv1d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv1d(8, 4, 3, stride=2, padding=1))
dec = nn.Sequential(nn.ConvTranspose1d(4, 8, 4, stride=2, padding=1), nn.ReLU(), nn.Conv1d(8, 2, 3, padding=1))
vq = VectorQuantizerEMA(6, 4)
opt = torch.optim.Adam(list(enc.parameters()) + list(dec.parameters()), lr=3e-3)
x = torch.randn(3, 2, 8)
for step in range(4):
    z = enc(x)
    q, commit, ppl, idx = vq(z)
    recon = dec(q)
    loss = F.mse_loss(recon, x) + 0.25 * commit
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{commit.item():.5f}", f"{ppl.item():.4f}", idx.tolist())
print("q grad_fn", q.grad_fn.name(), "z grad", enc[2].weight.grad.abs().sum() > 0)
print("cluster", vq.cluster_size)
print("embedding", vq.embedding.shape, vq.embedding.requires_grad)

gq = GumbelQuantizer(4, 5)
torch.manual_seed(1)
q, kl, soft = gq(enc(x).detach(), tau=0.5)
print("soft", soft.shape, soft.sum(1).unique(), soft.grad_fn.name())
hits = soft.argmax(1).flatten()
print("one_hot mean", F.one_hot(hits, 5).float().mean(0))
(q.pow(2).mean() + kl).backward()
print("gumbel grads", gq.proj.weight.grad.shape, gq.embed.weight.grad.abs().sum().item() > 0)
g = torch.Generator().manual_seed(3)
noise = -torch.empty(2, 5).exponential_(generator=g).log()
print("noise", noise)
vq.eval()
_, _, ppl_eval, idx_eval = vq(enc(x))
print("eval", f"{ppl_eval.item():.4f}", idx_eval.tolist())
print(torch.cdist(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0], [1.0, 0.0]]), p=1))
a = torch.randn(3, 2, requires_grad=True)
d = torch.cdist(a, vq.embedding[:4, :2])
d.min(dim=1).values.sum().backward()
print("cdist", d.grad_fn.name(), a.grad)
big = torch.randn(30, 4, requires_grad=True)   # over 25 rows: PyTorch's matmul route
d = torch.cdist(big, torch.cat([vq.embedding, big[:2].detach()]))
d.min(dim=1).values.sum().backward()
print("cdist mm", d.grad_fn.name(), d.grad_fn.next_functions[0][0].name(), d.argmin(1)[:8].tolist())
print("zero distance grads", big.grad[:3])
for bad in (lambda: torch.bincount(torch.tensor([1, -1])),
            lambda: torch.zeros(3).index_add_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64)),
            lambda: torch.cdist(torch.randn(2, 3), torch.randn(2, 4))):
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
