"""`torchish.optim.Adamax` (Adam with the infinity norm), PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import check_args, hyper, lazy_state, set_group_defaults, step_method
from .optimizer import Optimizer, cast, cast_alpha, cast_mul, f64, lerp, nonzero, rnd

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Implements the Adamax algorithm, as `torch.optim.Adamax`."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_args(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False,
                           capturable=False)
        self._steps_to_tensors(device_if=("capturable",))

    def _prepare(self, group, p):
        return lazy_state(self, group, p, ("exp_avg", "exp_inf"))

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "betas", "eps", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        beta1 = f64(hp["beta1"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], grad, hp) * param, hp)
        exp_avg = rnd(lerp(state["exp_avg"], grad, 1 - beta1), hp)
        exp_inf = jnp.maximum(rnd(state["exp_inf"] * cast_mul(hp["beta2"], grad, hp), hp),
                              rnd(jnp.abs(grad) + cast_alpha(hp["eps"], grad, hp), hp))
        state["exp_avg"], state["exp_inf"] = exp_avg, exp_inf
        bias_correction = 1 - beta1 ** f64(step_t)
        clr = f64(hp["lr"]) / bias_correction
        param = rnd(param + cast(-clr, param) * exp_avg / exp_inf, hp)
        return param, state

    step = step_method("Adamax")
