"""Deep knowledge tracing: each student is a variable-length sequence of (skill, correct)
interactions; an LSTM over the packed, unsorted batch (pad_sequence + pack_padded_sequence with
enforce_sorted=False) predicts for every step the probability of answering the next skill
correctly. The loss is a BCE masked to real steps, and the AUC is computed by hand from ranks
(ties averaged) as people do when they do not want sklearn."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.nn.utils.rnn import (pack_padded_sequence, pad_packed_sequence, pad_sequence,
                                unpad_sequence)

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
device = (torch.accelerator.current_accelerator() if torch.accelerator.is_available()
          else torch.device("cpu"))
K, H = 5, 12  # skills, hidden size


def student(g, n):
    ability = torch.rand(1, generator=g).item()
    skills = torch.randint(0, K, (n,), generator=g)
    difficulty = torch.linspace(0.2, 0.8, K)[skills]
    practice = torch.arange(n, dtype=torch.float32) / 10
    p = torch.sigmoid(4 * (ability - difficulty) + practice)
    correct = (torch.rand(n, generator=g) < p).long()
    return skills, correct


g = torch.Generator().manual_seed(7)
lengths = [9, 4, 7, 3, 8, 6, 5, 9]
students = [student(g, n) for n in lengths]


def batchify(group):
    # interaction id: skill + K * correct, as in the original DKT encoding (0 left for padding)
    inter = [1 + s + K * c for s, c in group]
    lens = torch.LongTensor([len(s) for s, _ in group])
    x = pad_sequence(inter, batch_first=True)
    skills = pad_sequence([s for s, _ in group], batch_first=True)
    correct = pad_sequence([c.float() for _, c in group], batch_first=True, padding_value=-1.0)
    return x, lens, skills, correct


class DKT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(2 * K + 1, 8, padding_idx=0)
        self.lstm = nn.LSTM(8, H, batch_first=True)
        self.out = nn.Linear(H, K)

    def forward(self, x, lens):
        packed = pack_padded_sequence(self.emb(x), lens, batch_first=True, enforce_sorted=False)
        self.lstm.flatten_parameters()
        out, (h, c) = self.lstm(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return self.out(out), out_lens, h


x, lens, skills, correct = batchify(students)
print("padded:", x.shape, x.dtype, lens.tolist())
print(x[:3])
packed = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
print("batch_sizes:", packed.batch_sizes.tolist())
print("sorted:", packed.sorted_indices.tolist(), "unsorted:", packed.unsorted_indices.tolist())
print("data:", packed.data.shape, packed.data[:8].tolist())


def step_loss(logits, skills, correct, lens):
    # the prediction at step t is for the skill asked at step t + 1
    nxt_skill, nxt_correct = skills[:, 1:], correct[:, 1:]
    pred = logits[:, :-1].gather(2, nxt_skill.unsqueeze(-1)).squeeze(-1)
    mask = torch.arange(skills.size(1) - 1).unsqueeze(0) < (lens - 1).unsqueeze(1)
    bce = F.binary_cross_entropy_with_logits(pred, nxt_correct.clamp(min=0), reduction="none")
    loss = (bce * mask).sum() / mask.sum()
    return loss, torch.sigmoid(pred)[mask], nxt_correct[mask]


def auc(scores, labels):
    # Mann-Whitney U with tie-averaged ranks
    order = scores.argsort()
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    uniq, inv = torch.unique(scores, return_inverse=True)
    avg = torch.zeros_like(uniq).index_add_(0, inv, ranks) / torch.bincount(inv).to(scores.dtype)
    ranks = avg[inv]
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


# the original DKT port wrapped its inputs in Variable; still accepted, now a plain alias
xv = Variable(x)
print("legacy Variable:", type(xv).__name__, xv.requires_grad, isinstance(x, Variable),
      xv.data_ptr() == x.data_ptr())

model = DKT().to(device)
print(model, device)
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, nesterov=True)
for epoch in range(12):
    model.train()
    logits, out_lens, h = model(x, lens)
    loss, probs, labels = step_loss(logits, skills, correct, lens)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 3 == 2:
        print(f"epoch {epoch} loss {loss:.4f} auc {auc(probs.detach(), labels):.4f} "
              f"n {labels.numel()} pos {int(labels.sum())} mean_p {float(probs.mean()):.3f}")

print("logits:", logits.shape, logits.grad_fn.name(), "h:", h.shape, "lens:", out_lens.tolist())
print("padded steps all alike:", bool((logits[1, 4:] == logits[1, 4]).all()))
print("emb pad grad:", model.emb.weight.grad[0].abs().sum().item())
print("tie auc:", auc(torch.tensor([0.1, 0.4, 0.4, 0.8]), torch.tensor([0.0, 0.0, 1.0, 1.0])))

model.eval()
with torch.no_grad():
    probs_all = torch.sigmoid(model(x, lens)[0])
per_student = unpad_sequence(probs_all, lens, batch_first=True)
print("unpadded:", [tuple(p.shape) for p in per_student[:3]])
mastery = torch.stack([p[-1] for p in per_student])
print("final mastery:", mastery.shape)
print(mastery[:2])
left = pad_sequence([s for s, _ in students[:3]], batch_first=True, padding_side="left",
                    padding_value=-1)
print("left padded:", left)

for bad in ([3, 0, 2], [2, 3, 1]):
    try:
        pack_padded_sequence(torch.zeros(3, 3, 1), torch.tensor(bad), batch_first=True,
                             enforce_sorted=bad[0] == 2)
    except RuntimeError as e:
        print("RuntimeError:", e)


# checkpoint with its config object; weights_only loading needs the class allow-listed
class DKTConfig:
    def __init__(self, skills, hidden):
        self.skills, self.hidden = skills, hidden


torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "config": DKTConfig(K, H)},
           "/tmp/_sweep26c_dkt.pt")
try:
    torch.load("/tmp/_sweep26c_dkt.pt", weights_only=True)
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0][:60])
with torch.serialization.safe_globals([DKTConfig]):
    ckpt = torch.load("/tmp/_sweep26c_dkt.pt", weights_only=True)
print("config:", ckpt["config"].skills, ckpt["config"].hidden, list(ckpt["model"])[:4])
fresh = DKT()
print(fresh.load_state_dict(ckpt["model"]))
with torch.no_grad():
    print("reloaded equal:", torch.equal(torch.sigmoid(fresh(x, lens)[0]), probs_all))

# fine-tune with Adam: the SGD momentum state cannot seed it
ft = torch.optim.Adam(fresh.parameters(), lr=5e-3)
try:
    ft.load_state_dict(ckpt["optim"])
except KeyError as e:
    print("optimizer state not reusable, missing", e)
    ft = torch.optim.Adam(fresh.parameters(), lr=5e-3)
for _ in range(2):
    loss = step_loss(fresh(x, lens)[0], skills, correct, lens)[0]
    ft.zero_grad()
    loss.backward()
    ft.step()
    print(f"fine-tune loss {loss.item():.4f}", sorted(ft.state[fresh.out.weight]))
