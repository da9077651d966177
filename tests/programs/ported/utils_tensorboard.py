"""TensorBoard logging: SummaryWriter files and what TensorBoard's own reader finds in them."""
import os
import sys
import tempfile

import torch

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError:  # torch's writer needs the tensorboard package; without it, skip alike
    print("tensorboard not installed")
    sys.exit(0)
from torch.utils.tensorboard import SummaryWriter

torch.manual_seed(0)
root = tempfile.mkdtemp()
with SummaryWriter(os.path.join(root, "exp")) as writer:
    w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
    for step in range(4):
        loss = (w * w).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
        writer.add_scalar("train/loss", loss.item(), step)
        writer.add_scalars("lr", {"base": 0.1, "warm": 0.1 * (step + 1) / 4}, step)
    writer.add_histogram("weights", w.detach(), 3, bins=[-3, -1, 0, 1, 3])
    writer.add_text("notes", "plain SGD", 0)
    writer.add_image("pixel", torch.tensor([[[0.0, 1.0]], [[0.5, 0.5]], [[1.0, 0.0]]]), 0)
    writer.add_hparams({"lr": 0.1, "opt": "sgd"}, {"final": loss.item()}, run_name="hp")

for dirpath, _, files in sorted(os.walk(root)):
    events = [f for f in files if f.startswith("events.out.tfevents.")]
    print(os.path.relpath(dirpath, root), len(events))

acc = EventAccumulator(os.path.join(root, "exp"), size_guidance={"tensors": 0, "images": 0})
acc.Reload()
print(sorted(acc.Tags()["scalars"]), sorted(acc.Tags()["tensors"]), acc.Tags()["images"])
print([(e.step, round(e.value, 5)) for e in acc.Scalars("train/loss")])
hist = acc.Histograms("weights")[0].histogram_value
print(hist.num, hist.min, hist.max, list(hist.bucket_limit), list(hist.bucket))
print(acc.Tensors("notes/text_summary")[0].tensor_proto.string_val)
image = acc.Images("pixel")[0]
print(image.width, image.height, image.encoded_image_string[:4])
warm = EventAccumulator(os.path.join(root, "exp", "lr_warm"))
warm.Reload()
print([(e.step, e.value) for e in warm.Scalars("lr")])
