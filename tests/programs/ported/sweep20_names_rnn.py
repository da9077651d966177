# The "classify names with a character-level RNN" tutorial, shaped the way people copy it:
# device boilerplate, letter one-hot encoding, a plain nn.RNN (tanh and relu, stacked,
# bidirectional), flatten_parameters, f-string formatting of 0-dim tensors, Python number
# protocols on tensors, and a manual SGD update that assigns .grad directly.
import math
import string

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print("device", device, device.type, torch.cuda.is_available())
if torch.accelerator.is_available():
    print("accelerator", torch.accelerator.current_accelerator())
else:
    print("accelerator none", torch.accelerator.current_accelerator())
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.manual_seed(3)
torch.cuda.manual_seed_all(3)

letters = string.ascii_letters + " .,;'"
# two name lengths only: every new sequence length is a new trace under torchish
data = {"English": ["Smith", "Brown", "Taylor", "Wilson"],
        "Italian": ["Rossi", "Russo", "Bianco", "Romano"],
        "Japanese": ["Saito", "Ikeda", "Tanaka", "Suzuki"]}
categories = list(data)


def line_to_tensor(line):
    t = torch.zeros(len(line), 1, len(letters))
    for i, ch in enumerate(line):
        t[i][0][letters.find(ch)] = 1
    return t


class NameRNN(nn.Module):
    def __init__(self, n_in, n_hidden, n_out, **kw):
        super().__init__()
        self.rnn = nn.RNN(n_in, n_hidden, **kw)
        dirs = 2 if kw.get("bidirectional") else 1
        self.h2o = nn.Linear(n_hidden * dirs, n_out)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        self.rnn.flatten_parameters()
        out, hidden = self.rnn(line_tensor)
        return self.softmax(self.h2o(out[-1])), hidden


rnn = NameRNN(len(letters), 16, len(categories)).to(device)
print(rnn)
print([(n, tuple(p.shape)) for n, p in rnn.rnn.named_parameters()])
t = line_to_tensor("Saito")
print(t.size(), t.sum().item(), t.nonzero()[:, 2].tolist())
out, hidden = rnn(t)
print(out.shape, hidden.shape, out.grad_fn.name(), hidden.grad_fn.name())


def category_from_output(output):
    top_n, top_i = output.topk(1)
    i = top_i[0].item()
    return categories[i], i


print(category_from_output(out))

criterion = nn.NLLLoss()
lr = 0.05
pairs = [(c, n) for c in categories for n in data[c]]
g = torch.Generator().manual_seed(0)
for epoch in range(3):
    total = 0.0
    order = torch.randperm(len(pairs), generator=g).tolist()
    for k in order:
        cat, name = pairs[k]
        target = torch.tensor([categories.index(cat)], dtype=torch.long)
        rnn.zero_grad()
        output, _ = rnn(line_to_tensor(name))
        loss = criterion(output, target)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-lr)
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(pairs):.4f} last {loss:.4f} {loss:>10.3e}")

# number protocols on tensors
x = torch.tensor(2.5)
idx = torch.tensor(2)
print(float(x), int(x), bool(x > 2), f"{x:.2f}", "%.3f" % x, [10, 20, 30][idx], math.floor(x))
print(1 - x, 1 / x, 2 ** x, 7 // torch.tensor(2), -x, abs(-x), round(x.item()))
print(range(5)[idx], "abc"[torch.tensor(1)], hex(torch.tensor(255)), idx.__index__())

# other RNN flavours: relu, stacked, bidirectional, batch_first, with an initial state
for kw in [dict(nonlinearity="relu"), dict(num_layers=2, dropout=0.0),
           dict(bidirectional=True, batch_first=True), dict(bias=False, num_layers=2,
                                                             bidirectional=True)]:
    torch.manual_seed(1)
    m = nn.RNN(4, 5, **kw)
    bf = kw.get("batch_first", False)
    x = torch.randn(3, 6, 4) if bf else torch.randn(6, 3, 4)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h0 = torch.randn(layers, 3, 5)
    y, h = m(x, h0)
    y.sum().backward()
    print(m, tuple(y.shape), tuple(h.shape), y.grad_fn.name(),
          f"{y.sum().item():.5f}", f"{h.abs().sum().item():.5f}",
          f"{m.weight_hh_l0.grad.norm().item():.5f}", len(m.all_weights), m._flat_weights_names[:2])

# manual gradient assignment and a cell-style loop with nn.RNNCell
cell = nn.RNNCell(3, 4, nonlinearity="tanh")
h = torch.zeros(2, 4)
xs = torch.randn(5, 2, 3)
for step in range(xs.size(0)):
    h = cell(xs[step], h)
print(h.grad_fn.name(), f"{h.sum().item():.5f}")
w = torch.randn(3, requires_grad=True)
w.grad = torch.ones(3)
w.grad = w.grad * 2
with torch.no_grad():
    w.sub_(0.1 * w.grad)
print(w.grad, w.requires_grad, w.is_leaf, w.narrow(0, 1, 2).view_as(torch.empty(2, 1)).shape,
      w.new_zeros(2, 2).dtype)
