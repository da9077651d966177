"""@torch.compile on a whole training step with different optimizers and a scheduler."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(64, 10)
Y = (X[:, :3].sum(1) > 0).long()


def make_model():
    torch.manual_seed(1)
    return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 2))


for name in ["sgd", "adam", "adamw"]:
    model = make_model()
    if name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    elif name == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)

    @torch.compile(backend="aot_eager")
    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    losses = []
    for i in range(8):
        loss = train_step(X, Y)
        sched.step()
        losses.append(loss.item())
    print(name, " ".join(f"{l:.5f}" for l in losses))
    print(name, "lr", sched.get_last_lr(), "w", f"{model[0].weight.sum().item():.5f}")
    print(name, "grad", f"{model[2].weight.grad.norm().item():.5f}")
    state = opt.state[model[0].weight]
    print(name, sorted(state.keys()), [tuple(v.shape) for k, v in sorted(state.items())])
    if name != "sgd":
        print(name, "step", state["step"].item(), f"{state['exp_avg_sq'].sum().item():.6e}")
