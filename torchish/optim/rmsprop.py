"""`torchish.optim.RMSprop` (centered, momentum, weight decay), PyTorch 2.13."""
import jax.numpy as jnp

from .adam import _new_step
from .optimizer import Optimizer, _check_lr, _torch, cast, f64, fence, lerp, nonzero

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Implements the RMSprop algorithm, as `torch.optim.RMSprop`."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        self._steps_to_tensors(device_if=("capturable",))

    def _prepare(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            t = _torch()
            state["step"] = _new_step(p)
            state["square_avg"] = t.zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = t.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = t.zeros_like(p)
        out = {"step": state["step"], "square_avg": state["square_avg"]}
        if group["momentum"] > 0:
            out["momentum_buffer"] = state["momentum_buffer"]
        if group["centered"]:
            out["grad_avg"] = state["grad_avg"]
        return out

    def _static(self, group):
        return (bool(group["momentum"] > 0), bool(group["centered"]), bool(group["maximize"]),
                nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return {"lr": group["lr"], "alpha": group["alpha"], "eps": group["eps"],
                "weight_decay": group["weight_decay"], "momentum": group["momentum"]}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        use_momentum, centered, maximize, decay = static
        alpha = f64(hp["alpha"])
        grad = -grad if maximize else grad
        state["step"] = state["step"] + 1
        if decay:
            grad = grad + cast(hp["weight_decay"], grad) * param

        square_avg = (fence(state["square_avg"] * cast(alpha, grad), hp)
                      + cast(1 - alpha, grad) * grad * grad)
        state["square_avg"] = square_avg
        if centered:
            grad_avg = lerp(state["grad_avg"], grad, 1 - alpha)
            state["grad_avg"] = grad_avg
            avg = jnp.sqrt(square_avg + cast(-1.0, grad) * grad_avg * grad_avg)
        else:
            avg = jnp.sqrt(square_avg)
        avg = avg + cast(hp["eps"], grad)

        if use_momentum:
            buf = fence(state["momentum_buffer"] * cast(hp["momentum"], grad), hp) + grad / avg
            state["momentum_buffer"] = buf
            param = param + cast(-f64(hp["lr"]), param) * buf
        else:
            param = param + cast(-f64(hp["lr"]), param) * grad / avg
        return param, state

    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns
                the loss.
        """
        return self._jit_step(closure)
