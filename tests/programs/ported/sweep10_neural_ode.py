"""A neural ODE with a hand-written RK4 integrator fitted by LBFGS (closure, strong Wolfe line
search), and a physics-informed network whose loss uses autograd.grad of its outputs w.r.t.
its inputs (create_graph) for the residual of u'' + u = 0."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y)


def rk4(f, y0, ts):
    ys = [y0]
    y = y0
    for t0, t1 in zip(ts[:-1], ts[1:]):
        h = t1 - t0
        k1 = f(t0, y)
        k2 = f(t0 + h / 2, y + h / 2 * k1)
        k3 = f(t0 + h / 2, y + h / 2 * k2)
        k4 = f(t1, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


# ground truth: a damped spiral dy/dt = A y
A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
ts = torch.linspace(0.0, 2.0, 5)
y0 = torch.tensor([[2.0, 0.0]])
true = rk4(lambda t, y: y @ A.T, y0, ts)
print("true", true.shape, true[-1])

func = Dynamics()
opt = torch.optim.LBFGS(func.parameters(), lr=1.0, max_iter=4, history_size=5,
                        line_search_fn="strong_wolfe")
calls = [0]


def closure():
    calls[0] += 1
    opt.zero_grad()
    pred = rk4(func, y0, ts)
    loss = (pred - true).pow(2).mean()
    loss.backward()
    return loss


for step in range(2):
    loss = opt.step(closure)
    print(f"lbfgs step {step} loss {loss.item():.6f}")
print("closure calls", calls[0] > 2)
state = opt.state[opt._params[0]]
print("state keys", sorted(k for k in state if not k.startswith("_")))
print("func_evals", state["func_evals"] > 0, "n_iter", state["n_iter"])
with torch.no_grad():
    final = rk4(func, y0, ts)
print("fit error", (final - true).abs().max().item() < 1.0, final.requires_grad)
print("grad_fn", rk4(func, y0, ts[:3]).grad_fn.name())

# LBFGS without line search on a quadratic
x = torch.tensor([1.5, -0.5], requires_grad=True)
q = torch.optim.LBFGS([x], lr=0.5, max_iter=5)


def quad():
    q.zero_grad()
    val = (x[0] - 1) ** 2 + 10 * (x[1] + 2) ** 2
    val.backward()
    return val


for _ in range(3):
    print("quad", q.step(quad).item())
print("x", x.detach())


# physics-informed network: u'' + u = 0, u(0) = 0, u'(0) = 1  ->  u = sin(t)
class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(),
                                  nn.Linear(20, 1))

    def forward(self, t):
        return self.body(t)


torch.manual_seed(1)
pinn = PINN()
t = torch.linspace(0, 3, 20).unsqueeze(1).requires_grad_(True)
t0 = torch.zeros(1, 1, requires_grad=True)


def pinn_loss():
    u = pinn(t)
    du = torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)[0]
    d2u = torch.autograd.grad(du, t, torch.ones_like(du), create_graph=True)[0]
    u0 = pinn(t0)
    du0 = torch.autograd.grad(u0.sum(), t0, create_graph=True)[0]
    residual = (d2u + u).pow(2).mean()
    return residual + u0.pow(2).sum() + (du0 - 1).pow(2).sum(), d2u


adam = torch.optim.Adam(pinn.parameters(), lr=1e-2)
for step in range(12):
    loss, d2u = pinn_loss()
    adam.zero_grad()
    loss.backward()
    adam.step()
    if step % 4 == 0:
        print(f"pinn step {step} loss {loss.item():.6f}")
print("d2u", d2u.shape, d2u.grad_fn.name(), d2u.requires_grad)
print("t.grad", t.grad is not None, t.grad.shape)
lb = torch.optim.LBFGS(pinn.parameters(), lr=1.0, max_iter=4, line_search_fn="strong_wolfe")


def pinn_closure():
    lb.zero_grad()
    loss, _ = pinn_loss()
    loss.backward()
    return loss


for step in range(1):
    print(f"pinn lbfgs {step} loss {lb.step(pinn_closure).item():.6f}")
with torch.no_grad():
    u = pinn(torch.tensor([[0.0], [1.5]]))
print("u", u.flatten().shape, u.dtype)
try:
    torch.autograd.grad(pinn(torch.ones(1, 1)).sum(), torch.ones(1, 1))
except RuntimeError as e:
    print("RuntimeError", e)
torch.set_default_dtype(torch.float32)
print(torch.get_default_dtype(), torch.ones(1).dtype)
