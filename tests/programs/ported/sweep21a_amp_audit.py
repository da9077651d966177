"""Auditing a CPU mixed-precision setup before a long run: forward hooks log each module's
output dtype under torch.autocast("cpu", dtype=torch.bfloat16) (conv1d, conv_transpose1d,
PReLU, GroupNorm, LSTM, MultiheadAttention, Embedding, Linear), which functional ops and losses
autocast keeps in float32, an autograd.Function with torch.amp.custom_fwd(cast_inputs=...) /
custom_bwd, a GradScaler loop where an injected inf skips the step and backs the scale off,
scaler state_dict round trip, and a float16 autocast region on the CPU. (The LSTM runs in float32:
PyTorch's bfloat16 oneDNN LSTM rounds its internal steps in ways torchish does not reproduce.)"""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RMSNormFn(torch.autograd.Function):
    """Numerically touchy op kept in float32 whatever autocast says."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, weight, eps):
        print("  RMSNormFn.forward", x.dtype, weight.dtype, torch.is_autocast_enabled("cpu"))
        rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        return x * rstd * weight

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad_out):
        x, weight, rstd = ctx.saved_tensors
        print("  RMSNormFn.backward", grad_out.dtype, torch.is_autocast_enabled("cpu"))
        xhat = x * rstd
        grad_w = (grad_out * xhat).sum(dim=tuple(range(grad_out.dim() - 1)))
        gx = grad_out * weight
        grad_x = rstd * (gx - xhat * (gx * xhat).mean(-1, keepdim=True))
        return grad_x, grad_w, None


class AudioTagger(nn.Module):
    def __init__(self, vocab=10, ch=8, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, ch)
        self.conv = nn.Conv1d(ch, ch, 3, padding=1)
        self.act = nn.PReLU(ch)
        self.gn = nn.GroupNorm(2, ch)
        self.up = nn.ConvTranspose1d(ch, ch, 2, stride=2)
        self.lstm = nn.LSTM(ch, ch, batch_first=True)
        self.attn = nn.MultiheadAttention(ch, 2, batch_first=True)
        self.norm_w = nn.Parameter(torch.ones(ch))
        self.head = nn.Linear(ch, classes)

    def forward(self, tokens):
        h = self.embed(tokens).transpose(1, 2)
        h = self.gn(self.act(self.conv(h)))
        h = self.up(h).transpose(1, 2)
        with torch.autocast("cpu", enabled=False):  # the recurrence in float32, as many AMP recipes do
            h, _ = self.lstm(h.float())
        a, w = self.attn(h, h, h)
        h = RMSNormFn.apply(h + a, self.norm_w, 1e-6)
        return self.head(h.mean(1)), w


model = AudioTagger()
log = []


def hook(name):
    def fn(module, args, output):
        out = output[0] if isinstance(output, tuple) else output
        log.append(f"{name}:{str(args[0].dtype)[6:]}->{str(out.dtype)[6:]}")
    return fn


handles = [m.register_forward_hook(hook(n)) for n, m in model.named_children()]
tokens = torch.randint(0, 10, (4, 5))
labels = torch.tensor([0, 1, 2, 1])
with torch.autocast("cpu", dtype=torch.bfloat16):
    logits, weights = model(tokens)
    loss = F.cross_entropy(logits, labels)
print(" ".join(log))
print(logits.dtype, weights.dtype, loss.dtype, f"{loss.item():.3f}")
loss.backward()
print(model.conv.weight.grad.dtype, model.norm_w.grad.dtype, f"{model.norm_w.grad.abs().sum().item():.3f}")
for h in handles:
    h.remove()
log.clear()
model(tokens)
print(log, model.head._forward_hooks)

# which functional ops run in bfloat16 and which stay float32 under CPU autocast
x = torch.randn(4, 6)
t = torch.rand(4, 6)
with torch.autocast("cpu", dtype=torch.bfloat16):
    xb = x @ torch.randn(6, 6)
    ops = {
        "matmul": xb, "baddbmm": torch.baddbmm(torch.zeros(2, 4, 4), torch.randn(2, 4, 3), torch.randn(2, 3, 4)),
        "addbmm": torch.addbmm(torch.zeros(4, 4), torch.randn(2, 4, 3), torch.randn(2, 3, 4)),
        "mv": torch.mv(x, torch.randn(6)), "dot": torch.dot(x[0], x[1]),
        "softmax": xb.softmax(-1), "log_softmax": F.log_softmax(xb, -1), "layer_norm": F.layer_norm(xb, (6,)),
        "gelu": F.gelu(xb), "sum": xb.sum(), "mean": xb.mean(), "cumsum": xb.cumsum(0), "exp": xb.exp(),
        "mse": F.mse_loss(xb, x), "l1": F.l1_loss(xb, x), "smooth_l1": F.smooth_l1_loss(xb, x),
        "bce_logits": F.binary_cross_entropy_with_logits(xb, t), "kl_div": F.kl_div(F.log_softmax(xb, -1), t.softmax(-1), reduction="batchmean"),
        "cat": torch.cat([xb, x]), "stack": torch.stack([xb, x]), "add_mixed": xb + x,
        "prod": xb.prod(), "cdist": torch.cdist(xb, x), "norm": torch.linalg.vector_norm(xb),
        "topk": xb.topk(2).values, "where": torch.where(x > 0, xb, x),
    }
    print(" ".join(f"{k}={str(v.dtype)[6:]}" for k, v in ops.items()))
    with torch.autocast("cpu", enabled=False):
        print("disabled:", (xb.float() @ x.t()).dtype, torch.is_autocast_enabled("cpu"))
        try:
            xb @ x.t()
        except RuntimeError as e:
            print("RuntimeError:", e)

# float16 autocast on the CPU
with torch.autocast(device_type="cpu", dtype=torch.float16):
    y16 = model.head(torch.randn(2, 8))
    c16 = F.conv1d(torch.randn(1, 2, 5), torch.randn(3, 2, 2))
    print(y16.dtype, c16.dtype, torch.get_autocast_dtype("cpu"), F.softmax(y16, -1).dtype)
print(torch.get_autocast_dtype("cpu"))

# a GradScaler loop with an injected overflow
torch.manual_seed(1)
model = AudioTagger()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
print(scaler.get_scale(), scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval())
import builtins  # noqa: E402
quiet = builtins.print
for step in range(6):
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, _ = model(tokens) if step == 0 else (None, None)
        if step:
            builtins.print = lambda *a, **k: None  # silence the Function's prints after step 0
            logits, _ = model(tokens)
            builtins.print = quiet
        loss = F.cross_entropy(logits, labels)
    if step == 3:
        loss = loss * float("inf")
    before = model.head.weight.detach().clone()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.unscale_(opt)
    finite = all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    moved = not torch.equal(before, model.head.weight)
    # (PyTorch's own bfloat16 convolutions round differently with and without AVX-512, and a
    # bfloat16 run drifts: few digits)
    print(f"step {step} loss {loss.item():.2f} scaled {scaled.dtype} finite {finite} gn {gn.item():.1f} "
          f"stepped {moved} scale {scaler.get_scale()}")
print(opt.state[model.head.weight]["step"], sorted(scaler.state_dict().items()))
try:
    scaler.unscale_(opt)
    scaler.unscale_(opt)
except RuntimeError as e:
    print("RuntimeError:", e)
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "scaler": scaler.state_dict()}, buf)
buf.seek(0)
ck = torch.load(buf)
scaler2 = torch.amp.GradScaler("cpu")
scaler2.load_state_dict(ck["scaler"])
print(scaler2.get_scale(), scaler2.state_dict() == scaler.state_dict(), sorted(ck))
half_head = nn.Linear(4, 2).half()
half_opt = torch.optim.SGD(half_head.parameters(), lr=0.1)
scaler.scale(half_head(torch.ones(1, 4, dtype=torch.half)).float().sum()).backward()
try:
    scaler.unscale_(half_opt)
except ValueError as e:
    print("ValueError:", e)
off = torch.amp.GradScaler("cpu", enabled=False)
print(off.is_enabled(), off.scale(loss) is loss, off.get_scale(), off.state_dict())
