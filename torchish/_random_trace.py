"""Random numbers inside traced code (`torchish.compile`, `torchish.func`).

Eager random ops reproduce PyTorch's CPU generator on the host. Inside a trace that is
impossible (values must be computed by XLA), so they draw from JAX's counter-based PRNG: each
compiled call gets a fresh key (from the default generator's stream, so it is reproducible per
`manual_seed`), and each random op inside splits it.
"""
import contextlib

import jax

_KEY = [None]


@contextlib.contextmanager
def traced_key(key):
    prev = _KEY[0]
    _KEY[0] = key
    try:
        yield
    finally:
        _KEY[0] = prev


def active():
    return _KEY[0] is not None


def split():
    """A fresh subkey for one random op inside the trace."""
    key, sub = jax.random.split(_KEY[0])
    _KEY[0] = key
    return sub


def next_key():
    """A key for the next compiled call, drawn from the default generator's stream."""
    from . import random
    seed = random.default_generator._engine.fork_jax_key() if hasattr(
        random, "default_generator") else 0
    return jax.random.key_data(jax.random.key(seed & 0x7FFFFFFFFFFFFFFF))
