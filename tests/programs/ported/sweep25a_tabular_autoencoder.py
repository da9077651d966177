"""A denoising autoencoder for mixed tabular data: encoder/decoder built as nn.Sequential from an
OrderedDict, a BatchNorm buffer walk with named_modules / named_buffers, freezing the encoder
with requires_grad_(False) after warm-up and adding a fresh head through add_param_group, then a
state_dict round-trip into a differently shaped model with strict=False."""
import io
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N, NUM, CAT_CARD = 24, 5, 4
numeric = torch.randn(N, NUM)
numeric[:, 2] = numeric[:, 0] * 0.5 + 0.1 * numeric[:, 2]  # a correlated column to recover
category = torch.randint(0, CAT_CARD, (N,))
x = torch.cat([numeric, F.one_hot(category, CAT_CARD).float()], dim=1)
print("table", tuple(x.shape), x.dtype, "category counts", torch.bincount(category).tolist())


def make_autoencoder(width=8, code=3):
    encoder = nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(NUM + CAT_CARD, width, bias=False)),  # BN follows
        ("bn1", nn.BatchNorm1d(width)),
        ("act1", nn.GELU()),
        ("code", nn.Linear(width, code)),
    ]))
    decoder = nn.Sequential(OrderedDict([
        ("fc1", nn.Linear(code, width)),
        ("act1", nn.ReLU()),
        ("out", nn.Linear(width, NUM + CAT_CARD)),
    ]))
    return nn.Sequential(OrderedDict([("encoder", encoder), ("decoder", decoder)]))


model = make_autoencoder()
print(model.encoder)
print("modules", [name for name, _ in model.named_modules()])
# per-feature statistics kept with the model but not checkpointed
model.register_buffer("feature_mean", x.mean(0), persistent=False)
for name, buf in model.named_buffers():
    print(f"buffer {name}: {tuple(buf.shape)} {buf.dtype}")
print("own buffers", [n for n, _ in model.named_buffers(recurse=False)],
      "bn", model.get_submodule("encoder.bn1").__class__.__name__)
print("first layers", model.encoder[:2], type(model.encoder[-1]).__name__)


def reconstruction_loss(out, target):
    num_loss = F.mse_loss(out[:, :NUM], target[:, :NUM])
    cat_loss = F.cross_entropy(out[:, NUM:], target[:, NUM:].argmax(dim=1))
    return num_loss, cat_loss


opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    noisy = x + 0.1 * torch.randn_like(x)
    noisy[:, NUM:] = noisy[:, NUM:] * (torch.rand(N, 1) > 0.2)  # drop some category cells
    num_loss, cat_loss = reconstruction_loss(model(noisy), x)
    loss = num_loss + 0.5 * cat_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    print(f"step {step}: num {num_loss.item():.5f} cat {cat_loss.item():.5f} "
          f"grad_fn {loss.grad_fn.name()}")
print("running_mean", model.encoder.bn1.running_mean[:3], "batches",
      model.encoder.bn1.num_batches_tracked.item())

# stage 2: freeze the encoder, attach a classifier on the code and train it in a new group
model.encoder.requires_grad_(False)
model.encoder.eval()
head = nn.Linear(3, CAT_CARD)
opt.add_param_group({"params": head.parameters(), "lr": 5e-2, "weight_decay": 1e-3})
print("groups", len(opt.param_groups), [g["lr"] for g in opt.param_groups],
      sorted(opt.param_groups[1].keys()))
frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
print("frozen", frozen)
sd = opt.state_dict()
print("opt groups", [g["params"] for g in sd["param_groups"]], len(sd["state"]))
for step in range(2):
    code = model.encoder(x)
    logits = head(code)
    loss = F.cross_entropy(logits, category)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"head step {step}: {loss.item():.5f} code.requires_grad={code.requires_grad} "
          f"fc1.grad={model.encoder.fc1.weight.grad} head.grad_norm={head.weight.grad.norm():.5f}")
acc = (head(model.encoder(x)).argmax(1) == category).float().mean()
print("train acc", acc.item())

# checkpoint round-trip into a wider decoder: strict=False reports the mismatch
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "head": head.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True)
print("keys", list(ckpt["model"].keys())[:6], len(ckpt["model"]), "feature_mean" in ckpt["model"])
restored = make_autoencoder()
restored.decoder.add_module("extra", nn.Identity())
del ckpt["model"]["decoder.out.bias"]
ckpt["model"]["decoder.skip.weight"] = torch.zeros(2)
result = restored.load_state_dict(ckpt["model"], strict=False)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
print(result)
try:
    restored.load_state_dict(ckpt["model"])
except RuntimeError as e:
    print("strict load:", str(e).splitlines()[0])
wider = make_autoencoder(width=10)
try:
    wider.load_state_dict(ckpt["model"], strict=False)
except RuntimeError as e:
    print("shape mismatch:", str(e).splitlines()[1].strip())
restored.eval()
model.eval()
with torch.no_grad():
    same = torch.equal(restored.encoder(x), model.encoder(x))
print("encoder outputs equal", same, restored.encoder.bn1.num_batches_tracked)
