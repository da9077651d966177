"""Toy translation (reverse a token sequence) with nn.Transformer: encoder-decoder,
batch_first=True, norm_first=True, generate_square_subsequent_mask, src/tgt key padding masks,
label-smoothed CrossEntropyLoss(ignore_index=PAD), a Noam warmup schedule through LambdaLR and
greedy decoding that grows the output with torch.cat."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
PAD, BOS, EOS, VOCAB, D = 0, 1, 2, 10, 16


class Translator(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.tgt_embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, 12, D) * 0.02)
        self.transformer = nn.Transformer(d_model=D, nhead=2, num_encoder_layers=1,
                                          num_decoder_layers=1, dim_feedforward=32, dropout=0.0,
                                          batch_first=True, norm_first=True)
        self.generator = nn.Linear(D, VOCAB)

    def embed(self, table, tokens):
        return table(tokens) * math.sqrt(D) + self.pos[:, : tokens.shape[1]]

    def encode(self, src):
        return self.transformer.encoder(self.embed(self.src_embed, src),
                                        src_key_padding_mask=src == PAD)

    def decode(self, memory, tgt, src):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        out = self.transformer.decoder(self.embed(self.tgt_embed, tgt), memory, tgt_mask=mask,
                                       tgt_key_padding_mask=tgt == PAD,
                                       memory_key_padding_mask=src == PAD)
        return self.generator(out)

    def forward(self, src, tgt):
        return self.decode(self.encode(src), tgt, src)


def make_batch():
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 9, PAD], [5, 3, PAD, PAD]])
    rows = []
    for s in src.tolist():
        body = [t for t in s if t != PAD][::-1]
        rows.append([BOS] + body + [EOS] + [PAD] * (4 - len(body)))
    tgt = torch.tensor(rows)
    return src, tgt[:, :-1], tgt[:, 1:]


model = Translator()
print(nn.Transformer.generate_square_subsequent_mask(3))
print(model.transformer.encoder.layers[0].norm_first, type(model.transformer.decoder.norm).__name__)
print(sum(p.numel() for p in model.parameters()), "parameters")
criterion = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
warmup = 2
noam = lambda step: D ** -0.5 * min((step + 1) ** -0.5, (step + 1) * warmup ** -1.5)
sched = torch.optim.lr_scheduler.LambdaLR(opt, noam)
src, tgt_in, tgt_out = make_batch()
print("src", src.tolist(), "tgt_in", tgt_in.tolist())
for step in range(3):
    logits = model(src, tgt_in)
    loss = criterion(logits.reshape(-1, VOCAB), tgt_out.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step}: loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.6f} "
          f"logits {tuple(logits.shape)} {loss.grad_fn.name()}")

model.eval()
with torch.no_grad():
    memory = model.encode(src)
    print("memory", memory.shape, memory[0, 0, :3])
    ys = torch.full((src.shape[0], 1), BOS, dtype=torch.long)
    for _ in range(3):
        next_tok = model.decode(memory, ys, src)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, next_tok], dim=1)
    print("greedy", ys.tolist())
    unsmoothed = nn.functional.cross_entropy(model(src, tgt_in).transpose(1, 2), tgt_out,
                                             ignore_index=PAD, reduction="none")
    print("per-token", unsmoothed.shape, (unsmoothed == 0).sum().item(),
          round(unsmoothed.sum().item(), 4))
try:
    model.transformer(torch.randn(2, 3, D), torch.randn(3, 3, D))
except RuntimeError as e:
    print("RuntimeError", e)
