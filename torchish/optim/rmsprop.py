"""`torchish.optim.RMSprop` (centered, momentum, weight decay), PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import check_args, hyper, lazy_state, set_group_defaults, step_method
from .optimizer import Optimizer, cast, cast_alpha, cast_mul, f64, fence, lerp, nonzero, rnd

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Implements the RMSprop algorithm, as `torch.optim.RMSprop`."""

    _CAPTURABLE = {False: ("params and state_steps", True), True: ("params and state_steps", True)}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_args(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
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
        set_group_defaults(self, momentum=0, centered=False, foreach=None, maximize=False,
                           differentiable=False, capturable=False)
        self._steps_to_tensors(device_if=("capturable",))

    def _prepare(self, group, p):
        zeros = ("square_avg",) + (("momentum_buffer",) if group["momentum"] > 0 else ()) \
            + (("grad_avg",) if group["centered"] else ())
        return lazy_state(self, group, p, zeros)

    def _static(self, group):
        return (bool(group["momentum"] > 0), bool(group["centered"]), bool(group["maximize"]),
                nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "alpha", "eps", "weight_decay", "momentum")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        use_momentum, centered, maximize, decay = static
        alpha = f64(hp["alpha"])
        grad = -grad if maximize else grad
        state["step"] = state["step"] + 1
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], grad, hp) * param, hp)

        square_avg = rnd(rnd(fence(state["square_avg"] * cast_mul(alpha, grad, hp), hp), hp)
                         + cast(1 - alpha, grad) * grad * grad, hp)
        state["square_avg"] = square_avg
        if centered:
            grad_avg = rnd(lerp(state["grad_avg"], grad, 1 - alpha), hp)
            state["grad_avg"] = grad_avg
            avg = rnd(square_avg + cast(-1.0, grad) * grad_avg * grad_avg, hp)
        else:
            avg = square_avg
        avg = rnd(rnd(jnp.sqrt(avg), hp) + cast_alpha(hp["eps"], grad, hp), hp)

        if use_momentum:
            buf = state["momentum_buffer"] * cast_mul(hp["momentum"], grad, hp)
            buf = rnd(rnd(fence(buf, hp), hp)
                      + grad / avg, hp)
            state["momentum_buffer"] = buf
            param = rnd(param + cast_alpha(-f64(hp["lr"]), param, hp) * buf, hp)
        else:
            param = rnd(param + cast(-f64(hp["lr"]), param) * grad / avg, hp)
        return param, state

    step = step_method("RMSprop")
