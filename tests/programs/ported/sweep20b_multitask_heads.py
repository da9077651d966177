# A multi-task tabular model as people write it: a shared trunk, task heads in an
# nn.ModuleDict, learned homoscedastic-uncertainty loss weights in an nn.ParameterDict,
# optimizer parameter groups split into decay / no-decay by name, a per-group learning-rate
# change, and a look at the optimizer's state_dict; then masked losses for missing labels.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)


class MultiTask(nn.Module):
    def __init__(self, d_in, hidden, tasks):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                   nn.Dropout(0.0), nn.Linear(hidden, hidden), nn.SiLU())
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, out) for name, out in tasks.items()})
        self.log_vars = nn.ParameterDict({name: nn.Parameter(torch.zeros(())) for name in tasks})

    def forward(self, x, only=None):
        h = self.trunk(x)
        names = [only] if only else self.heads.keys()
        return {name: self.heads[name](h) for name in names}


tasks = {"price": 1, "category": 3, "flag": 1}
model = MultiTask(5, 16, tasks)
print(model)
print("heads", list(model.heads.keys()), "log_vars", list(model.log_vars.keys()))
print("ParameterDict repr", model.log_vars)
print("'flag' in heads", "flag" in model.heads, len(model.heads), type(model.heads["price"]).__name__)

decay, no_decay = [], []
for name, p in model.named_parameters():
    if p.ndim < 2 or "log_vars" in name or "norm" in name.lower():
        no_decay.append(name)
    else:
        decay.append(name)
print("decay", decay)
print("no_decay", no_decay)
params = dict(model.named_parameters())
opt = torch.optim.AdamW([
    {"params": [params[n] for n in decay], "weight_decay": 0.01},
    {"params": [params[n] for n in no_decay if not n.startswith("log_vars")], "weight_decay": 0.0},
    {"params": list(model.log_vars.values()), "lr": 0.05, "weight_decay": 0.0},
], lr=0.01, betas=(0.9, 0.99))
print("groups", [(len(g["params"]), g["lr"], g["weight_decay"]) for g in opt.param_groups])

n = 48
x = torch.randn(n, 5)
price = (x[:, :1] * 2 - x[:, 1:2]) + 0.1 * torch.randn(n, 1)
category = (x[:, 2] > 0).long() + (x[:, 3] > 0.5).long()
flag = (x[:, 4] > 0).float().unsqueeze(1)
# some rows miss their category label: -100 is cross_entropy's ignore_index
category[::5] = -100
print("missing", int((category == -100).sum()))


def task_losses(out):
    return {
        "price": F.smooth_l1_loss(out["price"], price, beta=0.5),
        "category": F.cross_entropy(out["category"], category),
        "flag": F.binary_cross_entropy(torch.sigmoid(out["flag"]), flag),
    }


for step in range(15):
    out = model(x)
    losses = task_losses(out)
    total = sum(torch.exp(-model.log_vars[k]) * v + model.log_vars[k] for k, v in losses.items())
    opt.zero_grad()
    total.backward()
    opt.step()
    if step == 7:
        for g in opt.param_groups[:2]:
            g["lr"] *= 0.5
    if step % 5 == 0 or step == 14:
        print(f"step {step:2d} total {total.item():.5f} " +
              " ".join(f"{k} {v.item():.4f}" for k, v in losses.items()))
print("log_vars", {k: round(v.item(), 4) for k, v in model.log_vars.items()})
print("weights", {k: round(torch.exp(-v).item(), 4) for k, v in model.log_vars.items()})
print("total grad_fn", total.grad_fn.name())

sd = opt.state_dict()
print("state keys", sorted(sd["state"])[:5], len(sd["state"]))
print("group0", {k: v for k, v in sd["param_groups"][0].items() if k != "params"})
print("group2 params", sd["param_groups"][2]["params"])
s0 = sd["state"][0]
print("state0", sorted(s0), s0["step"], s0["exp_avg"].shape, s0["exp_avg_sq"].dtype)

# a new head added later gets its own group
model.heads["aux"] = nn.Linear(16, 2)
opt.add_param_group({"params": model.heads["aux"].parameters(), "lr": 0.02})
print("groups after add", len(opt.param_groups), opt.param_groups[3]["betas"], opt.param_groups[3]["lr"])
print("heads now", list(model.heads), model.heads.pop("aux"))

# evaluation of a single head, with masked metrics
model.eval()
with torch.no_grad():
    out = model(x, only="category")["category"]
    valid = category != -100
    pred = out.argmax(1)
    acc = (pred[valid] == category[valid]).float().mean()
    print("category acc", f"{acc.item():.4f}", "valid", int(valid.sum()), "pred counts",
          torch.bincount(pred, minlength=3).tolist())
    preds = model(x)
    mae = F.l1_loss(preds["price"], price)
    print("price mae", f"{mae.item():.5f}", "flag auc-ish",
          f"{((torch.sigmoid(preds['flag']) > 0.5).float() == flag).float().mean().item():.4f}")

# freezing one head by group: set lr to zero and check it does not move
frozen = model.heads["price"].weight.detach().clone()
opt.param_groups[0]["lr"] = 0.0
model.train()
for _ in range(2):
    opt.zero_grad()
    loss = sum(task_losses(model(x)).values())
    loss.backward()
    opt.step()
print("price head frozen at lr 0", torch.equal(frozen, model.heads["price"].weight))
print("grad norms", {k: f"{m.weight.grad.norm().item():.4f}" for k, m in model.heads.items()})
