"""`torchish.optim.NAdam` (momentum_decay, decoupled_weight_decay), PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import (_new_step, check_args, decay_weights, hyper, set_group_defaults,
                      step_method, update_moments)
from .optimizer import (Optimizer, _get_scalar_dtype, _torch, cast, cast_alpha, div_scalar, f64,
                        fence, nonzero, rnd)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Implements the NAdam algorithm, as `torch.optim.NAdam`."""

    _CAPTURABLE = {False: ("params, mu_products and state_steps", True),
                   True: ("params, mu_products, and state_steps", False)}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_args(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay,
                   momentum_decay=momentum_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, maximize=False, foreach=None, capturable=False,
                           differentiable=False, decoupled_weight_decay=False)
        self._steps_to_tensors(keys=("step", "mu_product"), device_if=("capturable",))

    def _prepare(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            t = _torch()
            state["step"] = _new_step(p)
            state["mu_product"] = t.ones((), dtype=_get_scalar_dtype(), device=p.device)
            state["exp_avg"] = t.zeros_like(p)
            state["exp_avg_sq"] = t.zeros_like(p)
        return {"step": state["step"], "mu_product": state["mu_product"],
                "exp_avg": state["exp_avg"], "exp_avg_sq": state["exp_avg_sq"]}

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]),
                bool(group["decoupled_weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "betas", "eps", "weight_decay", "momentum_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay, decoupled = static
        lr, beta1, beta2 = f64(hp["lr"]), f64(hp["beta1"]), f64(hp["beta2"])
        momentum_decay, wd = f64(hp["momentum_decay"]), f64(hp["weight_decay"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        step = f64(step_t)
        bias_correction2 = 1 - beta2 ** step

        if decay:
            param, grad = decay_weights(param, grad, lr, wd, decoupled, hp)

        mu = fence(beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay))), hp)
        mu_next = fence(beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay))), hp)
        # `mu_product *= mu`: a float32 tensor times a Python float, in float32
        mu_product = state["mu_product"] * cast(mu, state["mu_product"])
        state["mu_product"] = mu_product

        exp_avg, exp_avg_sq = update_moments(state, grad, beta1, beta2, hp)
        if hp.get("_foreach"):
            denom = rnd(div_scalar(rnd(jnp.sqrt(exp_avg_sq), hp), bias_correction2 ** 0.5, hp), hp)
        else:
            denom = rnd(jnp.sqrt(rnd(div_scalar(exp_avg_sq, bias_correction2, hp), hp)), hp)

        mu_product = f64(mu_product)
        mu_product_next = fence(mu_product * mu_next, hp)
        denom = rnd(denom + cast_alpha(hp["eps"], grad, hp), hp)
        param = rnd(param + cast(-lr * (1.0 - mu) / (1.0 - mu_product), param) * grad / denom,
                    hp)
        param = rnd(param + cast((-lr * mu_next) / (1.0 - mu_product_next), param)
                    * exp_avg / denom, hp)
        return param, state

    step = step_method("NAdam")
