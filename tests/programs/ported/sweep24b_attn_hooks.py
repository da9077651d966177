"""A padded-sequence classifier mixing nn.MultiheadAttention (batch_first, key_padding_mask)
for attention pooling with an nn.TransformerEncoder (src_key_padding_mask), plus the usual
hook-based tooling: a feature extractor built from forward hooks, gradient statistics from
full backward hooks, a kwargs forward hook, and removal of all of them afterwards."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, D, HEADS, PAD = 20, 16, 4, 0


class PoolClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, 12, D) * 0.02)
        layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=32, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.query = nn.Parameter(torch.randn(1, 1, D) * 0.1)
        self.pool = nn.MultiheadAttention(D, HEADS, batch_first=True)
        self.head = nn.Linear(D, 3)

    def forward(self, tokens):
        pad = tokens.eq(PAD)
        h = self.embed(tokens) + self.pos[:, :tokens.size(1)]
        h = self.encoder(h, src_key_padding_mask=pad)
        q = self.query.expand(tokens.size(0), -1, -1)
        pooled, weights = self.pool(q, h, h, key_padding_mask=pad)
        return self.head(pooled.squeeze(1)), weights


def make_batch(n, gen):
    lengths = torch.randint(3, 11, (n,), generator=gen)
    tokens = torch.randint(1, VOCAB, (n, 10), generator=gen)
    tokens = tokens.masked_fill(torch.arange(10) >= lengths.unsqueeze(1), PAD)
    # label: which third of the vocabulary the first token falls in
    labels = (tokens[:, 0] - 1) * 3 // (VOCAB - 1)
    return tokens, labels


gen = torch.Generator().manual_seed(1)
train_tokens, train_labels = make_batch(32, gen)
print("batch", train_tokens.shape, train_tokens.dtype, "pads", train_tokens.eq(PAD).sum().item())

model = PoolClassifier()
print(model.pool)
print("encoder params", sum(p.numel() for p in model.encoder.parameters()))
print([k for k in model.state_dict() if k.startswith("encoder.layers.0.self_attn")])

# --- forward hooks as a feature extractor ---------------------------------------------
features = {}


def save_output(name):
    def hook(module, inputs, output):
        features[name] = output[0] if isinstance(output, tuple) else output
    return hook


handles = [model.encoder.layers[i].register_forward_hook(save_output(f"layer{i}"))
           for i in range(2)]
handles.append(model.pool.register_forward_hook(save_output("pool")))

seen_kwargs = []


def kw_hook(module, args, kwargs, output):
    seen_kwargs.append(sorted(kwargs))


handles.append(model.pool.register_forward_hook(kw_hook, with_kwargs=True))

logits, attn = model(train_tokens)
print({k: tuple(v.shape) for k, v in features.items()})
print("kwargs seen by pool hook", seen_kwargs)
print("attn weights", tuple(attn.shape), f"{attn.sum(-1).mean().item():.4f}")
print("weight on pads", attn.squeeze(1).masked_select(train_tokens.eq(PAD)).abs().max().item())
print("padded rows equal?", features["layer1"].shape, type(features["layer1"].grad_fn).__name__)

# --- full backward hooks for gradient statistics --------------------------------------
grad_stats = {}


def grad_hook(name):
    def hook(module, grad_input, grad_output):
        grad_stats[name] = (len(grad_input), len(grad_output),
                            None if grad_input[0] is None else round(grad_input[0].norm().item(), 4),
                            round(grad_output[0].norm().item(), 4))
    return hook


handles.append(model.head.register_full_backward_hook(grad_hook("head")))
handles.append(model.encoder.layers[1].linear2.register_full_backward_hook(grad_hook("ff2")))
pre_calls = []
handles.append(model.head.register_full_backward_pre_hook(
    lambda m, go: pre_calls.append(tuple(go[0].shape))))

opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(12):
    logits, _ = model(train_tokens)
    loss = F.cross_entropy(logits, train_labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0 or step == 11:
        print(f"step {step:2d} loss {loss.item():.4f} head {grad_stats['head'][2:]}"
              f" ff2 {grad_stats['ff2'][:2]}")
print("pre-hook calls", len(pre_calls), pre_calls[0])

for h in handles:
    h.remove()
features.clear()
grad_stats.clear()
n_calls = len(pre_calls)
logits, _ = model(train_tokens)
logits.sum().backward()
print("after removal", features, grad_stats, len(pre_calls) == n_calls, len(seen_kwargs))
print("hook dicts", len(model.head._forward_hooks), len(model.head._backward_hooks),
      len(model.pool._forward_hooks_with_kwargs))

# --- MHA on its own: masks, per-head weights, errors ----------------------------------
mha = nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=5)
q = torch.randn(2, 3, 8)
k = torch.randn(2, 4, 6)
v = torch.randn(2, 4, 5)
kpm = torch.tensor([[False, False, True, True], [False, False, False, False]])
causal = torch.triu(torch.ones(3, 4, dtype=torch.bool), diagonal=1)
out, w = mha(q, k, v, key_padding_mask=kpm, attn_mask=causal, average_attn_weights=False)
print("mha", tuple(out.shape), tuple(w.shape), type(out.grad_fn).__name__)
print("masked weights zero", w[0, :, :, 2:].abs().max().item(), w[1, :, 0, 1:].abs().max().item())
out2, w2 = mha(q, k, v, need_weights=False)
print("no weights", w2, sorted(n for n, _ in mha.named_parameters()))
try:
    mha(q, k, v, key_padding_mask=torch.zeros(2, 5, dtype=torch.bool))
except Exception as e:
    print(type(e).__name__, e)
try:
    nn.MultiheadAttention(10, 3)
except AssertionError as e:
    print("AssertionError", e)

model.eval()
with torch.no_grad():
    test_tokens, test_labels = make_batch(32, gen)
    pred = model(test_tokens)[0].argmax(1)
    print("test acc", (pred == test_labels).float().mean().item())
    # what sits under the padding must not matter
    noisy = torch.where(test_tokens.eq(PAD), torch.randint_like(test_tokens, 1, VOCAB), test_tokens)
    again, w = model.pool(model.query.expand(32, -1, -1),
                          model.encoder(model.embed(noisy) + model.pos[:, :10],
                                        src_key_padding_mask=test_tokens.eq(PAD)),
                          model.encoder(model.embed(noisy) + model.pos[:, :10],
                                        src_key_padding_mask=test_tokens.eq(PAD)),
                          key_padding_mask=test_tokens.eq(PAD))
    print("padding invariant", torch.allclose(model.head(again.squeeze(1)), model(test_tokens)[0],
                                              atol=1e-5), w.shape)
