"""A character-level language model driven one step at a time: nn.GRUCell in a manual loop with
teacher forcing and truncated BPTT (hidden.detach()), then sampling with temperature, top-k and
nucleus (top-p) filtering and torch.multinomial from a seeded torch.Generator whose state is
saved and restored to replay a sample exactly."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "abba cab bad dab abc "
vocab = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(vocab)}
data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
V, H = len(vocab), 12
print("vocab", "".join(vocab), V, data[:8].tolist(), data.dtype)


class CharGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, 6)
        self.cell = nn.GRUCell(6, H)
        self.out = nn.Linear(H, V)

    def forward(self, tokens, h):
        # tokens: (seq, batch); one GRUCell call per time step
        logits = []
        for t in range(tokens.size(0)):
            h = self.cell(self.embed(tokens[t]), h)
            logits.append(self.out(h))
        return torch.stack(logits), h


model = CharGRU()
print(model.cell, [tuple(p.shape) for p in model.cell.parameters()])
opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
SEQ, B = 5, 2
# two interleaved streams, cut into chunks; the hidden state carries over between chunks
streams = data[: (len(data) - 1) // B * B + 1]
inputs = streams[:-1].view(B, -1).t()
targets = streams[1:].view(B, -1).t()
print("streams", tuple(inputs.shape), inputs.stride(), inputs.is_contiguous())
h = torch.zeros(B, H)
for start in range(0, inputs.size(0) - SEQ + 1, SEQ):
    h = h.detach()  # truncated BPTT
    logits, h = model(inputs[start:start + SEQ], h)
    loss = F.cross_entropy(logits.reshape(-1, V), targets[start:start + SEQ].reshape(-1))
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(f"chunk {start}: loss {loss.item():.5f} grad norm {norm.item():.5f} "
          f"h {h.grad_fn.name()} {h.requires_grad}")
print("detached", h.detach().requires_grad, h.detach().grad_fn)


@torch.no_grad()
def sample(prefix, n, temperature=1.0, top_k=None, generator=None):
    h = torch.zeros(1, H)
    for ch in prefix[:-1]:
        h = model.cell(model.embed(torch.tensor([stoi[ch]])), h)
    idx = torch.tensor([stoi[prefix[-1]]])
    out = list(prefix)
    for _ in range(n):
        h = model.cell(model.embed(idx), h)
        logits = model.out(h) / temperature
        if top_k is not None:
            kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = F.softmax(logits, dim=-1)
        idx = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        out.append(vocab[idx.item()])
    return "".join(out), probs


gen = torch.Generator().manual_seed(42)
for temperature in (0.5, 1.0, 2.0):
    s, probs = sample("ab", 6, temperature, generator=gen)
    ent = -(probs * probs.clamp_min(1e-12).log()).sum()
    print(f"T={temperature}: {s!r} entropy {ent.item():.4f} max p {probs.max().item():.4f}")
s, probs = sample("ba", 6, 1.0, top_k=2, generator=gen)
print("top-2:", repr(s), (probs > 0).sum().item(), probs.dtype)


def nucleus(logits, top_p):
    # keep the smallest set of tokens whose probability mass reaches top_p
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    drop_sorted = cum - sorted_logits.softmax(dim=-1) > top_p
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


with torch.no_grad():
    last = torch.tensor([stoi["a"], stoi["b"]])
    logits = model.out(model.cell(model.embed(last), torch.zeros(2, H)))
    filtered = nucleus(logits, 0.6)
    print("nucleus kept", torch.isfinite(filtered).sum(dim=1).tolist(),
          torch.multinomial(filtered.softmax(-1), 3, replacement=True, generator=gen).tolist())
    dist = torch.distributions.Categorical(logits=filtered)
    print("categorical", dist.probs.argmax(-1).tolist(),
          dist.entropy())

state = gen.get_state()
print("state", state.dtype, tuple(state.shape), gen.initial_seed())
first, _ = sample("d", 8, 0.8, generator=gen)
gen.set_state(state)
again, _ = sample("d", 8, 0.8, generator=gen)
print("replay", first == again, repr(first))

# several draws from one distribution, with and without replacement
p = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.5, 0.0]])
g2 = torch.Generator().manual_seed(5)
print(torch.multinomial(p, 2, replacement=False, generator=g2))
draws = torch.multinomial(p[0], 400, replacement=True, generator=g2)
print("frequencies", torch.bincount(draws, minlength=4).tolist())
print("only two nonzero:", torch.multinomial(p[1], 3, replacement=False, generator=g2).tolist())
try:
    torch.multinomial(torch.tensor([0.5, -0.1]), 1)
except RuntimeError as e:
    print("error:", e)
