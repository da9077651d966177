"""Word2Vec skip-gram with negative sampling: a synthetic corpus, the unigram^0.75 noise
distribution sampled with torch.multinomial, input/output nn.Embedding tables trained with SGD
then Adam, bmm scores, logsigmoid loss, and nearest neighbours by cosine similarity + topk."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, D, WINDOW, NEG = 30, 12, 2, 4

# a corpus where words i and i+1 (mod 10 blocks) co-occur
topics = torch.arange(V).view(3, 10)
sent = []
for _ in range(60):
    t = topics[torch.randint(0, 3, ()).item()]
    sent.append(t[torch.randperm(10)[:6]])
corpus = torch.cat(sent)
counts = torch.bincount(corpus, minlength=V).float()
print(corpus.shape, counts[:10], counts.sum())
noise = counts.pow(0.75)
noise = noise / noise.sum()
print(noise.max(), noise.argmax(), noise.dtype)

centers, contexts = [], []
for off in range(-WINDOW, WINDOW + 1):
    if off == 0:
        continue
    c = corpus[max(0, -off): len(corpus) - max(0, off)]
    o = corpus[max(0, off): len(corpus) + min(0, off)]
    centers.append(c)
    contexts.append(o)
centers, contexts = torch.cat(centers), torch.cat(contexts)
print(centers.shape, contexts.shape, centers[:6], contexts[:6])


class SkipGram(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Embedding(V, D)
        self.out = nn.Embedding(V, D)
        nn.init.uniform_(self.inp.weight, -0.5 / D, 0.5 / D)
        nn.init.zeros_(self.out.weight)

    def forward(self, c, o, neg):
        vc = self.inp(c).unsqueeze(2)              # B x D x 1
        uo = self.out(o).unsqueeze(1)              # B x 1 x D
        un = self.out(neg)                         # B x K x D
        pos = torch.bmm(uo, vc).squeeze()          # B
        negs = torch.bmm(un, vc).squeeze(2)        # B x K
        return -(F.logsigmoid(pos) + F.logsigmoid(-negs).sum(1)).mean()


def train(opt_cls, **kw):
    model = SkipGram()
    opt = opt_cls(model.parameters(), **kw)
    n = centers.size(0)
    for epoch in range(3):
        perm = torch.randperm(n)
        total = 0.0
        for idx in perm.split(128):
            neg = torch.multinomial(noise, idx.numel() * NEG, replacement=True).view(-1, NEG)
            loss = model(centers[idx], contexts[idx], neg)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * idx.numel()
        print(f"{opt_cls.__name__} epoch {epoch} loss {total / n:.5f}")
    g = model.inp.weight.grad
    print(type(g).__name__, g.is_sparse, g.layout, g.abs().sum(1).gt(0).sum(), loss.grad_fn.name())
    return model


m = train(torch.optim.SGD, lr=2.0, momentum=0.5)
try:
    torch.optim.Adam(m.parameters(), lr=0.01, betas=(1.5, 0.9))
except ValueError as e:
    print("ValueError", e)
m2 = train(torch.optim.Adam, lr=0.05)
sg = SkipGram()
nn.init.normal_(sg.out.weight)
sg(centers[:4], contexts[:4], torch.zeros(4, NEG, dtype=torch.long)).backward()
g = sg.inp.weight.grad
print(g.abs().sum(1).nonzero().flatten(), sg.out.weight.grad.abs().sum(1).nonzero().flatten())

emb = F.normalize(m2.inp.weight.detach(), dim=1)
sim = emb @ emb.T
sim.fill_diagonal_(-2.0)
vals, nbrs = sim.topk(3, dim=1)
print(nbrs[:5], vals[:5])
same_topic = (nbrs // 10 == torch.arange(V)[:, None] // 10).float().mean()
print("same topic", same_topic)
cos = F.cosine_similarity(m2.inp.weight[0:1], m2.inp.weight, dim=1)
print(cos.shape, cos.argsort(descending=True)[:5], cos.grad_fn.name())
print(torch.multinomial(torch.tensor([0.0, 1.0, 3.0]), 6, replacement=True))
print(torch.multinomial(torch.tensor([[1.0, 2.0, 3.0, 4.0]]), 3))
try:
    torch.multinomial(torch.tensor([0.0, 1.0]), 3)
except RuntimeError as e:
    print("RuntimeError", e)
