"""Small models written against the PyTorch API, used by the examples, tests and benchmarks.

Every builder takes the torch module to use (`torchish` by default, or real `torch`), so one
definition serves both sides of a comparison.
"""
import math

import torchish


def mlp(T=torchish, sizes=(784, 256, 256, 10)):
    nn = T.nn
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def LeNet(T=torchish, num_classes=10):
    nn = T.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, num_classes))


def GPT(T=torchish, vocab=128, d_model=128, n_head=4, n_layer=2, block=64, dropout=0.0):
    """A small GPT (nanoGPT's structure): token + position embeddings, pre-norm blocks."""
    nn, F = T.nn, T.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            self.register_buffer("mask", T.tril(T.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, L, C = x.shape
            q, k, v = self.qkv(x).split(d_model, dim=2)
            q = q.view(B, L, n_head, C // n_head).transpose(1, 2)
            k = k.view(B, L, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, L, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.mask[:, :, :L, :L] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, L, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                     nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d_model)
            self.pos = nn.Embedding(block, d_model)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab, bias=False)

        def forward(self, idx):
            B, L = idx.shape
            x = self.tok(idx) + self.pos(T.arange(L, device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    return Model()


def LSTMTagger(T=torchish, vocab=50, embed=16, hidden=32, classes=5):
    nn = T.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, embed)
            self.lstm = nn.LSTM(embed, hidden, batch_first=True)
            self.out = nn.Linear(hidden, classes)

        def forward(self, x):
            h, _ = self.lstm(self.embed(x))
            return self.out(h[:, -1])

    return Model()
