"""Word-level LM pieces: weight tying, packed sequences, bidirectional LSTM, repeated-module repr."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=8, nhid=8, nlayers=2, dropout=0.0, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(2, bsz, 8), weight.new_zeros(2, bsz, 8))


model = RNNModel(30)
print(model)
print(len(list(model.parameters())), sum(p.numel() for p in model.parameters()))
print([n for n, _ in model.named_parameters()])
print(list(model.state_dict().keys()))
print(model.decoder.weight is model.encoder.weight)
data = torch.randint(0, 30, (9, 3))
hidden = model.init_hidden(3)
opt = torch.optim.SGD(model.parameters(), lr=1.0)
for i in range(0, 8, 4):
    x, y = data[i:i + 4], data[i + 1:i + 5].reshape(-1)
    hidden = tuple(h.detach() for h in hidden)
    model.zero_grad()
    out, hidden = model(x, hidden)
    loss = F.nll_loss(out, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-1.0)
    print(f"batch {i} loss {loss.item():.4f} ppl {torch.exp(loss).item():.3f}")

# variable-length batch through a bidirectional GRU
seqs = [torch.randn(5, 4), torch.randn(3, 4), torch.randn(2, 4)]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)
print(padded.shape, lengths)
packed = pack_padded_sequence(padded, lengths, batch_first=True)
print(type(packed).__name__, packed.data.shape, packed.batch_sizes)
gru = nn.GRU(4, 6, batch_first=True, bidirectional=True)
out_packed, h_n = gru(packed)
out, out_lens = pad_packed_sequence(out_packed, batch_first=True)
print(out.shape, out_lens, h_n.shape)
print(f"{out[1, 3:].abs().sum().item():.4f} {out.sum().item():.4f} {h_n.sum().item():.4f}")
print(torch.allclose(out[0, -1, :6], h_n[0, 0]), torch.allclose(out[0, 0, 6:], h_n[1, 0]))
unsorted = pack_padded_sequence(padded[[2, 0, 1]], lengths[[2, 0, 1]], batch_first=True,
                                enforce_sorted=False)
print(unsorted.sorted_indices, unsorted.unsorted_indices)
o2, h2 = gru(unsorted)
print(torch.allclose(h2[:, 1], h_n[:, 0], atol=1e-6))
h_n.sum().backward()
print(f"{gru.weight_ih_l0.grad.abs().sum().item():.4f} {gru.bias_hh_l0_reverse.grad.sum().item():.4f}")

layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.ReLU(), nn.ReLU()])
print(layers)
print(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Tanh()))
