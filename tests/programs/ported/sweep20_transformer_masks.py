# A tiny copy-task seq2seq with nn.Transformer (post-norm encoder, pre-norm decoder built by
# hand), the masks people pass: causal tgt_mask from generate_square_subsequent_mask, boolean
# src/tgt/memory key_padding_masks, and a float attn_mask; MultiheadAttention used directly with
# need_weights/average_attn_weights and kdim/vdim; greedy decoding in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD, BOS, V, D = 0, 1, 9, 16


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, 12, D) * 0.02)
        enc_layer = nn.TransformerEncoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.0,
                                               batch_first=True)
        dec_layer = nn.TransformerDecoderLayer(D, nhead=2, dim_feedforward=32, dropout=0.0,
                                               batch_first=True, norm_first=True,
                                               activation="gelu")
        self.encoder = nn.TransformerEncoder(enc_layer, num_layers=1,
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec_layer, num_layers=1, norm=nn.LayerNorm(D))
        self.out = nn.Linear(D, V)

    def embed(self, tokens):
        return self.emb(tokens) * D ** 0.5 + self.pos[:, : tokens.size(1)]

    def encode(self, src):
        pad = src.eq(PAD)
        return self.encoder(self.embed(src), src_key_padding_mask=pad), pad

    def decode(self, tgt_in, memory, src_pad):
        L = tgt_in.size(1)
        causal = nn.Transformer.generate_square_subsequent_mask(L)
        h = self.decoder(self.embed(tgt_in), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_in.eq(PAD),
                         memory_key_padding_mask=src_pad, tgt_is_causal=True)
        return self.out(h)

    def forward(self, src, tgt_in):
        memory, src_pad = self.encode(src)
        return self.decode(tgt_in, memory, src_pad)


def batch(n, g):
    lens = torch.randint(3, 7, (n,), generator=g)
    src = torch.zeros(n, 6, dtype=torch.long)
    for i, L in enumerate(lens.tolist()):
        src[i, :L] = torch.randint(2, V, (L,), generator=g)
    tgt = torch.cat([torch.full((n, 1), BOS), src], dim=1)
    return src, tgt[:, :-1], tgt[:, 1:]


model = Seq2Seq()
print(model.decoder.layers[0])
print(model.encoder.layers[0].self_attn.out_proj)
print(sum(p.numel() for p in model.parameters()), model.decoder.layers[0].norm_first)
mask = nn.Transformer.generate_square_subsequent_mask(4)
print(mask, mask.dtype)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
g = torch.Generator().manual_seed(1)
for step in range(5):
    src, tgt_in, tgt_out = batch(8, g)
    logits = model(src, tgt_in)
    loss = F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1), ignore_index=PAD)
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(step, f"{loss.item():.4f}", f"{gn.item():.4f}", logits.shape, loss.grad_fn.name())

model.eval()
src, _, tgt_out = batch(2, g)
with torch.no_grad():
    memory, src_pad = model.encode(src)
    ys = torch.full((2, 1), BOS)
    for _ in range(3):
        nxt = model.decode(ys, memory, src_pad)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], dim=1)
print("src", src.tolist())
print("greedy", ys[:, 1:].tolist(), memory.shape, memory.requires_grad)

# nn.MultiheadAttention on its own: kdim/vdim, per-head weights, bool and float masks
torch.manual_seed(2)
mha = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, batch_first=False)
print(mha, mha._qkv_same_embed_dim, mha.in_proj_weight, mha.q_proj_weight.shape)
q, k, v = torch.randn(4, 2, 8), torch.randn(6, 2, 5), torch.randn(6, 2, 3)
kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
out, w = mha(q, k, v, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
print(out.shape, w.shape, out.grad_fn.name(), f"{w[1, :, :, 4:].abs().sum().item():.4f}")
print(w[0, 0].sum(-1))
float_mask = torch.zeros(4, 6).masked_fill(torch.rand(4, 6) > 0.7, float("-inf"))
float_mask[:, 0] = 0.0
out2, w2 = mha(q, k, v, attn_mask=float_mask)
print(w2.shape, f"{out2.sum().item():.5f}", f"{w2.sum().item():.4f}", torch.isinf(float_mask).sum())
out3, none = mha(q, k, v, need_weights=False)
print(none, f"{out3.pow(2).mean().item():.6f}")
self_attn = nn.MultiheadAttention(8, 4, bias=False, add_bias_kv=True, add_zero_attn=True)
x = torch.randn(3, 2, 8, requires_grad=True)
y, wy = self_attn(x, x, x, attn_mask=torch.triu(torch.ones(3, 3, dtype=torch.bool), 1))
y.sum().backward()
print(wy.shape, self_attn.bias_k.shape, f"{x.grad.norm().item():.5f}", y.grad_fn.name())
