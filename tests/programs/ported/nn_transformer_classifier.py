"""A TransformerEncoder text classifier with positional encoding and key padding masks."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD = 0


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0)]
        return self.dropout(x)


class TransformerClassifier(nn.Module):
    def __init__(self, ntoken, d_model=16, nhead=2, d_hid=32, nlayers=2, nclass=3, dropout=0.1):
        super().__init__()
        self.model_type = "Transformer"
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model, padding_idx=PAD)
        self.d_model = d_model
        self.classifier = nn.Linear(d_model, nclass)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.classifier.bias.data.zero_()
        self.classifier.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, src_key_padding_mask):
        # src: [seq_len, batch]
        x = self.embedding(src) * math.sqrt(self.d_model)
        x = self.pos_encoder(x)
        out = self.transformer_encoder(x, src_key_padding_mask=src_key_padding_mask)
        keep = (~src_key_padding_mask).T.unsqueeze(-1).float()
        pooled = (out * keep).sum(0) / keep.sum(0)
        return self.classifier(pooled)


lengths = [7, 5, 3, 6]
seq_len, batch = max(lengths), len(lengths)
src = torch.randint(1, 20, (seq_len, batch))
mask = torch.arange(seq_len).unsqueeze(0) >= torch.tensor(lengths).unsqueeze(1)
src = src.masked_fill(mask.T, PAD)
labels = torch.tensor([0, 2, 1, 2])
print(src.T.tolist())
print(mask)

model = TransformerClassifier(20)
print(model)
print("params:", sum(p.numel() for p in model.parameters()))
print([n for n, _ in model.named_parameters()][:8])
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.9)
for step in range(4):
    model.train()
    optimizer.zero_grad()
    logits = model(src, mask)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    scheduler.step()
    print(f"step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    logits = model(src, mask)
    print(logits.argmax(-1).tolist(), [f"{v:.4f}" for v in logits[0].tolist()])
    # padding positions must not change the output
    src2 = src.clone()
    src2[6:, 2] = 5
    logits2 = model(src2, mask)
    print("pad invariant:", torch.allclose(logits, logits2, atol=1e-5))

mha = nn.MultiheadAttention(16, 2, batch_first=True)
q = torch.randn(2, 4, 16)
kpm = torch.tensor([[False, False, True, True], [False, False, False, False]])
out, w = mha(q, q, q, key_padding_mask=kpm)
print(out.shape, w.shape, f"{w[0, 0].tolist()[2]:.4f}", f"{out.sum().item():.4f}")
causal = nn.Transformer.generate_square_subsequent_mask(4)
print(causal)
out, w = mha(q, q, q, attn_mask=causal, average_attn_weights=False)
print(w.shape, f"{w[1, 1, 0].sum().item():.4f}", f"{w[1, 0, 1, 1].item():.4f}")
