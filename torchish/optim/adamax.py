"""`torchish.optim.Adamax` (Adam with the infinity norm), PyTorch 2.13."""
import jax.numpy as jnp

from .adam import _check_betas, _new_step
from .optimizer import Optimizer, _check_lr, _torch, cast, f64, lerp, nonzero

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Implements the Adamax algorithm, as `torch.optim.Adamax`."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
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
        for group in self.param_groups:
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
            state["exp_avg"] = t.zeros_like(p)
            state["exp_inf"] = t.zeros_like(p)
        return {"step": state["step"], "exp_avg": state["exp_avg"],
                "exp_inf": state["exp_inf"]}

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]))

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "eps": group["eps"],
                "weight_decay": group["weight_decay"]}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        beta1 = f64(hp["beta1"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        if decay:
            grad = grad + cast(hp["weight_decay"], grad) * param
        exp_avg = lerp(state["exp_avg"], grad, 1 - beta1)
        exp_inf = jnp.maximum(state["exp_inf"] * cast(hp["beta2"], grad),
                              jnp.abs(grad) + cast(hp["eps"], grad))
        state["exp_avg"], state["exp_inf"] = exp_avg, exp_inf
        bias_correction = 1 - beta1 ** f64(step_t)
        clr = f64(hp["lr"]) / bias_correction
        param = param + cast(-clr, param) * exp_avg / exp_inf
        return param, state

    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns
                the loss.
        """
        return self._jit_step(closure)
