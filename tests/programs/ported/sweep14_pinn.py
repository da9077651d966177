"""A physics-informed network for the heat equation u_t = a u_xx: a tanh MLP u(x, t), the PDE
residual from torch.autograd.grad with create_graph=True (first and second derivatives),
boundary and initial losses, a collocation grid from torch.linspace + meshgrid, three Adam
steps then two LBFGS steps with a closure."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
ALPHA = 0.1


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(),
                                 nn.Linear(12, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


xs = torch.linspace(0, 1, 6)
ts = torch.linspace(0, 1, 6)
X, T = torch.meshgrid(xs, ts, indexing="ij")
print("grid", X.shape, T.shape, X[1, 0].item(), T[0, 1].item())
xc = X.reshape(-1, 1).clone().requires_grad_(True)
tc = T.reshape(-1, 1).clone().requires_grad_(True)
# initial condition u(x, 0) = sin(pi x) and u = 0 at both ends, in one batch
xb = torch.cat([xs, torch.zeros(6), torch.ones(6)]).unsqueeze(1)
tb = torch.cat([torch.zeros(6), ts, ts]).unsqueeze(1)
ub = torch.cat([torch.sin(torch.pi * xs), torch.zeros(12)]).unsqueeze(1)


def residual(model):
    u = model(xc, tc)
    u_x, u_t = torch.autograd.grad(u, (xc, tc), grad_outputs=torch.ones_like(u),
                                   create_graph=True)
    u_xx = torch.autograd.grad(u_x.sum(), xc, create_graph=True)[0]
    return u_t - ALPHA * u_xx, u_x, u_xx


def losses(model):
    r, u_x, u_xx = residual(model)
    pde = r.pow(2).mean()
    err = (model(xb, tb) - ub).pow(2)
    return pde, err[:6].mean(), err[6:].mean(), u_x, u_xx


model = PINN()
pde, ic, bc, u_x, u_xx = losses(model)
print("derivs", u_x.shape, u_x.requires_grad, u_x.grad_fn.name(), u_xx.grad_fn.name())
print("initial", f"{pde.item():.6f}", f"{ic.item():.6f}", f"{bc.item():.6f}")

adam = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    adam.zero_grad()
    pde, ic, bc, _, _ = losses(model)
    loss = pde + ic + bc
    loss.backward()
    adam.step()
    print("adam", step, f"{loss.item():.6f}", f"{pde.item():.6f}",
          f"{model.net[0].weight.grad.norm().item():.6f}")

lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3, history_size=5)
calls = []


def closure():
    lbfgs.zero_grad()
    pde, ic, bc, _, _ = losses(model)
    loss = pde + ic + bc
    loss.backward()
    calls.append(loss.item())
    return loss


for step in range(2):
    loss = lbfgs.step(closure)
    print("lbfgs", step, f"{loss.item():.6f}", len(calls), f"{calls[-1]:.6f}")
state = lbfgs.state[lbfgs._params[0]]
print("state", state["func_evals"], state["n_iter"], len(state["old_dirs"]))

with torch.no_grad():
    u = model(xb[:6], torch.full((6, 1), 0.5))
exact = torch.exp(torch.tensor(-ALPHA * math.pi ** 2 * 0.5)) * torch.sin(math.pi * xs)
print("u(x, 0.5)", u.shape, u.requires_grad, f"{(u.squeeze(1) - exact).abs().max().item():.5f}")
try:
    torch.autograd.grad(model(xb, tb).sum(), xc)
except RuntimeError as e:
    print("RuntimeError", e)
