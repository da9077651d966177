"""Knowledge distillation with checkpoints kept in memory: a teacher MLP is trained, saved with
torch.save into io.BytesIO (state_dict, then a full training checkpoint), loaded back with
torch.load(weights_only=True, map_location="cpu") into a fresh teacher frozen with eval() and
requires_grad_(False); a smaller student learns from KL-divergence at temperature T (batchmean,
scaled by T*T, nn.KLDivLoss with log_target too) plus label-smoothed cross-entropy and a
feature-matching term on a projected hidden layer captured by a forward hook, a weight_norm
student head (whole-module torch.save refused); then partial loading with strict=False, the
size-mismatch error, and checkpoint round-trip checks."""
import io
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, D, C = 96, 10, 3
X = torch.randn(N, D)
W = torch.randn(D, C)
y = (X @ W + 0.3 * torch.randn(N, C)).argmax(1)
print("classes", torch.bincount(y, minlength=C).tolist())


def mlp(hidden, dropout):
    return nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(D, hidden)), ("act", nn.GELU()), ("drop", nn.Dropout(dropout)),
        ("fc2", nn.Linear(hidden, hidden)), ("act2", nn.GELU()),
        ("head", nn.Linear(hidden, C)),
    ]))


teacher = mlp(48, 0.1)
opt = torch.optim.SGD(teacher.parameters(), lr=0.2, momentum=0.9)
for epoch in range(25):
    loss = F.cross_entropy(teacher(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("teacher loss", round(loss.item(), 4))

buf = io.BytesIO()
torch.save(teacher.state_dict(), buf)
print("saved bytes > 0", buf.tell() > 0, "keys", list(teacher.state_dict().keys()))
ckpt_buf = io.BytesIO()
torch.save({"epoch": 25, "model": teacher.state_dict(), "optim": opt.state_dict(),
            "meta": {"hidden": 48, "classes": C}}, ckpt_buf)

buf.seek(0)
state = torch.load(buf, weights_only=True, map_location="cpu")
print(type(state).__name__, state["fc1.weight"].shape, state["head.bias"].dtype)
frozen = mlp(48, 0.1)
print(frozen.load_state_dict(state))
frozen.eval().requires_grad_(False)
print("frozen", frozen.training, frozen.drop.training, any(p.requires_grad for p in frozen.parameters()))
with torch.no_grad():
    t_logits = frozen(X)
    same = torch.equal(t_logits, teacher.eval()(X))
print("teacher logits", t_logits.shape, t_logits.requires_grad, "identical after load", same)
print("teacher acc", (t_logits.argmax(1) == y).float().mean().item())

ckpt_buf.seek(0)
ckpt = torch.load(ckpt_buf, weights_only=True)
print("ckpt", ckpt["epoch"], ckpt["meta"], sorted(ckpt["optim"].keys()))
print("momentum keys", sorted(ckpt["optim"]["state"].keys()), ckpt["optim"]["param_groups"][0]["momentum"])
opt2 = torch.optim.SGD(frozen.parameters(), lr=0.1, momentum=0.5)
opt2.load_state_dict(ckpt["optim"])
print("restored lr", opt2.param_groups[0]["lr"], "buffer equal",
      torch.equal(opt2.state[frozen.fc1.weight]["momentum_buffer"], opt.state[teacher.fc1.weight]["momentum_buffer"]))

student = mlp(16, 0.0)
# a DINO-style head: weight-normalised last layer
nn.utils.parametrizations.weight_norm(student.head)
print("student keys", [k for k in student.state_dict() if k.startswith("head.")])
proj = nn.Linear(16, 48)   # maps student hidden to teacher hidden for feature matching
feats = {}


def keep(name):
    def hook(module, inputs, output):
        feats[name] = output
    return hook


handles = [frozen.act2.register_forward_hook(keep("teacher")),
           student.act2.register_forward_hook(keep("student"))]
s_opt = torch.optim.Adam([*student.parameters(), *proj.parameters()], lr=1e-2)
Tmp, alpha = 4.0, 0.7
kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
for step in range(30):
    idx = torch.randint(0, N, (32,))
    xb, yb = X[idx], y[idx]
    with torch.no_grad():
        tl = frozen(xb)
    sl = student(xb)
    soft = F.kl_div(F.log_softmax(sl / Tmp, dim=1), F.softmax(tl / Tmp, dim=1),
                    reduction="batchmean") * Tmp * Tmp
    soft_lt = kl(F.log_softmax(sl / Tmp, dim=1), F.log_softmax(tl / Tmp, dim=1)) * Tmp * Tmp
    hard = F.cross_entropy(sl, yb, label_smoothing=0.1)
    fm = F.mse_loss(proj(feats["student"]), feats["teacher"])
    loss = alpha * soft + (1 - alpha) * hard + 0.1 * fm
    s_opt.zero_grad()
    loss.backward()
    s_opt.step()
    if step % 10 == 0:
        print(f"step {step} soft {soft.item():.4f} same {torch.allclose(soft, soft_lt, atol=1e-6)} "
              f"hard {hard.item():.4f} fm {fm.item():.4f} {soft.grad_fn.name()} {hard.grad_fn.name()}")
for h in handles:
    h.remove()
print("teacher untouched", all(p.grad is None for p in frozen.parameters()), "hooks", len(frozen.act2._forward_hooks))
student.eval()
with torch.no_grad():
    acc = (student(X).argmax(1) == y).float().mean().item()
    agree = (student(X).argmax(1) == t_logits.argmax(1)).float().mean().item()
print(f"student acc {acc:.4f} agreement {agree:.4f}")
print("label smoothing", F.cross_entropy(torch.zeros(2, C), torch.tensor([0, 1]), label_smoothing=0.2).item())

# save the student, then warm-start a wider model from it where shapes allow
try:
    torch.save(student, io.BytesIO())
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
sbuf = io.BytesIO()
torch.save(student.state_dict(), sbuf)
sbuf.seek(0)
s_state = torch.load(sbuf)
wide = mlp(24, 0.0)
try:
    wide.load_state_dict(s_state)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
    print(str(e).splitlines()[1].strip())
wide_sd = wide.state_dict()
compatible = {k: v for k, v in s_state.items() if k not in wide_sd or v.shape == wide_sd[k].shape}
result = wide.load_state_dict(compatible, strict=False)
print(result)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
extra = dict(s_state, **{"temperature": torch.tensor(Tmp)})
print(student.load_state_dict(extra, strict=False))
print("head bias copied", torch.equal(wide.head.bias, student.head.bias))
with torch.no_grad():
    wide.head.weight.copy_(F.pad(student.head.weight, (0, 8)))   # the weight_norm weight, widened
print("head out", torch.allclose(wide.head(F.pad(torch.ones(1, 16), (0, 8))), student.head(torch.ones(1, 16)), atol=1e-6))
