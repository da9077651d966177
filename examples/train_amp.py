"""Mixed-precision training: a small GPT-style model under `torch.autocast` (bfloat16 on the
CPU) with a `GradScaler` and gradient clipping; prints the loss every 2 steps.

    python examples/train_amp.py            # with torchish
    python -m torchish examples/train_amp.py
The same script with `import torch` prints nearly the same losses under real PyTorch (the
bfloat16 matmuls may round differently in the last bit).
"""
import os
import sys

import torchish as torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import GPT  # noqa: E402

torch.manual_seed(0)
model = GPT(torch, vocab=32, d_model=32, n_head=2, n_layer=2, block=16)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=3)
tokens = torch.randint(0, 32, (8, 17))
x, y = tokens[:, :-1], tokens[:, 1:]
for step in range(12):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 32), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    if step % 2 == 0:
        print(f"step {step:3d}  {str(logits.dtype):15s} scale {scaler.get_scale():7.1f}  "
              f"loss {loss.item():.4f}")
