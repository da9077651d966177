"""A small Vision Transformer: Conv2d patch embedding, a cls-token nn.Parameter and learned
position embedding, pre-norm nn.TransformerEncoderLayer blocks (gelu, batch_first) wrapped with
a hand-written DropPath (torch.rand + floor_), trunc_normal_ init through model.apply, AdamW
with decay/no-decay parameter groups and OneCycleLR."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1 - self.p
        mask = keep + torch.rand((x.shape[0],) + (1,) * (x.ndim - 1), dtype=x.dtype)
        mask.floor_()
        return x.div(keep) * mask

    def extra_repr(self):
        return f"p={self.p}"


class Block(nn.Module):
    def __init__(self, dim, heads, drop_path):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0,
                                                activation="gelu", batch_first=True,
                                                norm_first=True)
        self.drop_path = DropPath(drop_path)

    def forward(self, x):
        return x + self.drop_path(self.layer(x) - x)


class ViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=24, depth=3, heads=4, classes=5):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        n = (img // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, n + 1, dim))
        rates = [x.item() for x in torch.linspace(0, 0.2, depth)]
        self.blocks = nn.Sequential(*[Block(dim, heads, r) for r in rates])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.trunc_normal_(self.cls_token, std=0.02)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def init_fn(m):
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02, a=-0.04, b=0.04)
        if m.bias is not None:
            nn.init.constant_(m.bias, 0.0)
    elif isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="linear")
        nn.init.uniform_(m.bias, -0.01, 0.01)
    elif isinstance(m, nn.LayerNorm):
        nn.init.constant_(m.weight, 1.0)


model = ViT()
print(model.apply(init_fn) is model, model.patch_embed.weight.std().item() > 0.05)
print(model.blocks[1].drop_path, model.blocks[2].layer.norm_first, model.blocks[0].layer.activation_relu_or_gelu)
print(sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.parameters()
                                                        if p.requires_grad))
keys = list(model.state_dict().keys())
print(len(keys), keys[:4], keys[-2:])
print(keys[4:12])
print(model.head.weight.abs().max().item() <= 0.04, model.head.bias.abs().sum().item())
decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "token" not in n
         and "pos_embed" not in n]
no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "token" not in n
                                                           and "pos_embed" not in n)]
print(len(decay), len(no_decay))
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.98))
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=8, pct_start=0.25,
                                            anneal_strategy="cos", div_factor=10.0)
x = torch.randn(8, 3, 16, 16)
y = torch.randint(0, 5, (8,))
patches = x.unfold(2, 4, 4).unfold(3, 4, 4)
print(patches.shape, patches.stride(), patches.is_contiguous())
flat = patches.permute(0, 2, 3, 1, 4, 5).reshape(8, 16, -1)
manual = flat @ model.patch_embed.weight.flatten(1).t() + model.patch_embed.bias
print(torch.allclose(manual, model.patch_embed(x).flatten(2).transpose(1, 2), atol=1e-5))
for step in range(8):
    model.train()
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.5f} gnorm {gnorm.item():.4f} "
          f"lr {sched.get_last_lr()[0]:.6f} beta1 {opt.param_groups[0]['betas'][0]:.4f}")
print(model.cls_token.grad.shape, model.pos_embed.grad.abs().sum().item() > 0)
model.eval()
with torch.no_grad():
    out = model(x)
    print(out.shape, (out.argmax(1) == y).float().mean().item())
    dp = DropPath(0.5).train()
    z = dp(torch.ones(6, 2, 3))
    print(z[:, 0, 0], z.sum().item())
print(model.blocks[0].layer.self_attn)
attn = model.blocks[0].layer.self_attn
q = torch.randn(2, 5, 24)
o, w = attn(q, q, q, need_weights=True, average_attn_weights=False)
print(o.shape, w.shape, w.sum(-1)[0, 0].allclose(torch.ones(5)), w.grad_fn.name())
print(opt.state_dict()["state"][0]["step"], sorted(opt.state_dict()["state"][0]))
