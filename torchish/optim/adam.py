"""`torchish.optim.Adam` (with amsgrad, maximize, L2 or decoupled weight decay), PyTorch 2.13."""
import jax.numpy as jnp

from .._tensor import Tensor
from ._shared import (check_args, decay_weights, hyper, lazy_state, set_group_defaults,
                      step_method, update_moments)
from .optimizer import (Optimizer, _check_fused_foreach, _to_scalar, cast, cast_alpha, div_scalar,
                        f64, fence, nonzero, rnd)

__all__ = ["Adam"]


class Adam(Optimizer):
    """Implements the Adam algorithm, as `torch.optim.Adam`."""

    _sparse_error = ("Adam does not support sparse gradients, please consider SparseAdam "
                     "instead")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        check_args(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
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
        set_group_defaults(self, amsgrad=False, maximize=False, foreach=None, capturable=False,
                           differentiable=False, decoupled_weight_decay=False, fused=None)
        self._steps_to_tensors(device_if=("capturable", "fused"), fused_key="fused")

    def _prepare(self, group, p):
        zeros = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        return lazy_state(self, group, p, zeros, fused_key="fused")

    def _static(self, group):
        return (bool(group["amsgrad"]), bool(group["maximize"]), nonzero(group["weight_decay"]),
                bool(group["decoupled_weight_decay"]),
                bool(group["differentiable"] or group["capturable"]))

    def _hyper(self, group):
        return hyper(group, "lr", "betas", "eps", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        amsgrad, maximize, decay, decoupled, tensor_scalars = static
        lr, beta1, beta2 = f64(hp["lr"]), f64(hp["beta1"]), f64(hp["beta2"])
        wd = f64(hp["weight_decay"])
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t

        if decay:
            param, grad = decay_weights(param, grad, lr, wd, decoupled, hp)

        exp_avg, exp_avg_sq = update_moments(state, grad, beta1, beta2, hp)

        if amsgrad:
            max_sq = jnp.maximum(state["max_exp_avg_sq"], exp_avg_sq)
            state["max_exp_avg_sq"] = max_sq
        else:
            max_sq = exp_avg_sq
        if tensor_scalars:
            return _tensor_scalar_step(hp, param, exp_avg, max_sq, step_t), state

        step = f64(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        denom = rnd(div_scalar(rnd(jnp.sqrt(max_sq), hp), bias_correction2_sqrt, hp), hp)
        denom = rnd(denom + cast_alpha(hp["eps"], grad, hp), hp)

        param = rnd(param + cast(-step_size, param) * exp_avg / denom, hp)
        return param, state

    step = step_method("Adam")


def _tensor_scalar_step(hp, param, exp_avg, max_sq, step_t):
    """The parameter after torch's capturable / differentiable Adam step: its bias corrections
    are tensor ops on the step counter (in its dtype), folded into the denominator."""
    def scalar(x):
        return cast(x, step_t)
    bias_correction1 = 1 - scalar(hp["beta1"]) ** step_t
    bias_correction2 = 1 - scalar(hp["beta2"]) ** step_t
    if isinstance(hp["lr"], float):  # `lr / tensor` is `tensor.reciprocal() * lr` in torch
        step_size_neg = -(fence(1 / bias_correction1, hp) * scalar(hp["lr"]))
    else:
        step_size_neg = -(hp["lr"] / bias_correction1)
    scale = fence(jnp.sqrt(bias_correction2) * step_size_neg, hp)
    denom = rnd(div_scalar(rnd(jnp.sqrt(max_sq), hp), scale, hp), hp)
    denom = rnd(denom + cast(fence(1 / step_size_neg, hp) * scalar(hp["eps"]), denom), hp)
    return rnd(param + exp_avg / denom, hp)
