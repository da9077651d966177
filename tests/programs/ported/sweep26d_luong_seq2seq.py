"""Tiny GRU encoder-decoder with Luong (general) attention learning to reverse short digit
sequences: attention scores via bmm, padding positions masked with masked_fill(-inf) before
softmax, scheduled sampling (the teacher-forcing ratio decays per epoch and the coin flips come
from a seeded torch.Generator), gradient clipping, and greedy decoding with the attention map
printed for one example."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
PAD, SOS, EOS = 0, 1, 2
VOCAB, HID, EMB, T = 9, 24, 12, 4


def make_batch(n, g):
    # sequences of digits 3..8 with random lengths, padded; target is the reversal + EOS
    lengths = torch.randint(2, T + 1, (n,), generator=g)
    src = torch.randint(3, VOCAB, (n, T), generator=g)
    mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
    src = src.masked_fill(~mask, PAD)
    tgt = torch.full((n, T + 1), PAD, dtype=torch.long)
    for i in range(n):
        L = lengths[i].item()
        tgt[i, :L] = src[i, :L].flip(0)
        tgt[i, L] = EOS
    return src, tgt, mask


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.rnn = nn.GRU(EMB, HID, batch_first=True)

    def forward(self, src):
        out, h = self.rnn(self.emb(src))
        return out, h


class LuongAttention(nn.Module):
    """score(h_t, h_s) = h_t^T W h_s (the 'general' form)."""

    def __init__(self, hid):
        super().__init__()
        self.W = nn.Linear(hid, hid, bias=False)

    def forward(self, dec_h, enc_out, mask):
        # dec_h (B, H), enc_out (B, S, H) -> scores (B, S)
        scores = torch.bmm(self.W(enc_out), dec_h.unsqueeze(2)).squeeze(2)
        scores = scores.masked_fill(~mask, float("-inf"))
        attn = F.softmax(scores, dim=1)
        context = torch.bmm(attn.unsqueeze(1), enc_out).squeeze(1)
        return context, attn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB, padding_idx=PAD)
        self.cell = nn.GRUCell(EMB, HID)
        self.attn = LuongAttention(HID)
        self.concat = nn.Linear(2 * HID, HID)
        self.out = nn.Linear(HID, VOCAB)

    def forward(self, tok, h, enc_out, mask):
        h = self.cell(self.emb(tok), h)
        context, attn = self.attn(h, enc_out, mask)
        attn_h = torch.tanh(self.concat(torch.cat([h, context], dim=1)))
        return self.out(attn_h), h, attn


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()

    def forward(self, src, mask, tgt=None, tf_ratio=0.0, gen=None, steps=T + 1):
        enc_out, h = self.encoder(src)
        h = h.squeeze(0)
        tok = torch.full((src.size(0),), SOS, dtype=torch.long)
        logits, attns, n_teacher = [], [], 0
        for t in range(steps):
            step_logits, h, attn = self.decoder(tok, h, enc_out, mask)
            logits.append(step_logits)
            attns.append(attn)
            use_teacher = tgt is not None and torch.rand(1, generator=gen).item() < tf_ratio
            if use_teacher:
                tok = tgt[:, t]
                n_teacher += 1
            else:
                tok = step_logits.argmax(dim=1).detach()
        return torch.stack(logits, dim=1), torch.stack(attns, dim=1), n_teacher


data_gen = torch.Generator().manual_seed(42)
src, tgt, mask = make_batch(64, data_gen)
print("src", src.shape, src.dtype, "mask", mask.dtype, mask.sum().item())
print("example src", src[0].tolist(), "tgt", tgt[0].tolist())

model = Seq2Seq()
print(model)
print("parameter shapes", {k: tuple(v.shape) for k, v in model.named_parameters()
                           if k.startswith("decoder.attn") or k.startswith("encoder.rnn")})
opt = torch.optim.Adam(model.parameters(), lr=0.02)
tf_gen = torch.Generator().manual_seed(2024)
print("tf generator", type(tf_gen), tf_gen.initial_seed(), tf_gen.device)
print("tf generator state bytes", tf_gen.get_state().shape, tf_gen.get_state().dtype)

for epoch in range(5):
    tf_ratio = max(0.0, 1.0 - epoch / 2)
    model.train()
    logits, attns, n_teacher = model(src, mask, tgt, tf_ratio=tf_ratio, gen=tf_gen)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    print(f"epoch {epoch} tf {tf_ratio:.2f} teacher steps {n_teacher} "
          f"loss {loss.item():.4f} grad norm {norm.item():.4f}")
print("loss grad_fn", loss.grad_fn.name(), "logits", logits.shape, logits.grad_fn.name())

# replaying the generator from a saved state reproduces the same coin flips
state = tf_gen.get_state()
a = torch.rand(5, generator=tf_gen)
tf_gen.set_state(state)
b = torch.rand(5, generator=tf_gen)
print("replayed flips equal", torch.equal(a, b), (a < 0.5).tolist())

model.eval()
with torch.no_grad():
    # the whole batch again (a new batch size would only cost new kernels); show four rows
    logits, attns, _ = model(src, mask)
    pred = logits.argmax(-1)[:4]
    tok_acc = ((pred == tgt[:4]) | (tgt[:4] == PAD)).float().mean().item()
print("greedy predictions", pred.tolist())
print("token accuracy (pad counted correct)", round(tok_acc, 4))
print("attention rows sum to 1:", torch.allclose(attns.sum(-1), torch.ones(64, T + 1)))
L = mask[0].sum().item()
print("attention on padding is zero:", bool((attns[0][:, L:] == 0).all()))
print("attention map example 0 (first 3 steps)\n", attns[0, :3, :L].round(decimals=3))

# a fully masked row gives NaN after softmax, which is why people check for it
scores = torch.tensor([[0.5, 1.0], [0.2, 0.3]]).masked_fill(
    torch.tensor([[True, True], [False, True]]), float("-inf"))
print("fully masked softmax", F.softmax(scores, dim=1))
try:
    torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 5, 1))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.randn(3).masked_fill(torch.tensor([1, 0, 1]), 0.0)
except RuntimeError as e:
    print("RuntimeError:", e)
