"""`torchish.optim.Rprop` (resilient backpropagation: per-element step sizes driven by the sign of
successive gradients), PyTorch 2.13."""
import jax.numpy as jnp

from ._shared import _new_step, set_group_defaults, step_method
from .optimizer import Optimizer, _check_lr, _to_scalar, _torch, cast, cast_alpha, rnd

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Implements the resilient backpropagation algorithm, as `torch.optim.Rprop`."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr,
            "etas": etas,
            "step_sizes": step_sizes,
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
        state = self.state[p]
        if len(state) == 0:
            # the step sizes start at the group's lr at the first step; lr is not read again
            t = _torch()
            state["step"] = _new_step(p)
            state["prev"] = t.zeros_like(p)
            lr = _to_scalar(group["lr"])
            lr = lr.item() if isinstance(lr, t.Tensor) else lr
            state["step_size"] = t.full_like(p, complex(lr, lr) if p.is_complex() else lr)
        return {name: state[name] for name in ("step", "prev", "step_size")}

    def _static(self, group):
        return (bool(group["maximize"]),)

    def _hyper(self, group):
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        return {"etaminus": etaminus, "etaplus": etaplus, "step_size_min": lo,
                "step_size_max": hi}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, = static
        grad = -grad if maximize else grad
        state["step"] = state["step"] + 1
        # (stored into the sign tensor: in the parameter's dtype)
        etaminus, etaplus = (cast_alpha(hp[k], grad, hp) for k in ("etaminus", "etaplus"))
        sign = jnp.sign(grad * state["prev"])
        # torch overwrites the signs with the factors in place: 1 where the product was 0
        factor = jnp.where(sign > 0, etaplus, jnp.where(sign < 0, etaminus, cast(1.0, grad)))
        step_size = rnd(jnp.clip(rnd(state["step_size"] * factor, hp),
                                 cast(hp["step_size_min"], grad),
                                 cast(hp["step_size_max"], grad)), hp)
        # after a sign change the gradient counts as 0: no move now, no sign next step
        grad = jnp.where(factor == etaminus, jnp.zeros_like(grad), grad)
        param = rnd(param - jnp.sign(grad) * step_size, hp)
        state["prev"], state["step_size"] = grad, step_size
        return param, state

    step = step_method("Rprop")
