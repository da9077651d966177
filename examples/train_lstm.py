"""Train an LSTM sequence classifier on synthetic token sequences; prints losses."""
import os
import sys

import torchish as torch
import torchish.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import LSTMTagger  # noqa: E402

torch.manual_seed(0)
model = LSTMTagger(torch, vocab=20, embed=16, hidden=32, classes=4)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
seqs = torch.randint(0, 20, (128, 12))
labels = seqs[:, -1] % 4          # the class is determined by the last token
for step in range(40):
    idx = torch.randint(0, 128, (32,))
    opt.zero_grad()
    loss = F.cross_entropy(model(seqs[idx]), labels[idx])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 5 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
