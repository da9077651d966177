"""A small word-level language model with tied input/output embeddings: causal Conv1d blocks
under parametrizations.weight_norm, a legacy torch.nn.utils.weight_norm projection, gradient
clipping by global norm, and a perplexity evaluation under torch.inference_mode."""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, parametrize

torch.manual_seed(3)
VOCAB, DIM, CTX = 40, 32, 12

# a toy corpus with structure: repeating arithmetic-like patterns of token ids
stream = torch.cat([(torch.arange(0, 60) * k) % VOCAB for k in (1, 3, 7, 11, 13)])
split = int(0.8 * len(stream))
train_ids, valid_ids = stream[:split], stream[split:]
print("tokens", stream.shape, stream.dtype, "train/valid", len(train_ids), len(valid_ids))


def batchify(ids, ctx):
    n = (len(ids) - 1) // ctx
    x = ids[: n * ctx].view(n, ctx)
    y = ids[1: n * ctx + 1].view(n, ctx)
    return x, y


class CausalBlock(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = parametrizations.weight_norm(
            nn.Conv1d(dim, 2 * dim, kernel_size=3, dilation=dilation))

    def forward(self, h):                      # h: (batch, dim, time)
        out = self.conv(F.pad(h, (self.pad, 0)))
        return h + F.glu(out, dim=1)


class TiedConvLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(CausalBlock(DIM, d) for d in (1, 2))
        self.norm = nn.LayerNorm(DIM)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # the legacy hook-based weight_norm is deprecated
            self.proj = torch.nn.utils.weight_norm(nn.Linear(DIM, DIM), dim=0)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.embed.weight     # weight tying

    def forward(self, ids):
        h = self.embed(ids).transpose(1, 2)
        for block in self.blocks:
            h = block(h)
        h = self.norm(h.transpose(1, 2))
        return self.head(torch.tanh(self.proj(h)))


model = TiedConvLM()
print(model.blocks[0])
print("tied:", model.head.weight is model.embed.weight)
print("unique params", sum(p.numel() for p in model.parameters()))
print("with duplicates", sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False)))
print("state_dict keys", list(model.state_dict().keys()))
print("parametrized:", parametrize.is_parametrized(model.blocks[0].conv),
      parametrize.is_parametrized(model.blocks[0].conv, "bias"),
      parametrize.is_parametrized(model.proj))
g = model.blocks[0].conv.parametrizations.weight.original0
print("original0", tuple(g.shape), "proj weight_g", tuple(model.proj.weight_g.shape))

x_train, y_train = batchify(train_ids, CTX)
x_valid, y_valid = batchify(valid_ids, CTX)
print("batches", x_train.shape, x_valid.shape)

opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=24)


def perplexity(x, y):
    model.eval()
    with torch.inference_mode():
        logits = model(x)
        nll = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1), reduction="sum")
        ppl = math.exp(nll.item() / y.numel())
    print("  eval tensors are inference:", logits.is_inference(), nll.requires_grad,
          torch.is_inference_mode_enabled())
    model.train()
    return ppl, nll


print(f"initial valid ppl {perplexity(x_valid, y_valid)[0]:.3f}")
for step in range(24):
    perm = torch.randperm(x_train.shape[0])[:8]
    logits = model(x_train[perm])
    loss = F.cross_entropy(logits.transpose(1, 2), y_train[perm])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    sched.step()
    if step % 6 == 0 or step == 23:
        print(f"step {step:2d} loss {loss.item():.4f} grad_norm {total.item():.4f} "
              f"lr {sched.get_last_lr()[0]:.5f}")

print("embed grad is shared:", model.embed.weight.grad is model.head.weight.grad,
      model.embed.weight.grad.shape)
ppl, nll = perplexity(x_valid, y_valid)
print(f"final valid ppl {ppl:.3f}")

# an inference tensor cannot take part in autograd afterwards
try:
    w = torch.ones(3, requires_grad=True)
    (w * nll).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
print("clone is normal:", nll.clone().is_inference())

# clip helpers on their own
norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
print("total norm (manual)", round(torch.stack(norms).norm().item(), 4))
print("inf norm", round(nn.utils.clip_grad_norm_(model.parameters(), 1e9, norm_type="inf").item(), 5))
nn.utils.clip_grad_value_(model.parameters(), clip_value=1e-3)
print("after clip_value max", max(p.grad.abs().max().item() for p in model.parameters()))
bad = nn.Parameter(torch.ones(2))
bad.grad = torch.tensor([float("nan"), 1.0])
try:
    nn.utils.clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])

# greedy continuation of the validation rows with a sliding context window
with torch.inference_mode():
    model.eval()
    ids = x_valid
    for _ in range(4):
        nxt = model(ids[:, -CTX:])[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
print("greedy", ids[:, -6:].tolist())

# baking weight norm in for export
conv = model.blocks[0].conv
before = conv.weight.detach().clone()
parametrize.remove_parametrizations(conv, "weight")
torch.nn.utils.remove_weight_norm(model.proj)
print("after removal", type(conv.weight).__name__, torch.allclose(conv.weight, before),
      sorted(k for k in model.state_dict() if k.startswith(("blocks.0", "proj"))))
