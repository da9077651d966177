"""Train a small GPT on a synthetic character sequence (AdamW, compiled step); prints losses."""
import os
import sys

import torchish as torch
import torchish.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import GPT  # noqa: E402

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 40
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text])
block = 32
model = GPT(torch, vocab=len(chars), d_model=64, n_head=4, n_layer=2, block=block)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)


def train_step(x, y):
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    loss.backward()
    opt.step()
    return loss


step_fn = torch.compile(train_step) if os.environ.get("COMPILE", "1") == "1" else train_step
for step in range(30):
    ix = torch.randint(0, len(data) - block - 1, (16,))
    x = torch.stack([data[i:i + block] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix.tolist()])
    loss = step_fn(x, y)
    if step % 5 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
