"""Train an MLP classifier on synthetic data; prints the loss every 10 steps.

    python examples/train_mlp.py            # with torchish
    python -m torchish examples/train_mlp.py
The same script with `import torch` prints the same losses under real PyTorch.
"""
import os
import sys

import torchish as torch
import torchish.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import mlp  # noqa: E402

torch.manual_seed(0)
model = mlp(torch, (20, 64, 64, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(512, 20)
y = (X[:, :4].argmax(dim=1))  # a learnable synthetic rule
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=64,
                                     shuffle=True)
step = 0
for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        if step % 4 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}")
        step += 1
with torch.no_grad():
    acc = (model(X).argmax(1) == y).float().mean().item()
print(f"train accuracy {acc:.3f}")
