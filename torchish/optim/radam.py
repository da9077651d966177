"""`torchish.optim.RAdam` (decoupled_weight_decay), PyTorch 2.13.

torch branches in Python on the variance-rectification test `rho_t > 5`; here both updates are
computed and the scalar condition selects one, so the step also runs on traced values.
"""
import jax.numpy as jnp

from ._shared import (check_args, decay_weights, hyper, lazy_state, set_group_defaults,
                      step_method, update_moments)
from .optimizer import Optimizer, cast, cast_alpha, div_scalar, f64, fence, nonzero, rnd

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Implements the RAdam algorithm, as `torch.optim.RAdam`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_args(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False,
                           decoupled_weight_decay=False, capturable=False)
        self._steps_to_tensors(device_if=("capturable",))

    def _prepare(self, group, p):
        return lazy_state(self, group, p, ("exp_avg", "exp_avg_sq"))

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]),
                bool(group["decoupled_weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "betas", "eps", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay, decoupled = static
        lr, beta1, beta2 = f64(hp["lr"]), f64(hp["beta1"]), f64(hp["beta2"])
        wd = f64(hp["weight_decay"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        step = f64(step_t)

        if decay:
            param, grad = decay_weights(param, grad, lr, wd, decoupled, hp)

        exp_avg, exp_avg_sq = update_moments(state, grad, beta1, beta2, hp)

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = rnd(div_scalar(exp_avg, bias_correction1, hp), hp)

        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        rectified = rho_t > 5.0
        # the rectification term only matters (and is only real) when rho_t > 5
        safe_rho_t = jnp.where(rectified, rho_t, 6.0)
        rect = ((safe_rho_t - 4) * (safe_rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * safe_rho_t)) ** 0.5
        # `scalar / tensor` is `tensor.reciprocal() * scalar` in torch
        sqrt = rnd(rnd(jnp.sqrt(exp_avg_sq), hp) + cast_alpha(hp["eps"], grad, hp), hp)
        if hp.get("_foreach"):
            # torch's foreach rule: one buffer `1 / (sqrt / rect_step) + unrect_step`, where
            # the step not taken is 0 (1 / (sqrt / -0.0) is -0.0), then `addcmul_`
            rect_step = jnp.where(rectified, bias_correction2 ** 0.5
                                  * (lr * rect / bias_correction1) * -1, -0.0)
            unrect_step = jnp.where(rectified, -0.0, (lr / bias_correction1) * -1)
            buffer = rnd(1 / rnd(div_scalar(sqrt, rect_step, hp), hp), hp)
            buffer = rnd(buffer + cast_alpha(unrect_step, grad, hp), hp)
            state["exp_avg"] = exp_avg
            return rnd(param + buffer * exp_avg, hp), state
        adaptive_lr = rnd(rnd(1 / sqrt, hp) * cast(bias_correction2 ** 0.5, grad), hp)
        plain = rnd(bias_corrected_exp_avg * cast(lr, grad), hp)
        update = jnp.where(rectified, rnd(rnd(plain * adaptive_lr, hp) * cast(rect, grad), hp),
                           plain)
        param = rnd(param - fence(update, hp), hp)
        return param, state

    step = step_method("RAdam")
