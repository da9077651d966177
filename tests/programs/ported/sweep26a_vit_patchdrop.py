"""A small ViT whose attention is F.scaled_dot_product_attention: patches cut with
Tensor.unfold, a CLS token plus register tokens, random patch dropping expressed as a boolean
key mask (B, 1, 1, N), qkv unbind, SGD with nesterov driven by OneCycleLR built from
epochs/steps_per_epoch (cycling momentum), the math kernel forced with sdpa_kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

torch.manual_seed(0)
IMG, P, D, HEADS = 8, 4, 16, 2


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, key_mask=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        mask = None if key_mask is None else key_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"),
                                 nn.Linear(2 * dim, dim))

    def forward(self, x, key_mask=None):
        x = x + self.attn(self.n1(x), key_mask)
        return x + self.mlp(self.n2(x))


class ViT(nn.Module):
    def __init__(self, n_classes=3, registers=2, depth=2):
        super().__init__()
        self.embed = nn.Linear(P * P, D)
        self.cls = nn.Parameter(torch.zeros(1, 1, D))
        self.reg = nn.Parameter(torch.zeros(1, registers, D))
        self.pos = nn.Parameter(torch.randn(1, (IMG // P) ** 2, D) * 0.02)
        self.blocks = nn.ModuleList(Block(D, HEADS) for _ in range(depth))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, n_classes)
        self.n_extra = 1 + registers

    def patches(self, img):                       # (B, 1, H, W) -> (B, L, P*P)
        p = img.unfold(2, P, P).unfold(3, P, P)   # (B, 1, H/P, W/P, P, P)
        return p.reshape(img.shape[0], -1, P * P)

    def forward(self, img, drop=0.0):
        x = self.embed(self.patches(img)) + self.pos
        B, L, _ = x.shape
        keep = torch.ones(B, L, dtype=torch.bool)
        if drop > 0:
            keep = torch.rand(B, L) >= drop
            keep[:, 0] = True                     # never drop every patch of an image
        extra = torch.cat([self.cls, self.reg], dim=1).expand(B, -1, -1)
        x = torch.cat([extra, x], dim=1)
        key_mask = torch.cat([torch.ones(B, self.n_extra, dtype=torch.bool), keep], dim=1)
        for blk in self.blocks:
            x = blk(x, key_mask)
        return self.head(self.norm(x[:, 0])), keep


def make_data(n):
    """Three classes: horizontal stripes, vertical stripes, a bright centre square."""
    y = torch.arange(n) % 3
    img = torch.randn(n, 1, IMG, IMG) * 0.3
    rows = torch.arange(IMG) % 2 == 0
    img[y == 0] += rows.float()[:, None]
    img[y == 1] += rows.float()[None, :]
    img[y == 2, :, 2:6, 2:6] += 1.0
    return img, y


model = ViT()
print(sum(p.numel() for p in model.parameters()), "parameters")
print([k for k in model.state_dict() if k.startswith("blocks.0")])

x, y = make_data(12)
print("patches", model.patches(x).shape, torch.equal(model.patches(x)[0, 1], x[0, 0, :4, 4:].reshape(-1)))

# the SDPA block against the attention written out by hand
attn = model.blocks[0].attn
t = torch.randn(12, 7, D)
km = torch.rand(12, 7) > 0.3
km[:, 0] = True
qkv = attn.qkv(t).reshape(12, 7, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
q, k, v = qkv
scores = (q @ k.transpose(-2, -1)) / (D // HEADS) ** 0.5
scores = scores.masked_fill(~km[:, None, None, :], float("-inf"))
manual = attn.proj((scores.softmax(-1) @ v).transpose(1, 2).reshape(12, 7, D))
print("sdpa == manual", torch.allclose(attn(t, km), manual, atol=1e-6))
print("q", q.shape, q.grad_fn.name(), "out", attn(t, km).grad_fn.name())

EPOCHS, STEPS = 3, 3
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, epochs=EPOCHS, steps_per_epoch=STEPS,
                                            pct_start=0.25, base_momentum=0.8, max_momentum=0.95)
print("start", round(opt.param_groups[0]["lr"], 6), opt.param_groups[0]["momentum"],
      sched.total_steps)
crit = nn.CrossEntropyLoss(label_smoothing=0.1)
for epoch in range(EPOCHS):
    model.train()
    for step in range(STEPS):
        logits, keep = model(x, drop=0.25)
        loss = crit(logits, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    g = opt.param_groups[0]
    print(f"epoch {epoch} loss {loss.item():.4f} kept {int(keep.sum())}/{keep.numel()} "
          f"lr {g['lr']:.6f} momentum {g['momentum']:.4f}")
print(sorted(sched.state_dict().keys()))
try:
    sched.step()
except ValueError as e:
    print("ValueError:", e)

model.eval()
with torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
    logits, keep = model(x)
    pred = logits.argmax(1)
print("eval", logits.shape, bool(keep.all()), pred.tolist(), (pred == y).float().mean().item())
print("cls grad", model.cls.grad.shape, model.reg.grad.abs().sum().item() > 0)
