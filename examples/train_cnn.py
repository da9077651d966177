"""Train a LeNet-style CNN on synthetic 28x28 images (SGD with momentum); prints losses."""
import os
import sys

import torchish as torch
import torchish.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import LeNet  # noqa: E402

torch.manual_seed(0)
model = LeNet(torch, num_classes=3)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(96, 1, 28, 28)
labels = torch.randint(0, 3, (96,))
images[labels == 1, :, :14] += 1.0   # make the classes separable
images[labels == 2, :, 14:] += 1.0
for step in range(30):
    idx = torch.randperm(96)[:32]
    opt.zero_grad()
    loss = F.cross_entropy(model(images[idx]), labels[idx])
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
