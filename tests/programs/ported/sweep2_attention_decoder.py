"""Attention building blocks and an encoder-decoder Transformer: F.scaled_dot_product_attention
(is_causal, boolean and additive masks, scale, enable_gqa), nn.MultiheadAttention with
key_padding_mask / attn_mask / kdim, vdim / per-head weights, and nn.Transformer trained on a
copy-reverse task with generate_square_subsequent_mask, padding masks and greedy decoding."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 6, 8), torch.randn(2, 4, 6, 8)
out = F.scaled_dot_product_attention(q, k, v)
print(out.shape, f"{out.abs().sum().item():.4f}")
causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
manual = torch.softmax((q @ q.transpose(-2, -1)) / 8 ** 0.5 +
                       torch.full((5, 5), float("-inf")).triu(1), dim=-1) @ q
print(torch.allclose(causal, manual, atol=1e-6), causal[0, 0, 0])
bool_mask = torch.rand(5, 6) > 0.3
bool_mask[:, 0] = True
o1 = F.scaled_dot_product_attention(q, k, v, attn_mask=bool_mask, scale=0.2)
add_mask = torch.zeros(5, 6).masked_fill(~bool_mask, float("-inf"))
o2 = F.scaled_dot_product_attention(q, k, v, attn_mask=add_mask, scale=0.2)
print(torch.allclose(o1, o2, atol=1e-6), o1[1, 2, :2])
kv_heads = F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True)
print(kv_heads.shape, f"{kv_heads.sum().item():.4f}")
qg = q.clone().requires_grad_(True)
F.scaled_dot_product_attention(qg, k, v, attn_mask=add_mask).sum().backward()
print(qg.grad[0, 0, :2])

mha = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True, kdim=6, vdim=4)
print(mha, [n for n, _ in mha.named_parameters()])
x = torch.randn(3, 5, 8)
kk, vv = torch.randn(3, 7, 6), torch.randn(3, 7, 4)
pad = torch.tensor([[False] * 7, [False] * 5 + [True] * 2, [False] * 3 + [True] * 4])
o, w = mha(x, kk, vv, key_padding_mask=pad)
print(o.shape, w.shape, w[2, 0], o.grad_fn.name())
o, w = mha(x, kk, vv, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
print(w.shape, w[1, 1, 0])
self_attn = nn.MultiheadAttention(8, 4, dropout=0.0)
xs = torch.randn(5, 2, 8)
am = nn.Transformer.generate_square_subsequent_mask(5)
print(am)
o, w = self_attn(xs, xs, xs, attn_mask=am, need_weights=True)
print(o.shape, w[0, 2])
o, none = self_attn(xs, xs, xs, need_weights=False, is_causal=True, attn_mask=am)
print(none, o[0, 0, :3])

PAD, BOS, EOS, V = 0, 1, 2, 10


def make_batch(n, g):
    srcs, tgts = [], []
    for _ in range(n):
        L = int(torch.randint(2, 6, (1,), generator=g))
        s = torch.randint(3, V, (L,), generator=g)
        srcs.append(s)
        tgts.append(torch.cat([torch.tensor([BOS]), s.flip(0), torch.tensor([EOS])]))
    pad_seq = nn.utils.rnn.pad_sequence
    return pad_seq(srcs, batch_first=True, padding_value=PAD), pad_seq(tgts, batch_first=True, padding_value=PAD)


class Seq2Seq(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.emb = nn.Embedding(V, d, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, 8, d) * 0.1)
        self.tf = nn.Transformer(d_model=d, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                                 dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True)
        self.head = nn.Linear(d, V)

    def forward(self, src, tgt_in):
        s = self.emb(src) + self.pos[:, :src.size(1)]
        t = self.emb(tgt_in) + self.pos[:, :tgt_in.size(1)]
        mask = self.tf.generate_square_subsequent_mask(tgt_in.size(1))
        h = self.tf(s, t, tgt_mask=mask, src_key_padding_mask=src == PAD,
                    tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src == PAD,
                    tgt_is_causal=True)
        return self.head(h)


model = Seq2Seq()
print(sum(p.numel() for p in model.parameters()), type(model.tf.decoder.layers[0]).__name__)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
g = torch.Generator().manual_seed(3)
src, tgt = make_batch(16, g)
for step in range(16):
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, V), tgt[:, 1:].reshape(-1), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
print(logits.grad_fn.name())

model.eval()
with torch.no_grad():
    s = src[:3]
    ys = torch.full((3, 1), BOS)
    for _ in range(3):
        nxt = model(s, ys)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], dim=1)
    print(s)
    print(ys)
    mem = model.tf.encoder(model.emb(s) + model.pos[:, :s.size(1)], src_key_padding_mask=s == PAD)
    print(mem.shape, f"{mem.abs().mean().item():.4f}")
