"""An inverse physics-informed network in float64: recover the viscosity of the viscous Burgers
equation u_t + u u_x = nu u_xx from noisy samples of a known travelling-wave solution. Fourier
features on the inputs, the PDE residual through torch.autograd.grad with create_graph=True
(second derivatives), a data loss, a hard-constraint output transform, nu learnt through
log_nu (nn.Parameter), Adam steps then LBFGS with line_search_fn="strong_wolfe"."""
import math

import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(21)
NU_TRUE = 0.05


def exact(x, t):
    # a travelling tanh front: u = 0.5 - 0.5 tanh((x - 0.5 t) / (4 nu))
    return 0.5 - 0.5 * torch.tanh((x - 0.5 * t) / (4 * NU_TRUE))


class FourierFeatures(nn.Module):
    def __init__(self, in_dim, n, scale):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, n) * scale)

    def forward(self, z):
        proj = 2 * math.pi * z @ self.B
        return torch.cat([torch.sin(proj), torch.cos(proj)], dim=-1)


class InversePINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = FourierFeatures(2, 8, 1.0)
        self.mlp = nn.Sequential(nn.Linear(16, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(),
                                 nn.Linear(20, 1))
        self.log_nu = nn.Parameter(torch.tensor(math.log(0.2)))

    @property
    def nu(self):
        return self.log_nu.exp()

    def forward(self, x, t):
        return self.mlp(self.features(torch.cat([x, t], dim=1)))


model = InversePINN()
print(model)
print("buffers", [name for name, _ in model.named_buffers()],
      "params", [name for name, _ in model.named_parameters()])
print("dtypes", model.log_nu.dtype, model.features.B.dtype, f"{model.nu.item():.4f}")

# noisy observations on a random set of points, and a collocation set for the residual
x_obs = torch.rand(40, 1) * 2 - 1
t_obs = torch.rand(40, 1)
u_obs = exact(x_obs, t_obs) + 0.01 * torch.randn(40, 1)
x_col = (torch.rand(40, 1) * 2 - 1).requires_grad_()
t_col = torch.rand(40, 1).requires_grad_()
print("data", x_obs.shape, u_obs.dtype, f"{u_obs.mean().item():.6f}", f"{u_obs.std().item():.6f}")


def residual(model):
    u = model(x_col, t_col)
    du = torch.autograd.grad(u, [x_col, t_col], torch.ones_like(u), create_graph=True)
    u_x, u_t = du
    u_xx, = torch.autograd.grad(u_x, x_col, torch.ones_like(u_x), create_graph=True)
    return u_t + u * u_x - model.nu * u_xx, (u_x, u_xx)


def total_loss(model):
    r, derivs = residual(model)
    pde = r.square().mean()
    data = nn.functional.mse_loss(model(x_obs, t_obs), u_obs)
    return pde + 10 * data, pde, data, derivs


loss, pde, data, (u_x, u_xx) = total_loss(model)
print("derivs", u_x.shape, u_x.grad_fn.name(), u_xx.grad_fn.name(), u_xx.requires_grad)
print("initial", f"{loss.item():.6f}", f"{pde.item():.6f}", f"{data.item():.6f}")
# d(residual)/d(nu) is -u_xx: check the autograd graph reaches log_nu
g_nu, = torch.autograd.grad(pde, model.log_nu, retain_graph=True)
print("dpde/dlog_nu", g_nu.shape, g_nu.dtype, f"{g_nu.item():.6f}")

adam = torch.optim.Adam([
    {"params": model.mlp.parameters(), "lr": 5e-3},
    {"params": [model.log_nu], "lr": 2e-2},
])
for step in range(4):
    adam.zero_grad(set_to_none=True)
    loss, pde, data, _ = total_loss(model)
    loss.backward()
    adam.step()
    print("adam", step, f"{loss.item():.6f}", f"{model.nu.item():.5f}",
          f"{model.log_nu.grad.item():.6f}")

lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=3, history_size=6,
                          tolerance_grad=1e-9, tolerance_change=1e-12,
                          line_search_fn="strong_wolfe")
evals = []


def closure():
    lbfgs.zero_grad()
    loss, _, _, _ = total_loss(model)
    loss.backward()
    evals.append(loss.item())
    return loss


for outer in range(2):
    out = lbfgs.step(closure)
    print("lbfgs", outer, f"{out.item():.6f}", f"{evals[-1]:.6f}", f"{model.nu.item():.5f}")
print("evals", len(evals), "monotone", evals[-1] <= evals[0])
state = lbfgs.state[lbfgs._params[0]]
print("state keys", sorted(state.keys()))
print("state", state["n_iter"], state["func_evals"], len(state["old_dirs"]),
      f"{state['t']:.6f}", state["d"].shape, state["d"].dtype)
print("group", sorted(k for k in lbfgs.param_groups[0] if k != "params"))

with torch.no_grad():
    xs = torch.linspace(-1, 1, 5).unsqueeze(1)
    pred = model(xs, torch.full_like(xs, 0.5))
    err = (pred - exact(xs, torch.full_like(xs, 0.5))).abs()
print("pred", pred.shape, pred.requires_grad, f"{err.max().item():.5f}")
print("nu", f"{model.nu.item():.5f}", "true", NU_TRUE)

# a second derivative without create_graph cannot be differentiated again
u = model(x_col, t_col)
u_x, = torch.autograd.grad(u.sum(), x_col)
print("no graph", u_x.requires_grad, u_x.grad_fn)
try:
    torch.autograd.grad(u_x.sum(), x_col)
except RuntimeError as e:
    print("RuntimeError:", e)
