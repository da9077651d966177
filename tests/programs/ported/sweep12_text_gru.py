"""A padded-text classifier: variable-length token lists batched with pad_sequence, a
bidirectional GRU over pack_padded_sequence(enforce_sorted=False), attention pooling with
masked_fill(-inf) + softmax, CrossEntropyLoss with label_smoothing and ignore_index,
clip_grad_norm_ returning the total norm, top-k accuracy, Tensor.new_full/new_zeros, and
sampling replacement tokens with torch.multinomial from a seeded torch.Generator."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
PAD, VOCAB, CLASSES = 0, 20, 4


class Classifier(nn.Module):
    def __init__(self, dim=8, hidden=6):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim, padding_idx=PAD)
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.score = nn.Linear(2 * hidden, 1, bias=False)
        self.out = nn.Linear(2 * hidden, CLASSES)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                      enforce_sorted=False)
        out, h = self.gru(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        mask = tokens == PAD
        scores = self.score(out).squeeze(-1).masked_fill(mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        pooled = torch.bmm(weights.unsqueeze(1), out).squeeze(1)
        return self.out(pooled), weights, h, out_lengths


g = torch.Generator().manual_seed(7)
lengths = [5, 2, 4, 3, 1]
seqs = [torch.randint(1, VOCAB, (n,), generator=g) for n in lengths]
tokens = pad_sequence(seqs, batch_first=True, padding_value=PAD)
labels = torch.tensor([0, 3, -100, 1, 2])
print("tokens", tokens.tolist())
print("pad_sequence time-major", pad_sequence(seqs).shape, pad_sequence(seqs, padding_side="left")[:, 1].tolist())

model = Classifier()
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=-100)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
lens = torch.tensor(lengths)
for step in range(3):
    logits, weights, h, out_lengths = model(tokens, lens)
    loss = loss_fn(logits, labels)
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    opt.step()
    print(step, f"{loss.item():.5f}", f"{norm.item():.5f}", loss.grad_fn.name(), logits.grad_fn.name())
print("h", h.shape, "out lengths", out_lengths.tolist())
print("weights row 1", weights[1].detach())
print("weights sum", weights.sum(-1).detach())
print("embed pad grad", model.embed.weight.grad[PAD].abs().sum().item())

top2 = logits.topk(2, dim=1).indices
valid = labels != -100
hit1 = (top2[:, 0] == labels)[valid].float().mean()
hit2 = (top2 == labels.unsqueeze(1)).any(1)[valid].float().mean()
print("top1", hit1.item(), "top2", hit2.item(), top2.tolist())

smooth = nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none", ignore_index=3)
print("none", smooth(logits.detach(), torch.tensor([0, 3, 1, 1, 3])))
print("sum", nn.functional.cross_entropy(logits.detach(), labels, reduction="sum", label_smoothing=0.3))
probs = torch.softmax(logits.detach(), -1)
print("soft targets", nn.functional.cross_entropy(logits.detach(), probs, label_smoothing=0.1))

sampler = torch.Generator().manual_seed(123)
unigram = torch.bincount(tokens.flatten(), minlength=VOCAB).float()
unigram[PAD] = 0
draws = torch.multinomial(unigram, 6, replacement=True, generator=sampler)
print("multinomial", draws.tolist(), torch.multinomial(unigram, 3, generator=sampler).tolist())
noised = tokens.clone()
replace = (torch.rand(tokens.shape, generator=sampler) < 0.3) & (tokens != PAD)
noised[replace] = torch.multinomial(unigram, int(replace.sum()), replacement=True, generator=sampler)
print("noised", noised.tolist())

filler = tokens.new_full((2, 3), PAD)
zeros = logits.new_zeros(2, CLASSES)
print("new_full", filler.dtype, filler.tolist(), "new_zeros", zeros.dtype, zeros.requires_grad)
print("new_ones", lens.new_ones(3).tolist(), logits.new_empty(0).shape, lens.new_tensor([1, 2]).dtype)
total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=float("inf"))
print("inf norm", f"{total.item():.6f}", nn.utils.get_total_norm([p.grad for p in model.parameters()]).shape)
try:
    pack_padded_sequence(tokens, [5, 2, 4, 3, 1], batch_first=True)
except RuntimeError as e:
    print("RuntimeError", str(e).splitlines()[0][:60])
print("all mass on one", torch.multinomial(torch.tensor([1.0, 0.0]), 2, generator=sampler).tolist())
for probs in (torch.tensor([1.0, -1.0]), torch.zeros(3)):
    try:
        torch.multinomial(probs, 1)
    except RuntimeError as e:
        print("RuntimeError", e)
