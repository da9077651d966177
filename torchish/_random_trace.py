"""Random numbers inside traced code (`torchish.compile`, `torchish.func`).

Eager random ops reproduce PyTorch's CPU generator on the host. Inside a trace that is
impossible (values must be computed by XLA), so they draw from JAX's counter-based PRNG: each
compiled call gets a fresh key (from the default generator's stream, so it is reproducible per
`manual_seed`), and each random op inside splits it.
"""
import contextlib

import jax

_KEY = [None]
_USED = [False]  # whether the trace being built drew random numbers


@contextlib.contextmanager
def traced_key(key, record=None):
    """Random ops inside the block draw from `key`; `record(used)` is told whether any did."""
    prev, prev_used = _KEY[0], _USED[0]
    _KEY[0], _USED[0] = key, False
    try:
        yield
    finally:
        if record is not None:
            record(_USED[0])
        _KEY[0], _USED[0] = prev, prev_used


class Forbidden:
    """The "key" of a region where random ops must raise (`vmap(randomness="error")`)."""

    def __init__(self, message):
        self.message = message


def active():
    return _KEY[0] is not None


def split():
    """A fresh subkey for one random op inside the trace."""
    if isinstance(_KEY[0], Forbidden):
        raise RuntimeError(_KEY[0].message)
    _USED[0] = True
    key, sub = jax.random.split(_KEY[0])
    _KEY[0] = key
    return sub


_ZERO_KEY = None


def next_key(uses_rng):
    """A key for the next compiled call.

    Drawn from the default generator's stream (one random64) when the compiled code uses
    random ops, so runs are reproducible per `manual_seed`; code that draws nothing leaves the
    generator untouched, as in PyTorch. `uses_rng` None (not yet traced): peek, and let the
    caller `advance()` once the trace shows random ops were used.
    """
    global _ZERO_KEY
    if uses_rng is False:
        if _ZERO_KEY is None:
            _ZERO_KEY = jax.random.key_data(jax.random.key(0))
        return _ZERO_KEY
    from . import random
    engine = random.current_default()._engine
    seed = (engine.clone() if uses_rng is None else engine).fork_jax_key()
    return jax.random.key_data(jax.random.key(seed & 0x7FFFFFFFFFFFFFFF))


def advance():
    from . import random
    random.current_default()._engine.fork_jax_key()
