"""The arithmetic the built-in optimizers' update rules share (pure JAX, run inside the compiled
update; see `optimizer.py`'s docstring): Python-float scalars as torch's kernels take them, the
`fence`s that keep XLA from fusing what torch's separate kernels round, and half-precision
parameters computed in float32 with each op's result rounded (`_half_rule`, `rnd`)."""
import jax
import jax.numpy as jnp


def f64(x):
    """A hyperparameter / step count as a float64 scalar: torch's Python-float arithmetic."""
    return jnp.asarray(x).astype(jnp.float64)


def cast(x, like):
    """A float64 scalar as the Python number torch hands to a kernel of `like`'s dtype."""
    return jnp.asarray(x).astype(like.dtype)


def rnd(x, hp):
    """`x` stored as a torch kernel of a half-precision parameter stores its float32 result:
    rounded to the half type (fenced, so that XLA keeps the rounding); unchanged otherwise."""
    dtype = hp.get("_storage")
    if dtype is None:
        return x
    return fence(x.astype(dtype), hp).astype(x.dtype)


def cast_alpha(x, like, hp):
    """A Python scalar as torch's `add` kernel of a half tensor takes it (`alpha=`, or a scalar
    `other`): rounded to the half type, unlike the float32 scalars of `mul`, `div`, `lerp`,
    `addcmul` and `addcdiv`."""
    dtype = hp.get("_storage")
    x = jnp.asarray(x)
    # c10 converts the double to float, then to the half type
    return cast(x if dtype is None else x.astype(jnp.float32).astype(dtype), like)


def cast_mul(x, like, hp):
    """The Python-scalar factor of a `mul_` that torch's foreach=True rule runs as the in-place
    `_foreach_mul_`: that kernel rounds it to a half parameter's type (as `cast_alpha`), the
    single-tensor `mul_` keeps it float32."""
    return cast_alpha(x, like, hp) if hp.get("_foreach") else cast(x, like)


def lerp(start, end, weight):
    """`start.lerp_(end, weight)` with a scalar weight (ATen's formula for both regimes)."""
    w = cast(weight, start)
    diff = end - start
    return jnp.where(jnp.abs(w) < 0.5, start + w * diff, end - diff * (1 - w))


_INT_OF_SIZE = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}


def fence(x, hp):
    """`x`, rounded as a separate torch kernel would leave it.

    XLA fuses the whole update and LLVM contracts any `a * b + c` it sees into an FMA. torch
    runs one kernel per op: a product that a *later* op adds to (`v.mul_(beta2).addcmul_(...)`)
    is rounded first. An xor with a runtime zero (`hp["_zero"]`) hides the product from the
    contraction without changing a bit. The same holds for the float64 scalar arithmetic
    (`1 - lr * weight_decay`): torch rounds each Python-float product.
    """
    if "_zero" not in hp:    # a differentiable step: bitcasts would cut the gradient
        return x
    itype = _INT_OF_SIZE[x.dtype.itemsize]
    bits = jax.lax.bitcast_convert_type(x, itype)
    return jax.lax.bitcast_convert_type(bits ^ jnp.asarray(hp["_zero"]).astype(itype), x.dtype)


def div_scalar(x, c, hp):
    """`x / c` for a tensor `x` and a Python-float `c`, divided as torch does.

    XLA rewrites a division by a broadcast scalar into a multiplication by its reciprocal
    (one more rounding), and sees through a plain `fence` of a broadcast (it sinks elementwise
    ops below broadcasts). The divisor is therefore xor-ed with `bits(x) & 0`: zero, but per
    element, so it is no longer a broadcast.
    """
    if "_zero" not in hp:    # a differentiable step (see `fence`): a barrier, which has a vjp
        return x / jax.lax.optimization_barrier(jnp.broadcast_to(cast(c, x), x.shape))
    itype = _INT_OF_SIZE[x.dtype.itemsize]
    zeros = jax.lax.bitcast_convert_type(x, itype) & jnp.asarray(hp["_zero"]).astype(itype)
    bits = jax.lax.bitcast_convert_type(jnp.broadcast_to(cast(c, x), x.shape), itype)
    return x / jax.lax.bitcast_convert_type(bits ^ zeros, x.dtype)


_HALF = (jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16))


def _half_rule(rule, static, hp, p, g, st):
    """`rule` on a bfloat16 / float16 parameter as torch's CPU kernels run it: every tensor op
    computes in float32 (its "opmath" type) and stores its result in the half type. The rule
    sees float32 arrays and `hp["_storage"]`, which `rnd` / `cast_alpha` / `cast_mul` read."""
    dtype = p.dtype
    half = {k for k, v in st.items() if v.dtype == dtype}
    given = {k: (v.astype(jnp.float32) if k in half else v) for k, v in st.items()}
    p, st = rule(static, dict(hp, _storage=dtype), p.astype(jnp.float32),
                 g.astype(jnp.float32), dict(given))
    # a state entry the rule creates (SGD's first momentum buffer) is a half tensor too
    return p.astype(dtype), {k: (v.astype(dtype) if k in half or k not in given else v)
                             for k, v in st.items()}
