"""Framewise phone-style tagging of variable-length synthetic utterances: pre-emphasis, framing
with Tensor.unfold and a Hann window, log1p magnitude of torch.fft.rfft, features padded with
nn.utils.rnn.pad_sequence (labels padded with -100), a length mask from arange comparisons, a
Conv1d + GLU front end (stride 2, so lengths shrink), a bidirectional GRU over packed sequences,
a framewise classifier trained with cross_entropy(ignore_index) and with a masked mean loss,
per-utterance decoding trimmed with narrow, and PackedSequence / unpad_sequence plumbing."""
# tolerance: 1e-3
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import (pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                pad_sequence, unpad_sequence)

torch.manual_seed(0)
SR, WIN, HOP, CLASSES = 1000, 32, 16, 3
TONES = torch.tensor([60.0, 170.0, 320.0])
gen = torch.Generator().manual_seed(11)


def utterance(n_segments):
    """Concatenated tone segments; each segment's class labels every sample in it."""
    waves, marks = [], []
    for _ in range(n_segments):
        label = int(torch.randint(0, CLASSES, (1,), generator=gen))
        n = int(torch.randint(3, 6, (1,), generator=gen)) * HOP
        t = torch.arange(n) / SR
        waves.append(torch.sin(2 * math.pi * TONES[label] * t) + 0.1 * torch.randn(n, generator=gen))
        marks.append(torch.full((n,), label))
    return torch.cat(waves), torch.cat(marks)


data = [utterance(n) for n in (3, 5, 4, 2, 6, 4)]
n_samples = torch.tensor([w.numel() for w, _ in data])
print("samples", n_samples.tolist())
waves = pad_sequence([w for w, _ in data], batch_first=True)
marks = pad_sequence([m for _, m in data], batch_first=True, padding_value=-100)
print("padded", waves.shape, marks.shape, marks.dtype, int((marks == -100).sum()))
time_major = pad_sequence([w for w, _ in data[:2]])
print("time-major", time_major.shape, f"{float(time_major[-1].abs().sum()):.4f}")

# frame the whole padded batch at once; a frame counts only when it lies inside its utterance
emphasized = torch.cat([waves[:, :1], waves[:, 1:] - 0.97 * waves[:, :-1]], dim=1)
frames = emphasized.unfold(-1, WIN, HOP) * torch.hann_window(WIN, periodic=False)
x = torch.log1p(torch.fft.rfft(frames).abs())
lengths = (n_samples - WIN) // HOP + 1
centres = torch.arange(frames.size(1)) * HOP + WIN // 2
y = marks[:, centres]          # a frame's label: the class at its centre sample
mask = torch.arange(x.size(1))[None, :] < lengths[:, None]
y = y.masked_fill(~mask, -100)
print("frames", frames.shape, x.shape, x.dtype, lengths.tolist())
print("mask", mask.dtype, mask.sum(1).tolist(), bool(torch.equal(mask, y != -100)))

# per-bin normalisation statistics from real frames only
valid = x[mask]
mu, sigma = valid.mean(0), valid.std(0)
x = torch.where(mask[..., None], (x - mu) / sigma, torch.zeros(()))
print("normalised", valid.shape, f"{float(x[mask].mean()):.4f}", f"{float(x[mask].std()):.4f}")


class Tagger(nn.Module):
    def __init__(self, n_in, hidden=12):
        super().__init__()
        self.conv = nn.Conv1d(n_in, 2 * hidden, kernel_size=3, stride=2, padding=1)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, CLASSES)

    @staticmethod
    def out_lengths(lengths):
        return (lengths + 2 * 1 - 3) // 2 + 1

    def forward(self, x, lengths):
        h = F.glu(self.conv(x.transpose(1, 2)), dim=1).transpose(1, 2)
        out_len = self.out_lengths(lengths)
        packed = pack_padded_sequence(h, out_len, batch_first=True, enforce_sorted=False)
        seq, _ = self.rnn(packed)
        seq, got = pad_packed_sequence(seq, batch_first=True, total_length=h.size(1))
        return self.out(seq), got


model = Tagger(x.size(-1))
print(model)
print([k for k in model.state_dict() if "rnn" in k])
# labels follow the stride-2 front end: keep every other frame
y2 = y[:, ::2]
print("downsampled", y2.shape, Tagger.out_lengths(lengths).tolist())

opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(10):
    logits, out_len = model(x, lengths)
    loss = F.cross_entropy(logits.transpose(1, 2), y2, ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} {loss.grad_fn.name()}")

print("out lengths", out_len.tolist(), out_len.dtype)
per_frame = F.cross_entropy(logits.transpose(1, 2), y2, reduction="none")
mask2 = y2 != -100
masked = (per_frame * mask2).sum() / mask2.sum()
print("per-frame", per_frame.shape, float(per_frame[~mask2].detach().abs().sum()), f"{masked.item():.4f}",
      torch.allclose(masked, loss))
print("grad", model.rnn.weight_hh_l0_reverse.grad.shape, model.conv.weight.grad.abs().sum() > 0)

model.eval()
with torch.no_grad():
    logits, out_len = model(x, lengths)
    pred = logits.argmax(-1)
acc = (pred == y2)[mask2].float().mean()
print("frame accuracy", f"{acc.item():.3f}")
for i in range(3):
    n = int(out_len[i])
    print("utt", i, pred[i].narrow(0, 0, n).tolist(), y2[i, :n].tolist())

packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
print("packed", packed.data.shape, packed.batch_sizes[:3].tolist(), packed.batch_sizes.dtype,
      packed.sorted_indices.tolist(), packed.unsorted_indices.tolist())
pieces = unpad_sequence(y, lengths, batch_first=True)
print("unpad", [tuple(p.shape) for p in pieces], bool((torch.cat(pieces) >= 0).all()))
by_len = pack_sequence(sorted(pieces, key=len, reverse=True))
print("pack_sequence", by_len.data.shape, by_len.sorted_indices, by_len.batch_sizes[-3:])

for bad in (lambda: F.glu(torch.zeros(2, 3), dim=1),
            lambda: pack_padded_sequence(x, lengths, batch_first=True),
            lambda: pad_sequence([torch.zeros(3, 2), torch.zeros(4, 3)])):
    try:
        bad()
    except RuntimeError as e:
        print("RuntimeError:", str(e).splitlines()[0])
