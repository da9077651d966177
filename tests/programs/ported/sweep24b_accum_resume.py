"""Gradient accumulation with a linear-warmup LambdaLR, clip_grad_norm_ on the accumulated
gradient, and a checkpoint written in the middle of an epoch (model, AdamW, scheduler, the
global RNG state and the position in the epoch). A second run resumes from that checkpoint
and must end with exactly the weights of an uninterrupted run, as in most trainer scripts."""
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
N, D_IN, CLASSES = 48, 6, 3
X = torch.randn(N, D_IN)
Y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).long() + (X[:, 3] > 1).long()

MICRO, ACCUM, EPOCHS, WARMUP = 4, 3, 2, 4
STEPS_PER_EPOCH = N // (MICRO * ACCUM)
TOTAL = STEPS_PER_EPOCH * EPOCHS


def make_model():
    return nn.Sequential(nn.Linear(D_IN, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, CLASSES))


def warmup_cosine(step):
    if step < WARMUP:
        return (step + 1) / WARMUP
    progress = (step - WARMUP) / max(1, TOTAL - WARMUP)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def build():
    torch.manual_seed(1)
    model = make_model()
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": no_decay, "weight_decay": 0.0}], lr=3e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=warmup_cosine)
    return model, opt, sched


def train(model, opt, sched, start_epoch=0, start_step=0, stop_at=None, log=True):
    """Runs until the end, or returns a checkpoint after optimizer step `stop_at`."""
    global_step = start_epoch * STEPS_PER_EPOCH + start_step
    for epoch in range(start_epoch, EPOCHS):
        perm = torch.randperm(N)
        first = start_step if epoch == start_epoch else 0
        for step in range(first, STEPS_PER_EPOCH):
            opt.zero_grad(set_to_none=True)
            total = 0.0
            for micro in range(ACCUM):
                lo = (step * ACCUM + micro) * MICRO
                idx = perm[lo:lo + MICRO]
                loss = F.cross_entropy(model(X[idx]), Y[idx]) / ACCUM
                loss.backward()
                total += loss.item()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            opt.step()
            sched.step()
            global_step += 1
            if log:
                print(f"ep {epoch} step {step} loss {total:.4f} gnorm {norm.item():.4f} "
                      f"lr {sched.get_last_lr()[0]:.5f} clipped {bool(norm > 0.5)}")
            if stop_at is not None and global_step == stop_at:
                # the permutation must be saved too: the epoch is only half done
                return {"model": model.state_dict(), "opt": opt.state_dict(),
                        "sched": sched.state_dict(), "rng": torch.get_rng_state(),
                        "perm": perm, "epoch": epoch, "step": step + 1}
    return None


# reference run, uninterrupted
torch.manual_seed(123)
ref_model, ref_opt, ref_sched = build()
torch.manual_seed(123)
ref_model.train()
train(ref_model, ref_opt, ref_sched)

# interrupted run: stop after optimizer step 5 (the middle of epoch 1)
model, opt, sched = build()
torch.manual_seed(123)
model.train()
ckpt = train(model, opt, sched, stop_at=5, log=False)
buf = io.BytesIO()
torch.save(ckpt, buf)
print("checkpoint bytes > 0:", buf.tell() > 0, "epoch", ckpt["epoch"], "step", ckpt["step"])
rng = ckpt["rng"]
print("rng state", rng.dtype, tuple(rng.shape))
print("sched state keys", sorted(ckpt["sched"].keys()))
print("opt state keys", sorted(ckpt["opt"].keys()), len(ckpt["opt"]["state"]))
print("param group keys", sorted(k for k in ckpt["opt"]["param_groups"][0] if k != "params"))
print("group params", [g["params"] for g in ckpt["opt"]["param_groups"]])
print("step in state", ckpt["opt"]["state"][0]["step"])

# resume in a fresh process-like setting: new objects, state loaded from bytes
buf.seek(0)
loaded = torch.load(buf, weights_only=True)
model2, opt2, sched2 = build()
model2.load_state_dict(loaded["model"])
opt2.load_state_dict(loaded["opt"])
sched2.load_state_dict(loaded["sched"])
torch.manual_seed(999)  # would change everything if the restored state were ignored
torch.set_rng_state(loaded["rng"])
print("resumed lr", [f"{lr:.5f}" for lr in sched2.get_last_lr()], "last_epoch", sched2.last_epoch)

# finish the half-done epoch with its saved permutation, then continue normally
model2.train()
perm = loaded["perm"]
for step in range(loaded["step"], STEPS_PER_EPOCH):
    opt2.zero_grad()
    for micro in range(ACCUM):
        lo = (step * ACCUM + micro) * MICRO
        idx = perm[lo:lo + MICRO]
        (F.cross_entropy(model2(X[idx]), Y[idx]) / ACCUM).backward()
    nn.utils.clip_grad_norm_(model2.parameters(), max_norm=0.5)
    opt2.step()
    sched2.step()
train(model2, opt2, sched2, start_epoch=loaded["epoch"] + 1, log=False)

for (name, a), b in zip(ref_model.state_dict().items(), model2.state_dict().values()):
    print(f"{name:10s} max diff {(a - b).abs().max().item():.3e}")
print("final lr", f"{sched2.get_last_lr()[0]:.6f}", f"{ref_sched.get_last_lr()[0]:.6f}")

# clip_grad_norm_ variants a trainer might use
p = nn.Parameter(torch.ones(3))
p.grad = torch.tensor([3.0, -4.0, 0.0])
print("inf-norm", nn.utils.clip_grad_norm_([p], 1.0, norm_type=float("inf")).item(), p.grad.tolist())
p.grad = torch.tensor([float("nan"), 1.0, 2.0])
try:
    nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0][:90])
q = nn.Parameter(torch.zeros(2))
print("no grads", nn.utils.clip_grad_norm_([q], 1.0))

model.eval()
with torch.no_grad():
    acc = (model2(X).argmax(1) == Y).float().mean().item()
print(f"train acc {acc:.4f}")
