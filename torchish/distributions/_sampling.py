"""Samplers PyTorch implements as dedicated kernels (`_standard_gamma`, `_sample_dirichlet`,
`binomial`) and the traced fallbacks of host-only samplers (`multinomial`, `poisson`).

PyTorch's CPU gamma/dirichlet/binomial algorithms are not reproduced: these draw from JAX's
PRNG with a key forked from the torchish generator (so `manual_seed` still makes them
reproducible), and differentiate through the sample with JAX's implicit reparameterization,
the same gradient PyTorch's `_standard_gamma_grad` / `_dirichlet_grad` compute.
"""
import jax
import jax.numpy as jnp

from .._ops.random_ops import _key
from .._ops.registry import call_jax
from .utils import rng_traced


def _torch():
    import torchish
    return torchish


def standard_gamma(concentration):
    key = _key(None)
    return call_jax("StandardGammaBackward0",
                    lambda c: jax.random.gamma(key, c, dtype=c.dtype), [concentration])


def sample_dirichlet(concentration):
    key = _key(None)

    def draw(c):
        # normalised gammas; tiny keeps an all-underflow row finite, as PyTorch clamps
        g = jax.random.gamma(key, c, dtype=c.dtype)
        g = jnp.maximum(g, jnp.finfo(c.dtype).tiny)
        return g / g.sum(-1, keepdims=True)
    return call_jax("_DirichletBackward", draw, [concentration])


def binomial(total_count, probs):
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
