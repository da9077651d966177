"""A tiny ViT: patch embedding with Conv2d (checked against unfold), CLS token, learned
positional embeddings, nn.TransformerEncoder (norm_first, gelu), trunc_normal_ init, AdamW
with warmup LambdaLR, attention maps from MultiheadAttention."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, img=8, patch=4, in_ch=3, dim=16):
        super().__init__()
        self.num_patches = (img // patch) ** 2
        self.proj = nn.Conv2d(in_ch, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class ViT(nn.Module):
    def __init__(self, num_classes=3, dim=16, depth=1, heads=2):
        super().__init__()
        self.patch = PatchEmbed(dim=dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch.num_patches + 1, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=32, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        t = self.patch(x)
        cls = self.cls_token.expand(t.size(0), -1, -1)
        t = torch.cat([cls, t], dim=1) + self.pos_embed
        t = self.encoder(t)
        return self.head(self.norm(t[:, 0]))


model = ViT()
print(model)
print(model.cls_token.shape, f"{model.pos_embed.std().item():.5f}")
x = torch.randn(12, 3, 8, 8)
y = torch.randint(0, 3, (12,))
# the conv patch embedding equals a linear map on unfolded patches
patches = F.unfold(x, kernel_size=4, stride=4).transpose(1, 2)
w = model.patch.proj.weight.view(16, -1)
lin = patches @ w.t() + model.patch.proj.bias
print(patches.shape, torch.allclose(lin, model.patch(x), atol=1e-5))
patches2 = x.unfold(2, 4, 4).unfold(3, 4, 4)
print(patches2.shape)

decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "pos_embed" not in n and "cls_token" not in n]
no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "pos_embed" not in n and "cls_token" not in n)]
print(len(decay), len(no_decay))
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=3e-3, betas=(0.9, 0.95))
warmup, total = 2, 6
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup))))
for step in range(total):
    model.train()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 2 == 1:
        print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    logits = model(x)
    print(logits.argmax(-1), (logits.argmax(-1) == y).float().mean())
    layer0 = model.encoder.layers[0]
    t = torch.cat([model.cls_token.expand(2, -1, -1), model.patch(x[:2])], 1) + model.pos_embed
    h = layer0.norm1(t)
    out, attn = layer0.self_attn(h, h, h, need_weights=True, average_attn_weights=False)
    print(attn.shape, attn.sum(-1)[0, 0], f"{attn[0, 0, 0].max().item():.4f}")
    _, attn_avg = layer0.self_attn(h, h, h)
    print(attn_avg.shape, torch.allclose(attn_avg, attn.mean(1), atol=1e-6))
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    print(mask)
    q = torch.randn(2, 2, 5, 8)
    sdpa = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    manual = torch.softmax((q @ q.transpose(-2, -1)) / math.sqrt(8) + mask, -1) @ q
    print(torch.allclose(sdpa, manual, atol=1e-5), f"{sdpa.sum().item():.4f}")
