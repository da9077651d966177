# A word-level language model with a large-vocabulary head (AdaptiveLogSoftmaxWithLoss), an
# unrolled LSTMCell encoder, a TransformerDecoder over it, and a bilinear re-ranker.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, E, Hd = 40, 12, 12


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, E, padding_idx=0)
        self.cell = nn.LSTMCell(E, Hd)
        layer = nn.TransformerDecoderLayer(Hd, 2, dim_feedforward=24, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.dec = nn.TransformerDecoder(layer, num_layers=1)
        self.head = nn.AdaptiveLogSoftmaxWithLoss(Hd, V, cutoffs=[8, 20], div_value=2.0)

    def forward(self, tokens, targets):
        B, L = tokens.shape
        h, c = torch.zeros(B, Hd), torch.zeros(B, Hd)
        states = []
        for t in range(L):
            h, c = self.cell(self.emb(tokens[:, t]), (h, c))
            states.append(h)
        memory = torch.stack(states, 1)
        mask = torch.ones(L, L, dtype=torch.bool).triu(1)
        hidden = self.dec(memory, memory, tgt_mask=mask, tgt_is_causal=True,
                          tgt_key_padding_mask=tokens == 0)
        return self.head(hidden.reshape(-1, Hd), targets.reshape(-1)), hidden


model = LM()
print(model.head)
print(nn.Transformer.generate_square_subsequent_mask(3))
print([(n, tuple(p.shape)) for n, p in model.head.named_parameters()])
tokens = torch.randint(1, V, (3, 5))
tokens[2, 3:] = 0
targets = torch.roll(tokens, -1, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
for step in range(2):
    out, hidden = model(tokens, targets)
    opt.zero_grad()
    out.loss.backward()
    opt.step()
    print(step, f"{out.loss.item():.5f}", out.output.shape, out.loss.grad_fn.name(),
          f"{model.emb.weight.grad[0].abs().sum().item():.1f}")
print(type(out).__name__, out._fields)

model.eval()
with torch.no_grad():
    out, hidden = model(tokens, targets)
    flat = hidden.reshape(-1, Hd)
    lp = model.head.log_prob(flat)
    print("log_prob", lp.shape, torch.allclose(lp.exp().sum(1), torch.ones(len(flat)), atol=1e-5))
    print("gather", torch.allclose(lp.gather(1, targets.reshape(-1, 1)).squeeze(1), out.output,
                                    atol=1e-5))
    print("predict", model.head.predict(flat[:5]), lp[:5].argmax(1))

# bilinear scorer over pairs of sentence vectors, trained with a margin ranking loss
bil = nn.Bilinear(Hd, Hd, 1)
print(bil, bil.weight.shape)
a, b = torch.randn(4, Hd), torch.randn(4, Hd)
s_pos = bil(a, b).squeeze(1)
s_neg = bil(a, b.roll(1, 0)).squeeze(1)
rank = nn.MarginRankingLoss(margin=0.5)(s_pos, s_neg, torch.ones(4))
rank.backward()
print("rank", f"{rank.item():.5f}", bil(a, b).grad_fn.name(), bil.weight.grad.shape)
print("bilinear fn", torch.allclose(F.bilinear(a, b, bil.weight, bil.bias),
                                    torch.einsum("bi,oij,bj->bo", a, bil.weight, b) + bil.bias,
                                    atol=1e-5))

cell = nn.GRUCell(3, 2)
hx = cell(torch.randn(3))
print("unbatched", hx.shape, hx.grad_fn.name(), nn.RNNCell(3, 2)(torch.randn(3)).grad_fn.name())

errors = [
    lambda: nn.AdaptiveLogSoftmaxWithLoss(Hd, V, cutoffs=[20, 8]),
    lambda: model.head(torch.randn(2, Hd), torch.tensor([1, V])),
    lambda: model.head(torch.randn(2, Hd), torch.tensor([1, 2, 3])),
    lambda: nn.RNNCell(3, 2, nonlinearity="gelu")(torch.randn(1, 3)),
    lambda: bil(torch.randn(2, 5, Hd), torch.randn(2, 6, Hd)),
    lambda: F.bilinear(a, b, bil.weight, torch.zeros(3)),
    lambda: nn.LSTMCell(3, 2)(torch.randn(2, 4)),
    lambda: bil(torch.randn(2, Hd), torch.randn(3, Hd)),
]
for f in errors:
    try:
        f()
        print("no error")
    except (ValueError, RuntimeError) as e:
        print(type(e).__name__, str(e).splitlines()[0])
