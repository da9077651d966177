"""`reverse_constant(x)`: `x`, a constant of reverse-mode differentiation only.

PyTorch's no_grad blocks inside `torch.func` transforms are constants of the reverse-mode
levels (`grad`, `vjp`, the tape around them) while forward-mode AD (`jvp`, `jacfwd`) still
sees through them. `jax.lax.stop_gradient` stops both, so this identity is a linear
primitive instead: its tangent is itself applied to the input's tangent (forward mode passes
it on) and its transpose is zero (reverse mode, JAX's transposed linearization, gets none).
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

REVERSE = "reverse"   # a Tensor's `_stopgrad` value that reads through `reverse_constant`

_p = Primitive("torchish_reverse_constant")
_p.def_impl(lambda x: x)
_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(_p, lambda ctx, x: [x])
batching.defvectorized(_p)
ad.deflinear2(_p, lambda ct, x: [ad.Zero(x.aval)])


def reverse_constant(x):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return jax.lax.stop_gradient(x)   # (no tangent to pass on)
    return _p.bind(x)
