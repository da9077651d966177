"""`torchish.optim.Adafactor` (factored second moments, relative step size), PyTorch 2.13.

A parameter of two or more dimensions keeps the second moment factored over its last two
dimensions (`row_var`, `col_var`), a vector or scalar keeps a full `variance`. The step size is
relative: `max(eps2, RMS(param)) * min(lr, 1 / sqrt(step))`, and the update is scaled down
when its RMS exceeds `d`. torch computes those RMS values with `.item()`, as Python floats; here
they stay arrays (float64 scalars from the parameter-dtype norms), so `step()` never syncs.
"""
import jax
import jax.numpy as jnp

from .._ops import cpu_sum_order
from ._shared import hyper, set_group_defaults, step_method, _new_step
from .optimizer import (Optimizer, Tensor, _torch, cast, cast_alpha, div_scalar, f64, fence, rnd)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Implements the Adafactor algorithm, as `torch.optim.Adafactor`."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        set_group_defaults(self, foreach=None)
        self._steps_to_tensors()

    def _prepare(self, group, p):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = self.state[p]
        if len(state) == 0:
            t = _torch()
            state["step"] = _new_step(p)
            grad = p.grad
            if grad.dim() > 1:
                # the factors: the mean of g*g over the last dim (rows), over the one before
                # (columns), each kept with that dim of size 1
                state["row_var"] = grad.new_zeros(list(grad.shape[:-1]) + [1])
                state["col_var"] = grad.new_zeros(list(grad.shape[:-2]) + [1, grad.shape[-1]])
            else:
                state["variance"] = t.zeros_like(grad)
        keys = ("row_var", "col_var") if "row_var" in state else ("variance",)
        return {name: state[name] for name in ("step",) + keys}

    def _static(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _hyper(self, group):
        hp = hyper(group, "lr", "beta2_decay", "d", "weight_decay")
        eps1, hp["eps2"] = group["eps"]
        if eps1 is None:
            # torch fills in eps1 once per group, from the first parameter with a gradient,
            # and keeps that value for the group's other parameters
            first = next(p for p in group["params"] if p.grad is not None)
            eps1 = _torch().finfo(first.dtype).eps
        hp["eps1"] = eps1
        return hp

    @staticmethod
    def _rule(static, hp, param, grad, state):
        maximize, decay = static
        grad = -grad if maximize else grad
        step_t = state["step"] + 1
        state["step"] = step_t
        step = f64(step_t)
        lr = f64(hp["lr"])
        one_minus_beta2_t = step ** f64(hp["beta2_decay"])
        # Python's `1 / step ** 0.5`: a true division by a true square root
        rho_t = jnp.minimum(lr, 1 / _apart(jnp.sqrt(step), hp))
        # `norm(2).item()`: a half parameter's norm is rounded to its type first
        # (Python float divisions, which XLA would make products by a reciprocal)
        rms = div_scalar(f64(_norm(param, None, hp)), param.size ** 0.5, hp)
        alpha = jnp.maximum(f64(hp["eps2"]), rms) * rho_t

        if decay:
            param = rnd(param * cast(1 - fence(lr * f64(hp["weight_decay"]), hp), param), hp)

        eps1 = f64(hp["eps1"])
        if grad.ndim > 1:
            # torch: `norm(g, dim).square_().div_(size)`, the norm rounded before squaring
            def mean_square(axis):
                norm = _norm(grad, axis, hp)
                return rnd(div_scalar(rnd(jnp.square(norm), hp), grad.shape[axis], hp), hp)
            row_var = rnd(_lerp(state["row_var"], mean_square(-1), one_minus_beta2_t), hp)
            col_var = rnd(_lerp(state["col_var"], mean_square(-2), one_minus_beta2_t), hp)
            state["row_var"], state["col_var"] = row_var, col_var
            row_var_mean = rnd(div_scalar(_sum_rows(row_var, hp), row_var.shape[-2], hp), hp)
            var_estimate = rnd(div_scalar(rnd(row_var * col_var, hp),
                                          jnp.maximum(row_var_mean, cast(eps1, grad)), hp), hp)
        else:
            # (the square kept apart: XLA would fuse it into the lerp's subtraction)
            squared = _apart(rnd(grad * grad, hp), hp)
            variance = rnd(_lerp(state["variance"], squared, one_minus_beta2_t), hp)
            state["variance"] = variance
            var_estimate = variance

        # `rsqrt_`: a true 1 / sqrt (XLA would take its approximate reciprocal square root)
        root = _apart(jnp.sqrt(rnd(jnp.maximum(var_estimate, cast(eps1 * eps1, grad)), hp)), hp)
        update = rnd(1 / root, hp)
        update = rnd(update * grad, hp)
        update_rms = f64(_norm(update, None, hp))
        denom = jnp.maximum(1.0, div_scalar(update_rms, update.size ** 0.5 * hp["d"], hp))
        # `add_(update, alpha=...)`: PyTorch's kernel multiplies and adds in one FMA
        step_size = jnp.broadcast_to(cast_alpha(-alpha / denom, param, hp), update.shape)
        param = rnd(cpu_sum_order.fma(step_size, update, param), hp)
        return param, state

    step = step_method("Adafactor")


def _apart(x, hp):
    """`x` as a separate kernel leaves it: XLA may neither fuse it into an FMA nor rewrite
    `1 / sqrt` (an optimization barrier alone does not stop the FMA contraction)."""
    return fence(x, hp) if "_zero" in hp else jax.lax.optimization_barrier(x)


def _lerp(start, end, weight):
    """`start.lerp_(end, weight)` as PyTorch's CPU kernel computes it: one FMA,
    `weight * (end - start) + start` for a weight under 0.5 in magnitude, else
    `(weight - 1) * (end - start) + end` (exact as the scalar code's `end - diff * (1 - w)`)."""
    w = cast(weight, start)
    small = jnp.abs(w) < 0.5
    diff = end - start
    coeff = jnp.broadcast_to(jnp.where(small, w, w - 1), diff.shape)
    return cpu_sum_order.fma(coeff, diff, jnp.where(small, start, end))


def _norm(x, axis, hp):
    """`x.norm(2)` (all elements, axis None) or `x.norm(2, axis, keepdim=True)`. float32 /
    float64 add up in PyTorch's CPU order (see cpu_sum_order.py); a half tensor's norm is
    summed in float32 and rounded to its type."""
    if hp.get("_storage") is not None:
        keep = axis is not None
        return rnd(jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keep)), hp)
    zero = hp.get("_zero")
    if axis is None:
        return cpu_sum_order.norm2_last(x.reshape(-1), zero)
    if axis % x.ndim == x.ndim - 1:
        return jnp.expand_dims(cpu_sum_order.norm2_last(x, zero), axis)
    return jnp.expand_dims(cpu_sum_order.norm2_along(x, axis, zero), axis)


def _sum_rows(row_var, hp):
    """`row_var.sum(-2, keepdim=True)` of the (..., rows, 1) factor: its rows are contiguous,
    so PyTorch's CPU cascade sum adds them (see cpu_sum_order.py)."""
    if hp.get("_storage") is not None:
        return jnp.sum(row_var, axis=-2, keepdims=True)
    return cpu_sum_order.cascade_sum(row_var[..., 0])[..., None, None]
