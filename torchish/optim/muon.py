"""`torchish.optim.Muon` (momentum, then Newton-Schulz orthogonalisation), PyTorch 2.13.

For 2D parameters only. The momentum update (or its Nesterov look-ahead) is orthogonalised by a
quintic Newton-Schulz iteration run in bfloat16, as torch runs it: every matmul and `addmm`
accumulates in float32 and rounds its result to bfloat16 once, which is what torch's CPU bf16
kernels do (checked element by element against them).
"""
import math

import jax
import jax.numpy as jnp

from ._shared import step_method
from .optimizer import Optimizer, Tensor, _torch, cast, cast_alpha, f64, fence, lerp, rnd

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _mm(x, y):
    return jnp.matmul(x, y, precision=jax.lax.Precision.HIGHEST)


def _zeropower_via_newtonschulz(grad, hp, ns_steps):
    """torch's `_zeropower_via_newtonschulz`: bf16 storage, float32 arithmetic per kernel.
    Also returns the input divided by its norm: torch divides in place, so a bfloat16 input
    (its `.bfloat16()` no copy) is changed."""
    bf16, f32 = jnp.bfloat16, jnp.float32
    a, b, c = (jnp.asarray(hp[k]).astype(f32) for k in ("ns_a", "ns_b", "ns_c"))
    tall = grad.shape[0] > grad.shape[1]
    x = grad.astype(bf16)
    if tall:
        x = x.T
    norm = jnp.sqrt(jnp.sum(jnp.square(x.astype(f32)))).astype(bf16)
    norm = jnp.maximum(norm, cast(hp["eps"], norm))
    x = (x.astype(f32) / norm.astype(f32)).astype(bf16)
    normalized = x.T if tall else x
    for _ in range(ns_steps):
        x32 = x.astype(f32)
        gram = _mm(x32, x32.T).astype(bf16).astype(f32)
        gram_update = (b * gram + c * _mm(gram, gram)).astype(bf16).astype(f32)
        x = (a * x32 + _mm(gram_update, x32)).astype(bf16)
    return x.T if tall else x, normalized


def _adjust_lr_ratio(adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


class Muon(Optimizer):
    """Implements the Muon algorithm, as `torch.optim.Muon`."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _prepare(self, group, p):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        if p.grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = _torch().zeros_like(p.grad)
        return {"momentum_buffer": state["momentum_buffer"]}

    def _static(self, group):
        if group["ns_steps"] >= 100:
            raise ValueError("Number of steps must be less than 100 for computational "
                             "efficiency")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Coefficients must be a tuple of exactly 3 values")
        return (bool(group["nesterov"]), int(group["ns_steps"]), group["adjust_lr_fn"])

    def _hyper(self, group):
        a, b, c = group["ns_coefficients"]
        return {"lr": group["lr"], "weight_decay": group["weight_decay"],
                "momentum": group["momentum"], "eps": group["eps"],
                "ns_a": a, "ns_b": b, "ns_c": c}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        nesterov, ns_steps, adjust_lr_fn = static
        momentum = f64(hp["momentum"])
        buf = rnd(lerp(state["momentum_buffer"], grad, 1 - momentum), hp)
        state["momentum_buffer"] = buf
        update = rnd(lerp(grad, buf, momentum), hp) if nesterov else buf
        update, normalized = _zeropower_via_newtonschulz(update, hp, ns_steps)
        if not nesterov and hp.get("_storage") == jnp.bfloat16:
            state["momentum_buffer"] = normalized.astype(buf.dtype)
        lr = f64(hp["lr"])
        adjusted_lr = lr * _adjust_lr_ratio(adjust_lr_fn, param.shape)
        param = rnd(fence(param * cast(1 - fence(lr * f64(hp["weight_decay"]), hp), param), hp),
                    hp)
        # a bfloat16 update added to a float16 parameter is computed in float32: alpha too
        alpha = cast(-adjusted_lr, param) if hp.get("_storage") == jnp.float16 else \
            cast_alpha(-adjusted_lr, param, hp)
        step = alpha * update.astype(param.dtype)
        if hp.get("_storage") == jnp.bfloat16 and param.shape[0] > param.shape[1]:
            # the update is a transposed view: torch's scalar loop rounds the product first
            step = rnd(step, hp)
        param = rnd(param + step, hp)
        return param, state

    step = step_method("Muon")
