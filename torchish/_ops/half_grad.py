"""PyTorch's backward formulas as JAX derivatives, with PyTorch's roundings.

`pytorch_grad(fn, grad)` gives `fn` the derivative `grad(t, x, y, r, *params)`: a map linear in
the tangent `t`, from the input `x` and the result `y`. JAX transposes it into the pullback, so
its linear steps run in reverse order there: the map t -> r(t * a) * b computes r(g * b) * a,
and each rule is written with PyTorch's steps reversed.

For a float16/bfloat16 `x`, `fn` computes in float32 and rounds the result once (as PyTorch's CPU
kernels do) and the rule runs in float32 from the half `x` and `y`: `r(v)` rounds `v` to the half
type (`r.half`) where PyTorch's formula is a chain of ATen ops, each rounding its result; a fused
backward kernel rounds once, at the end. For other dtypes `r` is the identity (`r.half` None).

Exact rules also fix what JAX's derivatives get wrong at branch points (ties of `minimum`/`clip`
count half, PyTorch picks a side) and in signed zeros (PyTorch's `grad * 0` keeps grad's sign).
"""
import contextlib
import functools

import jax
import jax.numpy as jnp

try:
    from jax.extend.core import Literal
except ImportError:   # (older JAX)
    from jax.core import Literal

HALF = (jnp.float16, jnp.bfloat16)


class Rounder:
    """`r(v)`: `v` rounded to the half type `half` and back to float32 (identity for None)."""

    def __init__(self, half):
        self.half = half

    def __call__(self, v):
        return v if self.half is None else v.astype(self.half).astype(jnp.float32)


_EXACT = Rounder(None)


def pytorch_grad(fn, grad, half_only=False, rounds_once=True, name=None):
    """`fn(x, *params)` with PyTorch's derivative `grad(t, x, y, r, *params)` (the params are
    static Python values). `half_only`: other dtypes keep `fn` and JAX's own derivative.
    `rounds_once=False`: a half `x` runs `fn` in its own type (PyTorch's composites, whose
    every op rounds)."""
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def rule(params, x):
        if x.dtype in HALF and rounds_once:
            return fn(x.astype(jnp.float32), *params).astype(x.dtype)
        return fn(x, *params)

    @rule.defjvp
    def rule_jvp(params, primals, tangents):
        (x,), (t,) = primals, tangents
        y = rule(params, x)
        if x.dtype in HALF:
            f32 = jnp.float32
            return y, grad(t.astype(f32), x.astype(f32), y.astype(f32), Rounder(x.dtype),
                           *params).astype(x.dtype)
        return y, grad(t, x, y, _EXACT, *params)

    def run(x, *params):
        if half_only and x.dtype not in HALF:
            return fn(x, *params)
        return rule(params, x)
    run.__name__ = name or fn.__name__
    return run


def unfolded(c, like):
    """`c` filled into `like`'s shape and type as a divisor XLA must divide by: it computes
    `x / c` for a value broadcast from one as `x * (1 / c)`, an ulp off in a third of cases."""
    return jax.lax.optimization_barrier(jnp.full_like(like, c))


def float32_sums(fn):
    """`fn` with its float16/bfloat16 `reduce_sum`s accumulated in float32 and rounded once.

    JAX transposes a broadcast into a `reduce_sum` in the half type, and XLA's CPU accumulates
    it in that type: the gradient of a bfloat16 scalar times a (40, 100) tensor came out
    -59.5 where PyTorch's sum (float accumulation, one rounding) gives -60.5. Rewriting the
    traced pullback's sums (inlining jitted calls) costs nothing per call (it runs when the jitted backward
    is traced)."""
    def run(*args):
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        flat = _eval_with_float32_sums(closed.jaxpr, closed.consts, jax.tree.leaves(args))
        return jax.tree.unflatten(jax.tree.structure(shape), flat)
    return run


def _eval_with_float32_sums(jaxpr, consts, args):
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]
    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr") if eqn.primitive.name in ("pjit", "jit") else None
        if eqn.primitive is jax.lax.reduce_sum_p and ins[0].dtype in HALF:
            outs = [eqn.primitive.bind(ins[0].astype(jnp.float32), **eqn.params)
                    .astype(ins[0].dtype)]
        elif inner is not None:   # a jitted jnp function (jnp.where ...): its sums too
            outs = _eval_with_float32_sums(inner.jaxpr, inner.consts, ins)
        else:
            params = eqn.primitive.get_bind_params(eqn.params)
            subfuns, params = params if isinstance(params, tuple) else ((), params)  # (older JAX)
            ctx = getattr(eqn, "ctx", None)
            with ctx.manager if ctx is not None else contextlib.nullcontext():
                outs = eqn.primitive.bind(*subfuns, *ins, **params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in jaxpr.outvars]


def _half_round(half):
    return lambda v: v.astype(half).astype(jnp.float32)


@functools.partial(jax.custom_vjp, nondiff_argnums=(5, 6, 7, 8))
def strided_batch_norm(x, weight, bias, running_mean, running_var, axes, training, eps, half):
    """A float16/bfloat16 batch norm as PyTorch's CPU path for an input in neither contiguous
    nor channels-last layout computes it: its TensorIterator kernels run in the half type,
    every operation rounding, from the statistics as saved (the batch's, in the half type) or
    `1 / sqrt(running_var + eps)` made of half tensor ops. `x`: the input's float32 values;
    weight/bias of the channel shape or None."""
    return _strided_forward(x, weight, bias, running_mean, running_var, axes, training, eps,
                            half)[0]


def _strided_forward(x, weight, bias, running_mean, running_var, axes, training, eps, half):
    r = _half_round(half)
    if training:
        wide = x.astype(jnp.float64)
        mean = jnp.mean(wide, axes, keepdims=True)
        var = jnp.mean(jnp.square(wide - mean), axes, keepdims=True)
        mean, invstd = r(mean), r(1 / jnp.sqrt(var + eps))
    else:
        mean = running_mean.astype(jnp.float32)
        invstd = r(1 / r(jnp.sqrt(r(running_var.astype(jnp.float32) + jnp.float32(eps)))))
    y = r(r(x - mean) * invstd)
    if weight is not None:
        y = r(y * weight.astype(jnp.float32))
    if bias is not None:
        y = r(y + bias.astype(jnp.float32))
    return y.astype(half), (x, weight, bias, running_mean, running_var, mean, invstd)


def _strided_fwd(x, weight, bias, running_mean, running_var, axes, training, eps, half):
    return _strided_forward(x, weight, bias, running_mean, running_var, axes, training, eps,
                            half)


def _strided_bwd(axes, training, eps, half, res, g):
    x, weight, bias, running_mean, running_var, mean, invstd = res
    r = _half_round(half)
    if not training:   # (the backward's own invstd: one rounding of a double computation)
        invstd = r(1 / jnp.sqrt(running_var.astype(jnp.float64) + eps))
    g = g.astype(jnp.float32)
    n = 1
    for a in axes:
        n *= x.shape[a]
    # (the kernel's float sums run serially; summed in double here, rounded once)
    dot = jnp.sum(r(r(x - mean) * g).astype(jnp.float64), axes, keepdims=True)
    dot = dot.astype(jnp.float32)
    total = r(jnp.sum(g.astype(jnp.float64), axes, keepdims=True))
    w = 1 if weight is None else weight.astype(jnp.float32)
    n_half = r(jnp.float32(n))   # (Half / int64 divides by the count as a half)
    if training:
        k = r(r(r(r(dot) * invstd) * invstd) / n_half)
        grad_mean = r(total / n_half)
        dx = r(r(r(r(g - grad_mean) - r(r(x - mean) * k)) * invstd) * w)
    else:
        dx = r(r(g * invstd) * w)

    def like(v, p):
        return None if p is None else v.reshape(p.shape).astype(p.dtype)
    return (dx.astype(x.dtype), like(r(dot * invstd), weight), like(total, bias),
            None if running_mean is None else jnp.zeros_like(running_mean),
            None if running_var is None else jnp.zeros_like(running_var))


strided_batch_norm.defvjp(_strided_fwd, _strided_bwd)
