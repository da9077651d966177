"""`torchish.optim.SGD`: stochastic gradient descent with momentum / Nesterov (PyTorch 2.13)."""
from ._shared import hyper, set_group_defaults, step_method
from .optimizer import (Optimizer, _check_fused_foreach, _check_lr, cast_alpha, cast_mul, f64,
                        fence, nonzero, rnd)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum), as `torch.optim.SGD`."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, nesterov=False, maximize=False, foreach=None,
                           differentiable=False, fused=False)

    def _prepare(self, group, p):
        if group["momentum"] != 0:
            buf = self.state[p].get("momentum_buffer")
            if buf is not None:
                return {"momentum_buffer": buf}
        return {}

    def _static(self, group):
        return (nonzero(group["momentum"]), bool(group["nesterov"]), bool(group["maximize"]),
                nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "momentum", "dampening", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        use_momentum, nesterov, maximize, decay = static
        grad = -grad if maximize else grad
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], param, hp) * param, hp)
        if use_momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                # the first step's buffer is a copy of the gradient (no dampening)
                buf = grad
            else:
                buf = rnd(rnd(fence(buf * cast_mul(hp["momentum"], buf, hp), hp), hp)
                          + cast_alpha(1 - f64(hp["dampening"]), buf, hp) * grad, hp)
            state["momentum_buffer"] = buf
            if nesterov:
                grad = rnd(grad + cast_alpha(hp["momentum"], grad, hp) * buf, hp)
            else:
                grad = buf
        param = rnd(param + cast_alpha(-f64(hp["lr"]), param, hp) * grad, hp)
        return param, state

    def _sparse_update(self, group, params):
        # the momentum buffer of a sparse gradient is sparse too; weight decay adds a dense
        # tensor to the sparse gradient, which PyTorch refuses
        lr, momentum = group["lr"], group["momentum"]
        for p in params:
            grad = -p.grad if group["maximize"] else p.grad
            if group["weight_decay"] != 0:
                grad = grad.add(p, alpha=group["weight_decay"])
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.clone().detach()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            p.add_(grad, alpha=-lr)

    step = step_method("SGD")
