"""`torchish.optim.ASGD` (averaged SGD: a decaying step size and a running average `ax` of the
iterates from step `t0` on), PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import _new_step, set_group_defaults, step_method
from .optimizer import (Optimizer, _check_lr, _get_scalar_dtype, _to_scalar, _torch, cast,
                        cast_alpha, f64, fence, nonzero, rnd)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Implements Averaged Stochastic Gradient Descent, as `torch.optim.ASGD`."""

    _CAPTURABLE = {False: ("params, mus, etas, and state_steps", True),
                   True: ("params, mus, etas, and state_steps", False)}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
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
        self._steps_to_tensors(keys=("step", "eta", "mu"))

    def _prepare(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            t = _torch()
            dtype = _get_scalar_dtype()
            state["step"] = _new_step(p)
            state["eta"] = t.as_tensor(_to_scalar(group["lr"]), dtype=dtype,
                                       device=p.device).clone().detach()
            state["mu"] = t.ones((), dtype=dtype, device=p.device)
            state["ax"] = t.zeros_like(p)
        return {name: state[name] for name in ("step", "eta", "mu", "ax")}

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return {k: group[k] for k in ("lr", "lambd", "alpha", "t0", "weight_decay")}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], grad, hp) * param, hp)
        mu = state["mu"]
        if hp.get("_foreach"):
            # torch's foreach rule multiplies by the eta and mu tensors (0-dim: a half
            # parameter's type) in `addcmul_`s, and moves ax even while mu is 1
            step_dir = rnd(grad + cast_alpha(hp["lambd"], param, hp) * param, hp)
            param = rnd(param + -step_dir * rnd(state["eta"].astype(param.dtype), hp), hp)
            state["ax"] = rnd(state["ax"] + rnd(param - state["ax"], hp)
                              * rnd(mu.astype(param.dtype), hp), hp)
        else:
            # torch reads eta as a Python float and scales, then steps, in two kernels
            eta = f64(state["eta"])
            param = rnd(fence(param * cast(1 - f64(hp["lambd"]) * eta, param), hp), hp)
            param = rnd(param + cast_alpha(-eta, param, hp) * grad, hp)
            # torch copies the parameter while mu is 1 (before t0), else moves ax towards it
            moved = rnd(state["ax"] + rnd(fence(rnd(param - state["ax"], hp)
                                                * mu.astype(param.dtype), hp), hp), hp)
            state["ax"] = jnp.where(mu != 1, moved, param)
        step = f64(step_t)
        lr = f64(hp["lr"])
        if hp.get("_foreach"):
            # torch's foreach rule computes eta from the step tensor, in its dtype
            base = fence(step_t * cast(f64(hp["lambd"]) * lr, step_t), hp) + 1
            # (fenced: XLA rewrites `1 / pow(b, a)` into `pow(b, -a)`)
            new_eta = fence(1 / fence(base ** cast(hp["alpha"], step_t), hp), hp) * cast(lr, step_t)
        else:
            new_eta = lr / (1 + f64(hp["lambd"]) * lr * step) ** f64(hp["alpha"])
        state["eta"] = new_eta.astype(state["eta"].dtype)
        state["mu"] = (1 / jnp.maximum(f64(1), step - f64(hp["t0"]))).astype(mu.dtype)
        return param, state

    step = step_method("ASGD")
