"""A matrix-factorization recommender with sparse embedding gradients: user/item factor and
bias tables as `nn.Embedding(sparse=True)` trained by SparseAdam, the global bias by SGD;
the sparse `.grad` inspected, then ratings predicted and items recommended."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_users, n_items, dim, n_ratings = 30, 60, 4, 240

# synthetic ratings from hidden factors plus noise
true_u, true_v = torch.randn(n_users, 3), torch.randn(n_items, 3)
users = torch.randint(0, n_users, (n_ratings,))
items = torch.randint(0, n_items, (n_ratings,))
ratings = (true_u[users] * true_v[items]).sum(1) + 0.1 * torch.randn(n_ratings) + 3.0
train, test = torch.arange(200), torch.arange(200, n_ratings)


class MF(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(n_users, dim, sparse=True)
        self.item = nn.Embedding(n_items, dim, sparse=True)
        self.user_bias = nn.Embedding(n_users, 1, sparse=True)
        self.item_bias = nn.Embedding(n_items, 1, sparse=True)
        self.global_bias = nn.Parameter(torch.zeros(()))
        for table in (self.user, self.item):
            nn.init.normal_(table.weight, std=0.3)
        for table in (self.user_bias, self.item_bias):
            nn.init.zeros_(table.weight)

    def forward(self, u, i):
        dot = (self.user(u) * self.item(i)).sum(1)
        return dot + self.user_bias(u).squeeze(1) + self.item_bias(i).squeeze(1) + self.global_bias


model = MF()
print(model)
tables = [p for name, p in model.named_parameters() if name != "global_bias"]
opt_sparse = torch.optim.SparseAdam(tables, lr=0.05)
opt_dense = torch.optim.SGD([model.global_bias], lr=0.5)

for epoch in range(6):
    perm = train[torch.randperm(len(train))]
    total = 0.0
    for start in range(0, len(perm), 50):
        batch = perm[start:start + 50]
        loss = F.mse_loss(model(users[batch], items[batch]), ratings[batch])
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        if epoch == 0 and start == 0:
            g = model.user.weight.grad
            print("user grad:", g.layout, g.is_coalesced(), g._nnz(), tuple(g.shape))
            print("same rows as the batch:", torch.equal(g._indices()[0], users[batch]))
            c = model.item_bias.weight.grad.coalesce()
            print("item bias grad rows:", c._nnz(), "sum", round(c._values().sum().item(), 4))
            print("dense part:", model.global_bias.grad)
        opt_sparse.step()
        opt_dense.step()
        total += loss.item() * len(batch)
    print(f"epoch {epoch}: train mse {total / len(train):.4f}")

with torch.no_grad():
    pred = model(users[test], items[test])
    print(f"test rmse {F.mse_loss(pred, ratings[test]).sqrt().item():.4f}")
    print("first predictions", pred[:4])
    scores = model.user.weight[0] @ model.item.weight.t() + model.item_bias.weight.squeeze(1)
    print("top items for user 0:", scores.topk(3).indices.tolist())

state = opt_sparse.state[model.user.weight]
print("SparseAdam step", state["step"], "exp_avg rows touched",
      int((state["exp_avg"].abs().sum(1) > 0).sum()))
unseen = sorted(set(range(n_items)) - set(items[train].tolist()))
print("items never rated:", unseen, "their bias stays", model.item_bias.weight[unseen].flatten())
