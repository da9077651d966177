"""Image captioning: a tiny CNN encoder giving spatial features, an nn.LSTMCell decoder with
additive attention over them and teacher forcing, captions sorted by length and packed with
pack_padded_sequence to pick the loss targets, cross-entropy with ignore_index, clip_grad_value_,
and a greedy decoding loop with argmax that stops at <end>."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence

torch.manual_seed(0)
PAD, START, END, VOCAB, E, H, A = 0, 1, 2, 10, 8, 12, 6


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, E, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))

    def forward(self, img):
        f = self.conv(img)
        return f.flatten(2).permute(0, 2, 1)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, E, padding_idx=PAD)
        self.att_f, self.att_h, self.att_v = nn.Linear(E, A), nn.Linear(H, A), nn.Linear(A, 1)
        self.init = nn.Linear(E, 2 * H)
        self.cell = nn.LSTMCell(2 * E, H)
        self.out = nn.Linear(H, VOCAB)

    def start(self, feats):
        return torch.tanh(self.init(feats.mean(1))).chunk(2, dim=1)

    def step(self, feats, tok, h, c):
        scores = self.att_v(torch.tanh(self.att_f(feats) + self.att_h(h).unsqueeze(1)))
        alpha = F.softmax(scores.squeeze(2), dim=1)
        ctx = (feats * alpha.unsqueeze(2)).sum(1)
        h, c = self.cell(torch.cat([self.embed(tok), ctx], 1), (h, c))
        return self.out(h), h, c, alpha


enc, dec = Encoder(), Decoder()
imgs = torch.randn(3, 3, 8, 8)
caps = torch.tensor([[1, 5, 6, 2, 0, 0], [1, 3, 4, 7, 8, 2], [1, 9, 2, 0, 0, 0]])
lengths = (caps != PAD).sum(1)
lengths, order = lengths.sort(descending=True)
caps, imgs = caps[order], imgs[order]
print("sorted", lengths.tolist(), order.tolist())
params = list(enc.parameters()) + list(dec.parameters())
opt = torch.optim.Adam(params, lr=2e-2)
for step in range(3):
    feats = enc(imgs)
    h, c = dec.start(feats)
    logits = []
    for t in range(caps.size(1) - 1):
        out, h, c, alpha = dec.step(feats, caps[:, t], h, c)
        logits.append(out)
    logits = torch.stack(logits, 1)
    targets = caps[:, 1:]
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1), ignore_index=PAD)
    packed = pack_padded_sequence(logits, lengths - 1, batch_first=True)
    tpacked = pack_padded_sequence(targets, lengths - 1, batch_first=True)
    loss2 = F.cross_entropy(packed.data, tpacked.data)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(params, 0.005)
    gmax = dec.cell.weight_hh.grad.abs().max().item()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{loss2.item():.5f}", packed.batch_sizes.tolist(),
          f"gmax={gmax:.4f}")
print("shapes", feats.shape, logits.shape, alpha.shape, f"{alpha.sum(1)[0].item():.4f}")
print("grad_fns", logits.grad_fn.name(), h.grad_fn.name(), loss.grad_fn.name())
print("embed pad grad", dec.embed.weight.grad[PAD].abs().sum().item())

enc.eval()
dec.eval()
with torch.no_grad():
    feats = enc(imgs)
    h, c = dec.start(feats)
    tok, words = torch.full((3,), START), []
    done = torch.zeros(3, dtype=torch.bool)
    for t in range(8):
        out, h, c, alpha = dec.step(feats, tok, h, c)
        tok = out.argmax(1)
        words.append(tok)
        done |= tok == END
        if done.all():
            break
words = torch.stack(words, 1)
print("greedy", words.tolist(), words.shape, alpha.requires_grad)
try:
    pack_padded_sequence(logits, torch.tensor([3, 5, 2]), batch_first=True)
except RuntimeError as e:
    print("RuntimeError", e)
