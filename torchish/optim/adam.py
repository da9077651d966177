"""`torchish.optim.Adam` (with amsgrad, maximize, L2 or decoupled weight decay), PyTorch 2.13."""
import jax.numpy as jnp

from .._tensor import Tensor
from .optimizer import (Optimizer, _check_fused_foreach, _get_scalar_dtype, _to_scalar,
                        _torch, cast, div_scalar, f64, fence, lerp, nonzero)

__all__ = ["Adam"]


def _new_step(p, fused=None):
    """A fresh `step` counter: a 0-dim float32 tensor (float64 under a float64 default dtype).

    torch keeps it on the CPU unless capturable/fused; here it lives next to the parameter so
    that the compiled update has all of its inputs on one device.
    """
    return _torch().zeros((), dtype=_get_scalar_dtype(is_fused=fused), device=p.device)


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Adam(Optimizer):
    """Implements the Adam algorithm, as `torch.optim.Adam`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))

        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        self._steps_to_tensors(device_if=("capturable", "fused"), fused_key="fused")

    def _prepare(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            t = _torch()
            state["step"] = _new_step(p, group["fused"])
            state["exp_avg"] = t.zeros_like(p)
            state["exp_avg_sq"] = t.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = t.zeros_like(p)
        out = {"step": state["step"], "exp_avg": state["exp_avg"],
               "exp_avg_sq": state["exp_avg_sq"]}
        if group["amsgrad"]:
            out["max_exp_avg_sq"] = state["max_exp_avg_sq"]
        return out

    def _static(self, group):
        return (bool(group["amsgrad"]), bool(group["maximize"]), nonzero(group["weight_decay"]),
                bool(group["decoupled_weight_decay"]))

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "eps": group["eps"],
                "weight_decay": group["weight_decay"]}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        amsgrad, maximize, decay, decoupled = static
        lr, beta1, beta2 = f64(hp["lr"]), f64(hp["beta1"]), f64(hp["beta2"])
        wd = f64(hp["weight_decay"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t

        if decay:
            if decoupled:
                param = fence(param * cast(1 - fence(lr * wd, hp), param), hp)
            else:
                grad = grad + cast(wd, grad) * param

        exp_avg = lerp(state["exp_avg"], grad, 1 - beta1)
        exp_avg_sq = (fence(state["exp_avg_sq"] * cast(beta2, grad), hp)
                      + cast(1 - beta2, grad) * grad * grad)
        state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq

        step = f64(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5

        if amsgrad:
            max_sq = jnp.maximum(state["max_exp_avg_sq"], exp_avg_sq)
            state["max_exp_avg_sq"] = max_sq
            denom = div_scalar(jnp.sqrt(max_sq), bias_correction2_sqrt, hp)
        else:
            denom = div_scalar(jnp.sqrt(exp_avg_sq), bias_correction2_sqrt, hp)
        denom = denom + cast(hp["eps"], grad)

        param = param + cast(-step_size, param) * exp_avg / denom
        return param, state

    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns
                the loss.
        """
        return self._jit_step(closure)
