"""Multi-step time-series forecasting with a Transformer decoder (sequence-first layout): a GRU
encodes the observed window into the cross-attention memory, an nn.TransformerDecoder with a
causal mask from generate_square_subsequent_mask is trained with teacher forcing (the targets
shifted right behind the last observation), then forecasts autoregressively under
torch.no_grad, feeding its own predictions back one step at a time."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CTX, HOR, D = 8, 3, 16


def make_series(n, g):
    t = torch.from_numpy(np.arange(CTX + HOR, dtype=np.float32))
    phase = torch.rand(n, 1, generator=g) * 2 * math.pi
    freq = 0.4 + 0.3 * torch.rand(n, 1, generator=g)
    y = torch.sin(freq * t + phase) + 0.05 * torch.randn(n, CTX + HOR, generator=g)
    # (T, N, 1): the default sequence-first layout of nn.Transformer*
    return y.t().unsqueeze(-1)


class PositionalEncoding(nn.Module):
    def __init__(self, d, max_len=16):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(max_len, 1, d)
        pe[:, 0, 0::2] = torch.sin(pos * div)
        pe[:, 0, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        return x + self.pe[: x.size(0)]


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(1, D)
        self.pos = PositionalEncoding(D)
        self.enc = nn.GRU(D, D)
        layer = nn.TransformerDecoderLayer(D, nhead=4, dim_feedforward=32, dropout=0.0,
                                           activation=F.gelu)
        self.dec = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(D))
        self.head = nn.Linear(D, 1)

    def encode(self, past):
        memory, _ = self.enc(self.pos(self.inp(past)))
        return memory

    def decode(self, tgt_in, memory):
        L = tgt_in.size(0)
        mask = nn.Transformer.generate_square_subsequent_mask(L)
        h = self.dec(self.pos(self.inp(tgt_in)), memory, tgt_mask=mask, tgt_is_causal=True)
        return self.head(h)

    def forward(self, past, future):
        # teacher forcing: the decoder sees the last observation, then the true future
        tgt_in = torch.cat([past[-1:], future[:-1]], dim=0)
        return self.decode(tgt_in, self.encode(past))

    @torch.no_grad()
    def rollout(self, past, steps):
        memory = self.encode(past)
        seq = past[-1:]
        for _ in range(steps):
            nxt = self.decode(seq, memory)[-1:]
            seq = torch.cat([seq, nxt], dim=0)
        return seq[1:]


g = torch.Generator().manual_seed(1)
train, val = make_series(32, g), make_series(16, g)
model = Forecaster()
print(model.dec.layers[0].multihead_attn)
print("mask:", nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64))
print("buffers:", [n for n, _ in model.named_buffers()], "state keys:", len(model.state_dict()))
print("params:", sum(p.numel() for p in model.parameters()))

criterion = nn.MSELoss()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
for epoch in range(5):
    model.train()
    for i in range(0, 32, 16):
        past, future = train[:CTX, i:i + 16], train[CTX:, i:i + 16]
        pred = model(past, future)
        loss = F.smooth_l1_loss(pred, future, beta=0.5)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        sched.step()
    model.eval()
    with torch.no_grad():
        vpred = model(val[:CTX], val[CTX:])
        vloss = criterion(vpred, val[CTX:])
    print(f"epoch {epoch} loss {loss.item():.5f} gnorm {gn:.4f} "
          f"val_tf {vloss:.5f} lr {sched.get_last_lr()[0]:.5f}")

print("pred grad_fn:", pred.grad_fn.name(), pred.shape)
fc = model.rollout(val[:CTX], HOR)
print("rollout:", fc.shape, fc.requires_grad, fc.grad_fn)
print("rollout mse:", round(F.mse_loss(fc, val[CTX:]).item(), 5))
per_step = (fc - val[CTX:]).pow(2).mean(dim=(1, 2))
# a scale-free error on the last step only: log(1 + |e|) averaged
last = (fc.narrow(0, HOR - 1, 1) - val.narrow(0, CTX + HOR - 1, 1)).abs().log1p().mean()
print(f"last-step log1p err {last:.4f}", last.dtype, last.shape)
print("per-step mse:", [round(v, 4) for v in per_step.tolist()])
# the first rollout step sees exactly what teacher forcing saw
with torch.no_grad():
    tf = model(val[:CTX], val[CTX:])
torch.testing.assert_close(fc[0], tf[0])
print("first step matches teacher forcing:", torch.allclose(fc[0], tf[0]))
print(fc[:, :4, 0])

try:
    model.dec(torch.zeros(3, 2, 8), torch.zeros(5, 2, D))
except Exception as e:
    print(type(e).__name__, e)
try:
    model.decode(torch.zeros(3, 2, 1), torch.zeros(5, 3, D))
except Exception as e:
    print(type(e).__name__, e)
