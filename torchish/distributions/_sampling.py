"""Samplers PyTorch implements as dedicated kernels (`_standard_gamma`, `_sample_dirichlet`,
`binomial`) and the traced fallbacks of host-only samplers (`multinomial`, `poisson`).

Eagerly, gamma and Dirichlet samples are PyTorch's CPU stream, replayed on the host
(`_random_gamma`); they are differentiated by implicit reparameterization at the drawn
value with PyTorch's own approximations (`_standard_gamma_grad`, `_dirichlet_grad`, in
`_reparam_grads`), eagerly and in traced code alike. Inside a
trace, and for `binomial` (whose CPU algorithm is not reproduced), they come from JAX's PRNG
with a key forked from the torchish generator, so `manual_seed` still makes them reproducible.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._ops.random_ops import _key
from .._ops.registry import call_jax
from ..random import engine_of
from ._reparam_grads import dirichlet_grad, standard_gamma_grad
from .utils import rng_traced


def _torch():
    import torchish
    return torchish


@jax.custom_jvp
def _gamma_value(c, g):
    """The drawn gammas `g`, as a function of their concentrations `c`."""
    return g


@_gamma_value.defjvp
def _gamma_value_jvp(primals, tangents):
    c, g = primals
    return g, standard_gamma_grad(c, g) * tangents[0]


@jax.custom_jvp
def _dirichlet_value(c, x):
    """The drawn Dirichlet sample `x`, as a function of its concentrations `c`."""
    return x


@_dirichlet_value.defjvp
def _dirichlet_value_jvp(primals, tangents):
    # d x_j / d c_i = grad_i (delta_ij - x_j): the Jacobian whose transpose is PyTorch's
    # `_Dirichlet` backward
    c, x = primals
    total = jnp.broadcast_to(c.sum(-1, keepdims=True), c.shape)
    scaled = dirichlet_grad(x, c, total) * tangents[0]
    return x, scaled - x * scaled.sum(-1, keepdims=True)


def _host_tensor(values, like):
    return _torch().from_numpy(np.asarray(values)).to(like.device)


def standard_gamma(concentration):
    if not rng_traced(concentration):
        c = np.asarray(concentration.detach()._data)
        g = _host_tensor(engine_of(None).standard_gamma(c), concentration)
        return call_jax("StandardGammaBackward0", _gamma_value, [concentration, g],
                        key="standard_gamma")
    key = _key(None)
    return call_jax("StandardGammaBackward0", lambda c: _gamma_value(
        c, jax.random.gamma(key, jax.lax.stop_gradient(c), dtype=c.dtype)), [concentration])


def sample_dirichlet(concentration):
    if not rng_traced(concentration):
        x, _ = engine_of(None).dirichlet(np.asarray(concentration.detach()._data))
        x = _host_tensor(x, concentration)
        return call_jax("_DirichletBackward", _dirichlet_value, [concentration, x],
                        key="sample_dirichlet")
    key = _key(None)

    def draw(c):
        # normalised gammas; tiny keeps an all-underflow row finite, as PyTorch clamps
        g = jax.random.gamma(key, jax.lax.stop_gradient(c), dtype=c.dtype)
        g = jnp.maximum(g, jnp.finfo(c.dtype).tiny)
        return _dirichlet_value(c, g / g.sum(-1, keepdims=True))
    return call_jax("_DirichletBackward", draw, [concentration])


def binomial(total_count, probs):
    torch = _torch()
    if not (rng_traced(total_count) or rng_traced(probs)):   # PyTorch's stream, eagerly
        return torch.binomial(total_count.detach(), probs.detach())
    key = _key(None)
    with _torch().no_grad():
        return call_jax("BinomialBackward0", lambda n, p: jax.random.binomial(
            key, n, p, dtype=p.dtype), [total_count, probs])


def multinomial_with_replacement(probs_2d, n):
    """Categorical indices, shape (rows, n): torch.multinomial eagerly (PyTorch's stream),
    JAX's categorical sampler inside a trace."""
    torch = _torch()
    if not rng_traced(probs_2d):
        return torch.multinomial(probs_2d, n, True)
    key = _key(None)
    return call_jax("MultinomialBackward0", lambda p: jax.random.categorical(
        key, jnp.log(p), axis=-1, shape=(n, p.shape[0])).T.astype(jnp.int64),
        [probs_2d.detach()])


def poisson(rate):
    torch = _torch()
    if not rng_traced(rate):
        return torch.poisson(rate)
    key = _key(None)
    return call_jax("PoissonBackward0", lambda r: jax.random.poisson(key, r, r.shape)
                    .astype(r.dtype), [rate.detach()])
