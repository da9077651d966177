"""`torchish.optim.Adagrad` (lr_decay, initial_accumulator_value), PyTorch 2.13.

As in torch, the state of every parameter (`step`, `sum`) is created in the constructor, so a
fresh Adagrad already has a full `state_dict()`.
"""
import jax.numpy as jnp

from ._shared import _new_step, check_args, hyper, set_group_defaults, step_method
from ._sparse_rows import adagrad_rows, rows_of
from .optimizer import (Optimizer, _check_fused_foreach, _torch, cast, cast_alpha, cast_mul, f64,
                        fence, nonzero, rnd)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Implements the Adagrad algorithm, as `torch.optim.Adagrad`."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_args(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                   initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        _check_fused_foreach(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p], initial_accumulator_value)

    @staticmethod
    def _init_state(group, p, state, initial_accumulator_value):
        state["step"] = _new_step(p, group["fused"])
        init_value = (complex(initial_accumulator_value, initial_accumulator_value)
                      if p.is_complex() else initial_accumulator_value)
        state["sum"] = _torch().full_like(p, init_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False, fused=None)
        self._steps_to_tensors(device_if=("fused",), fused_key="fused")

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state[p]["sum"]
                if hasattr(s, "share_memory_"):
                    s.share_memory_()

    def _prepare(self, group, p):
        state = self.state[p]
        if len(state) == 0:
            self._init_state(group, p, state, self.defaults["initial_accumulator_value"])
        return {"step": state["step"], "sum": state["sum"]}

    def _static(self, group):
        return (bool(group["maximize"]), nonzero(group["weight_decay"]))

    def _hyper(self, group):
        return hyper(group, "lr", "lr_decay", "eps", "weight_decay")

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        step_t = state["step"] + 1
        state["step"] = step_t
        step = f64(step_t)
        grad = -grad if maximize else grad
        if decay:
            grad = rnd(grad + cast_alpha(hp["weight_decay"], grad, hp) * param, hp)
        clr = f64(hp["lr"]) / (1 + fence((step - 1) * f64(hp["lr_decay"]), hp))
        state_sum = rnd(state["sum"] + cast(1.0, grad) * grad * grad, hp)
        state["sum"] = state_sum
        std = rnd(rnd(jnp.sqrt(state_sum), hp) + cast_alpha(hp["eps"], grad, hp), hp)
        if hp.get("_foreach"):
            # torch's foreach rule scales the gradient first, in place (`_foreach_mul_`) when
            # the gradient is its own copy, then divides
            scale = cast_mul(-clr, grad, hp) if decay or maximize else cast(-clr, grad)
            param = rnd(param + rnd(grad * scale, hp) / std, hp)
        else:
            param = rnd(param + cast(-clr, param) * grad / std, hp)
        return param, state

    def _sparse_update(self, group, params):
        for p in params:
            state = self._prepare(group, p)
            state["step"] += 1
            if group["weight_decay"] != 0:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            found = rows_of(p.grad)
            if found is None:
                continue
            clr = group["lr"] / (1 + (state["step"].item() - 1) * group["lr_decay"])
            outs = adagrad_rows([p._data, state["sum"]._data], *found, clr, group["eps"],
                                maximize=bool(group["maximize"]))
            for t, out in zip((p, state["sum"]), outs):
                t._set_data(out)

    step = step_method("Adagrad")
