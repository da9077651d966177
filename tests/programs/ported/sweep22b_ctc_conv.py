"""Digit-string recognition with a 1-D conv acoustic model and F.ctc_loss called directly:
time-major (T, N, C) log_softmax outputs, concatenated 1-D targets with target_lengths, the
three reductions, zero_infinity for an impossible alignment, gradients of the log-probs, greedy
CTC decoding (argmax, collapse repeats, drop blanks) and a character error rate."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
BLANK, C, FEAT, T = 0, 5, 6, 16          # labels 1..4
templates = torch.randn(C, FEAT) * 1.5


def synth(n):
    xs = torch.zeros(n, FEAT, T)
    lens_in, labels = [], []
    for i in range(n):
        k = int(torch.randint(1, 4, ()).item())
        lab = torch.randint(1, C, (k,))
        frames = []
        for j, c in enumerate(lab.tolist()):
            frames += [templates[c]] * 3
            frames.append(templates[BLANK])     # separator frame so repeats are learnable
        f = torch.stack(frames, 1) + 0.2 * torch.randn(FEAT, len(frames))
        xs[i, :, : f.size(1)] = f
        lens_in.append(f.size(1))
        labels.append(lab)
    targets = torch.cat(labels)
    return xs, torch.tensor(lens_in), targets, torch.tensor([len(l) for l in labels]), labels


class ConvCTC(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(FEAT, 24, 3, padding=1), nn.GELU(),
            nn.Conv1d(24, 24, 3, padding=2, dilation=2), nn.GELU(),
            nn.Conv1d(24, C, 1),
        )

    def forward(self, x):                       # x: N, F, T
        return self.net(x).permute(2, 0, 1)     # T, N, C


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(-1).t()             # N, T
    out = []
    for seq, n in zip(best, lengths.tolist()):
        prev, hyp = BLANK, []
        for s in seq[:n].tolist():
            if s != prev and s != BLANK:
                hyp.append(s)
            prev = s
        out.append(hyp)
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, y in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
    return d[-1]


x, in_lens, targets, tgt_lens, labels = synth(8)
print("inputs", tuple(x.shape), "in_lens", in_lens.tolist())
print("targets", targets.tolist(), "tgt_lens", tgt_lens.tolist())
model = ConvCTC()
lp = model(x).log_softmax(2)
print("log_probs", tuple(lp.shape), lp.dtype, lp.grad_fn.name())
for red in ("none", "sum", "mean"):
    l = F.ctc_loss(lp, targets, in_lens, tgt_lens, blank=BLANK, reduction=red)
    print(red, l.shape, [round(v, 4) for v in l.reshape(-1).tolist()], l.grad_fn.name())

opt = torch.optim.Adam(model.parameters(), lr=0.02)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
for step in range(40):
    lp = model(x).log_softmax(2)
    loss = F.ctc_loss(lp, targets, in_lens, tgt_lens, zero_infinity=True)
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    sched.step()
    if step % 10 == 0 or step == 39:
        print(f"step {step} loss {loss.item():.4f} grad_norm {gn.item():.4f} lr {sched.get_last_lr()[0]:.4f}")

model.eval()
with torch.no_grad():
    lp = model(x).log_softmax(2)
hyps = greedy_decode(lp, in_lens)
errs = sum(edit_distance(h, l.tolist()) for h, l in zip(hyps, labels))
print("hyps", hyps)
print("refs", [l.tolist() for l in labels])
print("CER", round(errs / int(tgt_lens.sum()), 4))

# gradient of the loss w.r.t. the log-probs themselves (padded frames get none)
lp_leaf = lp.detach().requires_grad_()
F.ctc_loss(lp_leaf, targets, in_lens, tgt_lens, reduction="sum").backward()
g = lp_leaf.grad
print("grad", tuple(g.shape), "padded-frame grad", g[in_lens[0]:, 0].abs().sum().item())
print("grad rows sum to ~0:", bool(g[0].sum(-1).abs().max() < 1e-4))

# an impossible alignment: a 3-label target in 2 frames
short = lp[:2, :1]
bad = torch.tensor([1, 2, 3])
print("inf:", F.ctc_loss(short, bad, torch.tensor([2]), torch.tensor([3]), reduction="none"))
print("zero_inf:", F.ctc_loss(short, bad, torch.tensor([2]), torch.tensor([3]),
                              reduction="none", zero_infinity=True))
try:
    F.ctc_loss(lp, targets, in_lens + 30, tgt_lens)
except RuntimeError as e:
    print("RuntimeError:", e)
for bad_call in (lambda: F.ctc_loss(lp, targets[:5], in_lens, tgt_lens),
                 lambda: F.ctc_loss(lp, targets, in_lens, tgt_lens, blank=C),
                 lambda: F.ctc_loss(lp, targets.view(3, 5), in_lens, tgt_lens),
                 lambda: F.ctc_loss(lp[:, :1], targets[:1], T, 1)):     # bare ints
    try:
        bad_call()
    except (RuntimeError, TypeError) as e:
        print(f"{type(e).__name__}:", e)
