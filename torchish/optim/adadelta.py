"""`torchish.optim.Adadelta`, PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import check_args, hyper, lazy_state, set_group_defaults, step_method
from .optimizer import Optimizer, cast, cast_alpha, cast_mul, f64, fence, nonzero, rnd

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Implements the Adadelta algorithm, as `torch.optim.Adadelta`."""

    _CAPTURABLE = {False: ("params and state_steps", False),
                   True: ("params and state_steps", False)}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_args(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False,
                           capturable=False)
        self._steps_to_tensors(device_if=("capturable",))

    def _prepare(self, group, p):
        return lazy_state(self, group, p, ("square_avg", "acc_delta"))

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "rho", "eps", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        rho = f64(hp["rho"])
        state["step"] = state["step"] + 1
        grad = -grad if maximize else grad
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], grad, hp) * param, hp)
        eps = cast_alpha(hp["eps"], grad, hp)
        square_avg = rnd(rnd(fence(state["square_avg"] * cast_mul(rho, grad, hp), hp), hp)
                         + cast(1 - rho, grad) * grad * grad, hp)
        std = rnd(jnp.sqrt(rnd(square_avg + eps, hp)), hp)
        delta = rnd(jnp.sqrt(rnd(state["acc_delta"] + eps, hp)), hp)
        # fenced: XLA would turn `a / sqrt(b)` into `a * rsqrt(b)`
        delta = rnd(rnd(delta / fence(std, hp), hp) * grad, hp)
        acc_delta = rnd(rnd(fence(state["acc_delta"] * cast_mul(rho, grad, hp), hp), hp)
                        + cast(1 - rho, grad) * delta * delta, hp)
        state["square_avg"], state["acc_delta"] = square_avg, acc_delta
        param = rnd(param + cast_alpha(-f64(hp["lr"]), param, hp) * delta, hp)
        return param, state

    step = step_method("Adadelta")
