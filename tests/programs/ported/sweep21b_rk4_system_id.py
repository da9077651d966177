"""System identification by backpropagating through an ODE solver: a fixed-step RK4 integrator
written by hand, a damped oscillator whose stiffness and damping are fitted to an observed
trajectory (Adam, then a StepLR schedule), the linear case checked against the closed form
torch.linalg.matrix_exp(t A) x0, sensitivities d x(T) / d theta from torch.autograd.functional
.jacobian, and a learnt nonlinear vector field (a small MLP) trained on batched initial states."""
import torch
import torch.nn as nn
from torch.autograd.functional import jacobian

torch.manual_seed(7)


def rk4(f, x0, t0, t1, steps):
    h = (t1 - t0) / steps
    xs = [x0]
    x, t = x0, t0
    for _ in range(steps):
        k1 = f(t, x)
        k2 = f(t + h / 2, x + h / 2 * k1)
        k3 = f(t + h / 2, x + h / 2 * k2)
        k4 = f(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
        xs.append(x)
    return torch.stack(xs)


def oscillator(params):
    k, c = params.unbind()

    def f(t, x):
        pos, vel = x[..., 0], x[..., 1]
        return torch.stack([vel, -k * pos - c * vel], dim=-1)
    return f


def system_matrix(params):
    k, c = params.unbind()
    zero, one = torch.zeros(()), torch.ones(())
    return torch.stack([torch.stack([zero, one]), torch.stack([-k, -c])])


true = torch.tensor([4.0, 0.3])
x0 = torch.tensor([1.0, 0.0])
T, STEPS = 3.0, 20
traj = rk4(oscillator(true), x0, 0.0, T, STEPS)
A = system_matrix(true)
closed = torch.linalg.matrix_exp(T * A) @ x0
print("traj", traj.shape, traj.dtype, f"{traj[-1, 0].item():.6f}", f"{traj[-1, 1].item():.6f}")
print("matrix_exp", closed.shape, f"{closed[0].item():.6f}", f"{closed[1].item():.6f}",
      "rk4 error", f"{(traj[-1] - closed).abs().max().item():.2e}")
# the exponential of a block-diagonal matrix is block-diagonal; exp(0) is the identity
blocks = torch.block_diag(A, torch.zeros(1, 1))
E = torch.linalg.matrix_exp(blocks)
print("block", E.shape, f"{E[2, 2].item():.4f}", f"{E[:2, 2].abs().sum().item():.4f}")
eig = torch.linalg.eigvals(A)
print("eigvals", eig.dtype, [f"{v:.4f}" for v in sorted(eig.real.tolist())],
      f"{eig.imag.abs().max().item():.4f}")

obs = traj + 0.01 * torch.randn_like(traj)
theta = torch.tensor([2.0, 1.0], requires_grad=True)
opt = torch.optim.Adam([theta], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
for it in range(12):
    opt.zero_grad()
    pred = rk4(oscillator(theta), x0, 0.0, T, STEPS)
    loss = (pred - obs).pow(2).mean()
    loss.backward()
    opt.step()
    sched.step()
    if it % 4 == 3:
        print("fit", it, f"{loss.item():.6f}", [f"{v:.4f}" for v in theta.tolist()],
              f"{theta.grad.norm().item():.5f}", sched.get_last_lr())
print("pred grad_fn", pred.grad_fn.name(), pred.shape)

# sensitivity of the final state to (k, c), by the solver and by the closed form
J_rk4 = jacobian(lambda p: rk4(oscillator(p), x0, 0.0, T, STEPS)[-1], theta.detach())
J_exp = jacobian(lambda p: torch.linalg.matrix_exp(T * system_matrix(p)) @ x0, theta.detach())
print("jacobian", J_rk4.shape, f"{(J_rk4 - J_exp).abs().max().item():.2e}",
      [f"{v:.5f}" for v in J_exp.flatten().tolist()])
# gradient straight through matrix_exp
p = theta.detach().clone().requires_grad_()
end = torch.linalg.matrix_exp(T * system_matrix(p)) @ x0
end[0].backward()
print("matrix_exp grad", end.grad_fn.name(), [f"{v:.5f}" for v in p.grad.tolist()])


class VectorField(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Softplus(), nn.Linear(16, 2))

    def forward(self, t, x):
        return self.net(x)


field = VectorField()
x0s = torch.randn(8, 2)
target = rk4(oscillator(true), x0s, 0.0, 1.0, 10)
print("batched", x0s.shape, target.shape)
opt = torch.optim.AdamW(field.parameters(), lr=1e-2, weight_decay=1e-3)
for epoch in range(4):
    opt.zero_grad()
    out = rk4(field, x0s, 0.0, 1.0, 10)
    loss = nn.functional.smooth_l1_loss(out, target, beta=0.5)
    loss.backward()
    total = torch.nn.utils.clip_grad_norm_(field.parameters(), max_norm=1.0)
    opt.step()
    print("field", epoch, f"{loss.item():.6f}", f"{total.item():.5f}")

try:
    torch.linalg.matrix_exp(torch.randn(2, 3))
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.linalg.matrix_exp(torch.arange(4).reshape(2, 2))
except RuntimeError as e:
    print("RuntimeError:", e)
