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
_VMAP = [None]   # (axis name, randomness) of the vmap whose body is being traced


@contextlib.contextmanager
def traced_key(key, record=None, vmap=None):
    """Random ops inside the block draw from `key`; `record(used)` is told whether any did.
    `vmap`: (axis name, randomness) when the block is a vmap's body."""
    prev, prev_used, prev_vmap = _KEY[0], _USED[0], _VMAP[0]
    _KEY[0], _USED[0], _VMAP[0] = key, False, vmap
    try:
        yield
    finally:
        if record is not None:
            record(_USED[0])
        _KEY[0], _USED[0], _VMAP[0] = prev, prev_used, prev_vmap


def _mapped(array, axis):
    """Whether `array` is batched over the vmap axis `axis` (looking through forward-mode
    tracers nested inside it)."""
    from jax._src.interpreters import ad, batching   # (no public name for their tracers)
    while isinstance(array, jax.core.Tracer):
        if isinstance(array, batching.BatchTracer):
            if array._trace.axis_data.name == axis:
                return isinstance(array.batch_dim, int)
            array = array.val
        elif isinstance(array, ad.JVPTracer):
            array = array.primal
        else:
            return False
    return False


_SAME = ("Vmap does not currently support same randomness with a batched tensor input. "
         "Please file an issue with functorch")
_DIFFERENT = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
              "will appear like same randomness. If this is necessary for your usage, please "
              "file an issue with functorch.")


def check_vmap(params=(), inplace=None, name=None):
    """PyTorch's refusals inside `vmap(randomness=...)`: under "same", a batched parameter
    array (probabilities, means); under "different", an in-place sampler writing an unbatched
    `inplace` array (`name`: the sampler, when a batched parameter cannot be written there)."""
    if _VMAP[0] is None:
        return
    axis, randomness = _VMAP[0]
    if randomness == "same" and any(_mapped(a, axis) for a in params):
        raise RuntimeError(_SAME)
    if randomness == "different" and inplace is not None and not _mapped(inplace, axis):
        if any(_mapped(a, axis) for a in params):
            raise RuntimeError(
                f"vmap: inplace {name}(self, *extra_args) is not possible because there exists "
                "a Tensor `other` in extra_args that has more elements than `self`. This "
                "happened due to `other` being vmapped over but `self` not being vmapped over "
                "in a vmap. Please try to use out-of-place operators instead of inplace "
                f"{name}. If said operator is being called inside the PyTorch framework, "
                "please file a bug report instead.")
        raise RuntimeError(_DIFFERENT)


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
