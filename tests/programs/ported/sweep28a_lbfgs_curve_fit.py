"""Curve fitting the way scientists do it in PyTorch: a damped oscillator's amplitude, decay,
frequency and phase fitted to noisy samples with torch.optim.LBFGS (a closure, strong-Wolfe
line search, then a plain fixed-step run), with parameters and the optimizer's bookkeeping
(func_evals, n_iter, state_dict keys) printed per step; then a logistic growth curve fitted
with Rprop and with ASGD (its averaged parameters ax), and a small least-squares check
against torch.linalg.lstsq."""

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_printoptions(precision=5)


class DampedOscillator(nn.Module):
    def __init__(self):
        super().__init__()
        self.amp = nn.Parameter(torch.tensor(1.0))
        self.log_decay = nn.Parameter(torch.tensor(-1.0))
        self.freq = nn.Parameter(torch.tensor(2.6))
        self.phase = nn.Parameter(torch.tensor(0.0))

    def forward(self, t):
        return self.amp * torch.exp(-self.log_decay.exp() * t) * torch.cos(self.freq * t + self.phase)


t = torch.linspace(0, 4, 60)
true = 1.7 * torch.exp(-0.45 * t) * torch.cos(3.0 * t + 0.4)
y = true + 0.02 * torch.randn(t.shape)

model = DampedOscillator()
opt = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, history_size=10,
                        line_search_fn="strong_wolfe", tolerance_grad=1e-9,
                        tolerance_change=1e-12)
calls = []


def closure():
    opt.zero_grad()
    loss = torch.mean((model(t) - y) ** 2)
    loss.backward()
    calls.append(loss.item())
    return loss


for outer in range(4):
    loss = opt.step(closure)
    p = {k: round(v.item(), 5) for k, v in model.named_parameters()}
    st = opt.state[opt._params[0]]
    print("outer %d loss %.6e evals %d n_iter %d" % (outer, loss.item(), st["func_evals"], st["n_iter"]), p)
print("closure calls", len(calls), "first %.6f" % calls[0])
print("decay %.4f" % model.log_decay.exp().item())
sd = opt.state_dict()
print("state keys", sorted(sd["state"].keys()), sorted(sd["state"][0].keys()))
print("param_groups", {k: v for k, v in sd["param_groups"][0].items() if k != "params"})
print("old_dirs", len(sd["state"][0]["old_dirs"]), sd["state"][0]["d"].shape, sd["state"][0]["t"])

# the same fit without a line search: fixed steps, and a too-large lr to show divergence guards
model2 = DampedOscillator()
opt2 = torch.optim.LBFGS(model2.parameters(), lr=0.5, max_iter=5, history_size=4)


def closure2():
    opt2.zero_grad()
    loss = torch.mean((model2(t) - y) ** 2)
    loss.backward()
    return loss


for outer in range(5):
    loss = opt2.step(closure2)
    print("fixed-step %d loss %.6f amp %.5f freq %.5f" % (outer, loss.item(), model2.amp.item(),
                                                         model2.freq.item()))
# a fresh LBFGS loading the state of the first continues from its memory
opt3 = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=3, line_search_fn="strong_wolfe")
opt3.load_state_dict(sd)
print("loaded max_iter", opt3.param_groups[0]["max_iter"], "n_iter", opt3.state[opt3._params[0]]["n_iter"])
loss = opt3.step(closure)
print("after reload loss %.6e" % loss.item())
fresh = DampedOscillator()
opt_bad = torch.optim.LBFGS(fresh.parameters(), line_search_fn="armijo")


def closure_bad():
    opt_bad.zero_grad()
    loss = torch.mean((fresh(t) - y) ** 2)
    loss.backward()
    return loss


try:
    opt_bad.step(closure_bad)
except Exception as e:
    print(type(e).__name__, e)
try:
    opt_bad.step()
except Exception as e:
    print(type(e).__name__, e)
try:
    torch.optim.LBFGS([{"params": [model.amp]}, {"params": [model.freq]}])
except Exception as e:
    print(type(e).__name__, e)

# ---- logistic growth with Rprop and ASGD -----------------------------------------------
days = torch.arange(0, 30, dtype=torch.float32)
capacity, rate, mid = 120.0, 0.35, 14.0
counts = capacity / (1 + torch.exp(-rate * (days - mid))) + torch.randn(30)


def logistic(params, x):
    k, r, m = params.unbind()
    return k / (1 + torch.exp(-r * (x - m)))


for name, make in [("Rprop", lambda ps: torch.optim.Rprop(ps, lr=0.05, etas=(0.5, 1.2),
                                                          step_sizes=(1e-6, 5.0))),
                   ("ASGD", lambda ps: torch.optim.ASGD(ps, lr=2e-4, lambd=1e-4, alpha=0.75,
                                                        t0=20, weight_decay=0.0))]:
    params = nn.Parameter(torch.tensor([100.0, 0.2, 10.0]))
    o = make([params])
    for step in range(60):
        o.zero_grad()
        pred = logistic(params, days)
        loss = torch.nn.functional.smooth_l1_loss(pred, counts, beta=2.0)
        loss.backward()
        o.step()
        if step % 15 == 0 or step == 59:
            print(name, step, "loss %.5f" % loss.item(), params.detach())
    state = o.state[params]
    print(name, "state", sorted(state.keys()))
    if name == "Rprop":
        print("step sizes", state["step_size"], "prev", state["prev"])
    else:
        print("eta %.6e mu %.6f" % (state["eta"].item(), state["mu"].item()), "ax", state["ax"])
    print(name, "group", {k: v for k, v in o.param_groups[0].items() if k not in ("params",)})

# ---- a linear least-squares baseline: y ~ a + b t + c t^2 ----------------------------------
A = torch.stack([torch.ones_like(t), t, t ** 2], dim=1)
sol = torch.linalg.lstsq(A, y.unsqueeze(1))
print("lstsq", sol.solution.squeeze(1), sol.rank, sol.residuals.shape, sol.singular_values.shape)
coef = torch.linalg.pinv(A) @ y
print("pinv", coef)
res = y - A @ coef
print("rss %.5f r2 %.5f" % (res.pow(2).sum().item(), 1 - res.var().item() / y.var().item()))
