"""A nanoGPT-style character-level GPT: tied token embedding / lm_head weights, a causal mask
kept as a tril buffer, AdamW with decay / no-decay parameter groups chosen by parameter rank,
warmup + cosine learning rate through LambdaLR, clip_grad_norm_, an estimate_loss helper under
no_grad, checkpoint dict round trip, crop_block_size surgery and generate() with top-k and
multinomial sampling drawn from a seeded torch.Generator."""
import inspect
import io
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(1337)
text = ("first citizen: before we proceed any further, hear me speak.\n"
        "all: speak, speak.\nfirst citizen: you are all resolved rather to die than to famish?\n")
chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # noqa: E731
decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731
data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.85 * len(data))
train_data, val_data = data[:n], data[n:]
print("vocab", vocab_size, "train", train_data.shape, "val", val_data.shape, data.dtype)


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 65
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has no bias=False in older versions)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention")
        self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.use_flash = False

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.use_flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        print("number of parameters: %.4fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])  # only the last position at inference
            loss = None
        return logits, loss

    def crop_block_size(self, block_size):
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
        for block in self.transformer.h:
            if hasattr(block.attn, "bias"):
                block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused} (available: {fused_available})")
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


config = GPTConfig(vocab_size=vocab_size)
model = GPT(config)
print(model.transformer.wte.weight is model.lm_head.weight,
      model.transformer.wte.weight.data_ptr() == model.lm_head.weight.data_ptr())
print(len(list(model.parameters())), len(model.state_dict()))
print([k for k in model.state_dict() if "bias" in k and "attn" in k][:3])
print(model.transformer.h[0].attn)
print(model.transformer.h[0].attn.bias.shape, model.transformer.h[0].attn.bias[0, 0, :4, :4])

batch_size, block_size = 4, config.block_size


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block_size, (batch_size,))
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + 1 + block_size] for i in ix])
    return x, y


@torch.no_grad()
def estimate_loss(eval_iters=2):
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


max_iters, warmup_iters, learning_rate, min_lr = 12, 3, 3e-3, 3e-4


def lr_lambda(it):
    if it < warmup_iters:
        return (it + 1) / (warmup_iters + 1)
    decay_ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return (min_lr + coeff * (learning_rate - min_lr)) / learning_rate


optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), "cpu")
print([g["weight_decay"] for g in optimizer.param_groups], optimizer.defaults["betas"])
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
print("start lr", [round(g["lr"], 7) for g in optimizer.param_groups])
X, Y = get_batch("train")
for it in range(max_iters):
    if it % 6 == 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    logits, loss = model(X, Y)
    X, Y = get_batch("train")
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    print(f"iter {it}: loss {loss.item():.4f}, norm {norm:.4f}, lr {scheduler.get_last_lr()[0]:.6f}")
print(logits.shape, logits.dtype, loss.grad_fn.name())
print(model.lm_head.weight.grad, model.transformer.wte.weight.grad is None)
st = optimizer.state[model.lm_head.weight]
print(sorted(st.keys()), st["step"], st["exp_avg"].shape)

# checkpoint as nanoGPT's train.py writes it, and reload into a fresh model
compiled = torch.compile(model)  # (never called here: only its state_dict is saved)
print(type(compiled).__name__, compiled._orig_mod is model, list(compiled.state_dict())[:2])
checkpoint = {"model": compiled.state_dict(), "optimizer": optimizer.state_dict(),
              "model_args": dict(n_layer=2, n_head=2, n_embd=32), "iter_num": max_iters,
              "best_val_loss": losses["val"], "config": {"lr": learning_rate}}
buf = io.BytesIO()
torch.save(checkpoint, buf)
buf.seek(0)
ckpt = torch.load(buf, map_location="cpu")
print(sorted(ckpt.keys()), ckpt["iter_num"], type(ckpt["best_val_loss"]).__name__)
state_dict = ckpt["model"]
unwanted_prefix = "_orig_mod."
for k, v in list(state_dict.items()):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
print(len(state_dict), list(state_dict)[:2])
torch.manual_seed(0)
model2 = GPT(GPTConfig(vocab_size=vocab_size))
res = model2.load_state_dict(state_dict)
print(res)
print(torch.equal(model2.lm_head.weight, model.lm_head.weight), model2.transformer.wte.weight is model2.lm_head.weight)
print(len(ckpt["optimizer"]["param_groups"]), ckpt["optimizer"]["param_groups"][1]["params"][:4])

model2.eval()
model2.crop_block_size(8)
print(model2.transformer.wpe.weight.shape, model2.transformer.wpe.weight.requires_grad,
      model2.transformer.h[1].attn.bias.shape)
try:
    model2(torch.zeros(1, 9, dtype=torch.long))
except AssertionError as e:
    print("AssertionError:", e)

g = torch.Generator().manual_seed(42)
start = torch.tensor([encode("all sp")], dtype=torch.long)
out = model2.generate(start, 12, temperature=0.8, top_k=5, generator=g)
print(out.shape, out.dtype)
print(repr(decode(out[0].tolist())))
g.manual_seed(42)
out2 = model2.generate(start, 12, temperature=0.8, top_k=5, generator=g)
print(torch.equal(out, out2))
logits, loss = model2(start)
print(logits.shape, loss)

# the flash path (scaled_dot_product_attention, is_causal=True) must agree with the manual mask
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float32"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
print(dtype, ptdtype, model.transformer.h[0].attn.flash)
X, Y = get_batch("val")
model.eval()
with torch.no_grad():
    slow, slow_loss = model(X, Y)
    for block in model.transformer.h:
        block.attn.use_flash = True
    fast, fast_loss = model(X, Y)
print(torch.allclose(slow, fast, atol=1e-5), f"{slow_loss.item():.4f} {fast_loss.item():.4f}")
