"""A tiny recommender: nn.Embedding with padding_idx and max_norm=1.0 (renormalised rows),
nn.EmbeddingBag(mode="sum") over user histories with offsets and per_sample_weights, a BPR
loss through F.logsigmoid, negative sampling with torch.randint and torch.randperm, Adagrad,
and hit-rate@k from topk and torch.isin."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_users, n_items, D = 6, 10, 4


class BPR(nn.Module):
    def __init__(self):
        super().__init__()
        self.items = nn.Embedding(n_items + 1, D, padding_idx=0, max_norm=1.0)
        self.history = nn.EmbeddingBag(n_items + 1, D, mode="sum", padding_idx=0)
        self.users = nn.Embedding(n_users, D)

    def user_vec(self, users, flat, offsets, weights):
        return self.users(users) + self.history(flat, offsets, per_sample_weights=weights)

    def forward(self, users, pos, neg, flat, offsets, weights):
        u = self.user_vec(users, flat, offsets, weights)
        return (u * self.items(pos)).sum(-1), (u * self.items(neg)).sum(-1)


model = BPR()
print("padding row", model.items.weight[0].tolist(), model.history.weight[0].abs().sum().item())
print("norms before", model.items.weight.norm(dim=1)[:4])
histories = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 1], [2, 0], [3, 10]]
flat = torch.tensor([i for h in histories for i in h])
offsets = torch.tensor([0] + [len(h) for h in histories[:-1]]).cumsum(0)
weights = torch.rand(len(flat))
print("offsets", offsets.tolist(), flat.shape, weights.shape)
positives = torch.tensor([4, 5, 7, 2, 3, 1])
opt = torch.optim.Adagrad(model.parameters(), lr=0.1, initial_accumulator_value=0.1)
users = torch.arange(n_users)
for step in range(4):
    neg = torch.randint(1, n_items + 1, (n_users,))
    order = torch.randperm(n_users)
    pos_s, neg_s = model(users[order], positives[order], neg[order], flat, offsets, weights)
    loss = -F.logsigmoid(pos_s - neg_s).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", neg.tolist(), order.tolist(), loss.grad_fn.name())
norms = model.items.weight.norm(dim=1)
print("max_norm respected", bool((norms[1:] <= 1.0 + 1e-5).all()), "pad grad",
      model.items.weight.grad[0].abs().sum().item())
print("bag grad", model.history.weight.grad[0].tolist(), model.history.weight.grad.shape)
state = opt.state[model.users.weight]
print("adagrad state", sorted(state), state["sum"].shape, state["step"])

with torch.no_grad():
    u = model.user_vec(users, flat, offsets, weights)
    scores = u @ model.items.weight[1:].T
    top = scores.topk(3, dim=1).indices + 1
    hits = torch.isin(positives, top.flatten())
    per_user = (top == positives[:, None]).any(1)
    print("top3", top.tolist())
    print("hit@3", per_user.float().mean().item(), hits.tolist(), torch.isin(top[0], positives, invert=True).tolist())

bag_mean = nn.EmbeddingBag(5, 2, mode="mean")
bag_max = nn.EmbeddingBag.from_pretrained(torch.arange(10.0).view(5, 2), mode="max")
inp = torch.tensor([[1, 2], [3, 4]])
print("bag 2d", bag_mean(inp).shape, bag_max(inp).tolist())
emb = nn.Embedding(5, 3, max_norm=1.0, norm_type=2.0)
with torch.no_grad():
    emb.weight.mul_(3)
before = emb.weight.norm(dim=1).clone()
out = emb(torch.tensor([1, 1, 3]))
print("renorm", (emb.weight.norm(dim=1) < before).tolist(), out.norm(dim=1).tolist())
try:
    model.history(flat, offsets, per_sample_weights=weights[:3])
except (ValueError, RuntimeError) as e:
    print(type(e).__name__, e)
try:
    nn.EmbeddingBag(5, 2, mode="max")(inp, per_sample_weights=torch.ones(2, 2))
except NotImplementedError as e:
    print("NotImplementedError", e)
print(model.items, model.history)
