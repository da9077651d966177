"""`torchish.optim.Adadelta`, PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import check_args, hyper, lazy_state, set_group_defaults, step_method
from .optimizer import Optimizer, cast, f64, fence, nonzero

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
            grad = grad + cast(hp["weight_decay"], grad) * param
        eps = cast(hp["eps"], grad)
        square_avg = (fence(state["square_avg"] * cast(rho, grad), hp)
                      + cast(1 - rho, grad) * grad * grad)
        std = jnp.sqrt(square_avg + eps)
        delta = jnp.sqrt(state["acc_delta"] + eps)
        # fenced: XLA would turn `a / sqrt(b)` into `a * rsqrt(b)`
        delta = (delta / fence(std, hp)) * grad
        acc_delta = (fence(state["acc_delta"] * cast(rho, grad), hp)
                     + cast(1 - rho, grad) * delta * delta)
        state["square_avg"], state["acc_delta"] = square_avg, acc_delta
        param = param + cast(-f64(hp["lr"]), param) * delta
        return param, state

    step = step_method("Adadelta")
