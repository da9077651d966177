"""BiLSTM-CRF sequence tagger: emissions from a bidirectional LSTM, the CRF forward algorithm
with logsumexp over a (B, T, K, K) score tensor, length masks for padded batches, Viterbi
decoding with max(dim) indices and a gather backtrace, trained with SGD."""
import torch
import torch.nn as nn

torch.manual_seed(0)
B, T, V, K, H = 3, 6, 10, 4, 8


class BiLSTMCRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 6, padding_idx=0)
        self.lstm = nn.LSTM(6, H, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * H, K)
        self.trans = nn.Parameter(torch.randn(K, K) * 0.1)   # trans[i, j]: from i to j
        self.start = nn.Parameter(torch.zeros(K))
        self.end = nn.Parameter(torch.zeros(K))

    def emissions(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return self.proj(h)                                    # (B, T, K)

    def log_partition(self, em, mask):
        # pairwise scores for every step at once: (B, T, K, K)
        pair = em.unsqueeze(2) + self.trans.unsqueeze(0).unsqueeze(0)
        alpha = self.start + em[:, 0]
        for t in range(1, em.size(1)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + pair[:, t], dim=1)
            alpha = torch.where(mask[:, t, None], nxt, alpha)
        return torch.logsumexp(alpha + self.end, dim=-1)

    def gold_score(self, em, tags, mask):
        m = mask.float()
        s = self.start[tags[:, 0]] + em.gather(2, tags.unsqueeze(2)).squeeze(2).mul(m).sum(1)
        s = s + (self.trans[tags[:, :-1], tags[:, 1:]] * m[:, 1:]).sum(1)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return s + self.end[last]

    def viterbi(self, em, mask):
        score = self.start + em[:, 0]
        history = []
        for t in range(1, em.size(1)):
            best, idx = (score.unsqueeze(2) + self.trans).max(dim=1)
            nxt = best + em[:, t]
            score = torch.where(mask[:, t, None], nxt, score)
            history.append(torch.where(mask[:, t, None], idx, torch.arange(K).expand_as(idx)))
        best_score, last = (score + self.end).max(dim=-1)
        path = [last]
        for idx in reversed(history):
            last = idx.gather(1, last.unsqueeze(1)).squeeze(1)
            path.append(last)
        path = torch.stack(path[::-1], dim=1)
        return best_score, path.masked_fill(~mask, -1)


lengths = torch.tensor([6, 4, 2])
mask = torch.arange(T)[None, :] < lengths[:, None]
tokens = torch.randint(1, V, (B, T)).masked_fill(~mask, 0)
tags = (tokens % K).masked_fill(~mask, 0)
print("mask", mask.int().tolist())
print("tokens", tokens.tolist())

model = BiLSTMCRF()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(8):
    em = model.emissions(tokens)
    logz = model.log_partition(em, mask)
    gold = model.gold_score(em, tags, mask)
    nll = (logz - gold).mean()
    opt.zero_grad()
    nll.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    print(f"step {step} nll {nll.item():.5f} logZ {[round(v, 4) for v in logz.tolist()]}")

print(logz.grad_fn.name(), gold.grad_fn.name(), nll.grad_fn.name())
print("trans grad", model.trans.grad.abs().sum().item() > 0, model.trans.grad.shape)

with torch.no_grad():
    em = model.emissions(tokens)
    best, path = model.viterbi(em, mask)
    print("viterbi score", [round(v, 4) for v in best.tolist()])
    print("path", path.tolist())
    print("gold", tags.masked_fill(~mask, -1).tolist())
    acc = ((path == tags) & mask).sum().item() / mask.sum().item()
    print(f"token accuracy {acc:.4f}")
    # brute force check of log Z on the shortest sequence (length 2)
    em2 = em[2, :2]
    allp = torch.cartesian_prod(torch.arange(K), torch.arange(K))
    sc = model.start[allp[:, 0]] + em2[0, allp[:, 0]] + model.trans[allp[:, 0], allp[:, 1]] \
        + em2[1, allp[:, 1]] + model.end[allp[:, 1]]
    print("brute logZ", round(torch.logsumexp(sc, 0).item(), 4),
          round(model.log_partition(em, mask)[2].item(), 4), allp.shape)
    vals, idx = em.max(dim=-1)
    print(vals.shape, idx.dtype, torch.max(em, -1, keepdim=True).indices.shape)
    print(torch.logsumexp(torch.full((2, 3), float("-inf")), dim=1))
