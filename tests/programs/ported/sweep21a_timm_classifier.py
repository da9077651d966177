"""A timm-style image classifier training step: a tiny ConvNeXt-ish / ViT-ish hybrid with
stochastic depth (DropPath built from bernoulli_ on new_empty), trunc_normal_ init, layer-wise
weight decay groups, mixup / cutmix with lambda from torch.distributions.Beta, label-smoothing
targets and SoftTargetCrossEntropy next to nn.CrossEntropyLoss(label_smoothing=...), an EMA copy
of the weights (deepcopy + lerp_ / _foreach ops), top-k accuracy and an AverageMeter.
Biases whose true gradient is zero (a conv before BatchNorm, attention key biases) are left
out: AdamW would turn their rounding noise into full-size steps."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class ConvBlock(nn.Module):
    def __init__(self, dim, drop_path=0.0):
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.ls = LayerScale(dim, 1e-1)
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x).permute(0, 2, 3, 1)
        x = self.ls(self.mlp(self.norm(x))).permute(0, 3, 1, 2)
        return shortcut + self.drop_path(x)


class AttnBlock(nn.Module):
    def __init__(self, dim, heads=2, drop_path=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, bias=False, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.drop_path(self.attn(h, h, h, need_weights=False)[0])
        return x + self.drop_path(self.mlp(self.norm2(x)))


class TinyNet(nn.Module):
    def __init__(self, num_classes=5, dim=16, drop_path_rate=0.2):
        super().__init__()
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, 4)]
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 2, stride=2, bias=False), nn.BatchNorm2d(dim))
        self.stages = nn.Sequential(ConvBlock(dim, dpr[0]), ConvBlock(dim, dpr[1]))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 17, dim))
        self.blocks = nn.ModuleList([AttnBlock(dim, drop_path=dpr[2]), AttnBlock(dim, drop_path=dpr[3])])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.normal_(self.cls_token, std=1e-6)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {"pos_embed", "cls_token"}

    def forward_features(self, x):
        x = self.stages(self.stem(x))
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)

    def forward(self, x):
        return self.head(self.forward_features(x)[:, 0])


model = TinyNet()
print(model.stages[1].drop_path, model.blocks[1].drop_path, model.stages[0].drop_path)
print(f"params {sum(p.numel() for p in model.parameters() if p.requires_grad)}")
print(f"pos_embed std<0.05 {model.pos_embed.std().item() < 0.05}, |max| <= 0.04 {model.pos_embed.abs().max().item() <= 0.04}")


def param_groups_weight_decay(model, weight_decay=1e-5, no_weight_decay_list=()):
    no_weight_decay_list = set(no_weight_decay_list)
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


groups = param_groups_weight_decay(model, 0.05, model.no_weight_decay())
print([len(g["params"]) for g in groups])
optimizer = torch.optim.AdamW(groups, lr=2e-3)


class Mixup:
    def __init__(self, mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, label_smoothing=0.1, num_classes=5):
        self.mixup_beta = torch.distributions.Beta(torch.tensor([mixup_alpha]), torch.tensor([mixup_alpha]))
        self.cutmix_beta = torch.distributions.Beta(cutmix_alpha, cutmix_alpha)
        self.switch_prob = switch_prob
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes

    def one_hot_smooth(self, target):
        off = self.label_smoothing / self.num_classes
        on = 1.0 - self.label_smoothing + off
        return torch.full((target.size(0), self.num_classes), off).scatter_(1, target.view(-1, 1), on)

    def rand_bbox(self, img_shape, lam):
        H, W = img_shape[-2:]
        cut_rat = math.sqrt(1.0 - lam)
        cut_h, cut_w = int(H * cut_rat), int(W * cut_rat)
        cy = torch.randint(0, H, (1,)).item()
        cx = torch.randint(0, W, (1,)).item()
        yl, yh = max(cy - cut_h // 2, 0), min(cy + cut_h // 2, H)
        xl, xh = max(cx - cut_w // 2, 0), min(cx + cut_w // 2, W)
        return yl, yh, xl, xh

    def __call__(self, x, target):
        use_cutmix = torch.rand(1).item() < self.switch_prob
        if use_cutmix:
            lam = float(self.cutmix_beta.sample())
            yl, yh, xl, xh = self.rand_bbox(x.shape, lam)
            x[:, :, yl:yh, xl:xh] = x.flip(0)[:, :, yl:yh, xl:xh]
            lam = 1.0 - (yh - yl) * (xh - xl) / float(x.shape[-2] * x.shape[-1])
        else:
            lam = self.mixup_beta.sample().item()
            x_flipped = x.flip(0).mul_(1.0 - lam)
            x.mul_(lam).add_(x_flipped)
        y1 = self.one_hot_smooth(target)
        y2 = self.one_hot_smooth(target.flip(0))
        return x, y1 * lam + y2 * (1.0 - lam), use_cutmix, lam


class SoftTargetCrossEntropy(nn.Module):
    def forward(self, x, target):
        loss = torch.sum(-target * F.log_softmax(x, dim=-1), dim=-1)
        return loss.mean()


class ModelEma(nn.Module):
    def __init__(self, model, decay=0.9):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        ema_lerp, model_lerp = [], []
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            if ema_v.is_floating_point():
                ema_lerp.append(ema_v)
                model_lerp.append(model_v)
            else:
                ema_v.copy_(model_v)
        torch._foreach_lerp_(ema_lerp, model_lerp, weight=1.0 - self.decay)

    @torch.no_grad()
    def update_slow(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(self.decay * ema_v + (1.0 - self.decay) * model_v)


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = min(max(topk), output.size()[1])
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:min(k, maxk)].reshape(-1).float().sum(0) * 100.0 / batch_size for k in topk]


ema = ModelEma(model, decay=0.8)
ema_slow = copy.deepcopy(ema)
print(type(ema.module).__name__, ema.module.training, ema.module.stem[1].num_batches_tracked)
mixup = Mixup()
train_loss_fn = SoftTargetCrossEntropy()
val_loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
print(val_loss_fn, val_loss_fn.label_smoothing)
images = torch.randn(8, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2])
meter = AverageMeter()
for step in range(5):
    x, y = images.clone(), labels.clone()
    x, soft, cut, lam = mixup(x, y)
    out = model(x)
    loss = train_loss_fn(out, soft)
    optimizer.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0, norm_type=2.0)
    optimizer.step()
    ema.update(model)
    ema_slow.update_slow(model)
    meter.update(loss.item(), x.size(0))
    print(f"step {step} cutmix={cut} lam={lam:.4f} loss {loss.item():.4f} avg {meter.avg:.4f} gn {gn.item():.4f} soft_sum {soft.sum(1)[0].item():.4f}")

print(soft[:2])
print(loss.grad_fn.name(), out.grad_fn.name())
ema_sd, slow_sd = ema.module.state_dict(), ema_slow.module.state_dict()
print(all(torch.allclose(ema_sd[k].float(), slow_sd[k].float(), atol=1e-6) for k in ema_sd))
print(ema_sd["stem.1.num_batches_tracked"], ema_sd["stem.1.running_mean"][:3])
print(ema.module.pos_embed.requires_grad, ema.module.head.weight.grad)

model.eval()
ema.module.eval()
with torch.no_grad():
    out = model(images)
    out_ema = ema.module(images)
    for name, o in [("model", out), ("ema", out_ema)]:
        acc1, acc3 = accuracy(o, labels, topk=(1, 3))
        print(f"{name}: loss {val_loss_fn(o, labels).item():.4f} acc@1 {acc1.item():.2f} acc@3 {acc3.item():.2f}")
    print(F.cross_entropy(out, labels, label_smoothing=0.1, reduction="none"))
    print(torch.nn.CrossEntropyLoss(label_smoothing=0.2, ignore_index=4)(out, labels))
    print(F.cross_entropy(out, soft.argmax(1)), F.cross_entropy(out, soft, label_smoothing=0.1))
model.train()
torch.manual_seed(3)
t = torch.ones(4, 2, 3)
print(drop_path(t, 0.5, True)[:, 0, 0], drop_path(t, 0.5, True, scale_by_keep=False)[:, 0, 0])
print(torch.distributions.Beta(torch.tensor([0.5, 2.0]), torch.tensor([0.5, 1.0])).sample((2,)))
