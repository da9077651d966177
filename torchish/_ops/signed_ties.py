"""Which operand a tie of -0.0 and 0.0 returns: PyTorch's CPU kernels keep the first
(`maximum(-0.0, 0.0)` is -0.0, `amax` along a dim takes the first of equal values), where
XLA's max prefers +0.0. The value is picked by position; the derivative stays JAX's own
(ties share the gradient as PyTorch's backward formulas do)."""
import functools

import jax
import jax.numpy as jnp


def _floating(x):
    return jnp.issubdtype(jnp.result_type(x), jnp.floating)


def binary_first_on_ties(jax_fn, pick_other, tangent):
    """`jax_fn(a, b)` whose value on equal operands is `a`; `pick_other(a, b)`: where the
    result is `b`; `tangent(a, b, ta, tb)`: PyTorch's derivative (linear in ta, tb, so its
    transpose is PyTorch's backward)."""
    @jax.custom_jvp
    def picked(a, b):
        return jnp.where(pick_other(a, b), b, a)

    @picked.defjvp
    def picked_jvp(primals, tangents):
        return picked(*primals), tangent(*primals, *tangents)

    def run(a, b):
        if not (_floating(a) and _floating(b)):
            return jax_fn(a, b)
        a, b = jnp.broadcast_arrays(a, b)
        return picked(a, b)
    return run


def reduce_first_on_ties(jax_fn, jax_arg_fn):
    """`jax_fn(x, axis=, keepdims=)` whose value along one axis is the first of the equal
    extremes (`jax_arg_fn` finds it, as argmax does); other reductions stay `jax_fn`. The
    gradient is shared by the elements equal to the result (none for NaN: 0/0, as
    PyTorch's)."""
    @functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
    def picked(x, axis, keepdims):
        out = jnp.take_along_axis(x, jnp.expand_dims(jax_arg_fn(x, axis=axis), axis), axis)
        return out if keepdims else jnp.squeeze(out, axis)

    @picked.defjvp
    def picked_jvp(axis, keepdims, primals, tangents):
        (x,), (t,) = primals, tangents
        y = picked(x, axis, keepdims)
        mask = (x == (y if keepdims else jnp.expand_dims(y, axis))).astype(t.dtype)
        return y, jnp.sum(t * mask, axis, keepdims=keepdims) / jnp.sum(mask, axis,
                                                                       keepdims=keepdims)

    def run(x, axis=None, keepdims=False):
        one = axis if isinstance(axis, int) else (
            axis[0] if isinstance(axis, tuple) and len(axis) == 1 else None)
        if one is None or not _floating(x) or x.ndim == 0:
            return jax_fn(x, axis=axis, keepdims=keepdims)
        return picked(x, one % x.ndim, keepdims)
    return run


def _extreme_tangent(lose_a, lose_b):
    # (maximum/minimum: ties share it, a NaN gives it to both)
    def tangent(a, b, ta, tb):
        zero = jnp.zeros_like(ta)
        return jnp.where(a == b, (ta + tb) / 2, jnp.where(lose_a(a, b), zero, ta)
                         + jnp.where(lose_b(a, b), zero, tb))
    return tangent


def _f_tangent(keeps_a):
    # (fmax/fmin: all to `a` where it is kept, ties included)
    return lambda a, b, ta, tb: jnp.where(keeps_a(a, b), ta, tb)


def _fmax_keeps_a(a, b):
    return (a >= b) | jnp.isnan(b)


def _fmin_keeps_a(a, b):
    return (a <= b) | jnp.isnan(b)


# NaN propagates from either operand (maximum) or yields to the number (fmax)
maximum = binary_first_on_ties(jnp.maximum, lambda a, b: (a < b) | jnp.isnan(b),
                               _extreme_tangent(jnp.less, jnp.greater))
minimum = binary_first_on_ties(jnp.minimum, lambda a, b: (a > b) | jnp.isnan(b),
                               _extreme_tangent(jnp.greater, jnp.less))
fmax = binary_first_on_ties(jnp.fmax, lambda a, b: ~_fmax_keeps_a(a, b),
                            _f_tangent(_fmax_keeps_a))
fmin = binary_first_on_ties(jnp.fmin, lambda a, b: ~_fmin_keeps_a(a, b),
                            _f_tangent(_fmin_keeps_a))
amax = reduce_first_on_ties(jnp.max, jnp.argmax)
amin = reduce_first_on_ties(jnp.min, jnp.argmin)
