"""Random numbers inside traced code (`torchish.compile`, `torchish.func`).

Eager random ops reproduce PyTorch's CPU generator on the host. Inside a trace that is
impossible (values must be computed by XLA), so they draw from JAX's counter-based PRNG: each
compiled call gets a fresh key (from the default generator's stream, so it is reproducible per
`manual_seed`), and each random op inside splits it.

A `vmap` called eagerly is the exception (`Host`): its body is traced once per call, so a random
op there draws on the host, at trace time, what PyTorch's batching rules draw: under "different"
one sample of shape (batch, *shape) (a nested vmap's batch sizes first), of which each example
reads its row by `jax.lax.axis_index`; under "same" one unbatched sample.
"""
import contextlib

import jax
import jax.numpy as jnp

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


def _batch_dim(array, axis):
    """Where `array` is batched over the vmap axis `axis` (looking through forward-mode
    tracers nested inside it), or None."""
    from jax._src.interpreters import ad, batching   # (no public name for their tracers)
    while isinstance(array, jax.core.Tracer):
        if isinstance(array, batching.BatchTracer):
            if array._trace.axis_data.name == axis:
                return array.batch_dim if isinstance(array.batch_dim, int) else None
            array = array.val
        elif isinstance(array, (ad.JVPTracer, getattr(ad, "LinearizeTracer", ad.JVPTracer))):
            array = array.primal
        else:
            return None
    return None


def _mapped(array, axis):
    return _batch_dim(array, axis) is not None


def physical_batch_dim(array):
    """Under one "different" vmap level, where `array` holds that level's batch dim when not
    in front (an input mapped with in_dims=1, and what is computed from it): PyTorch's
    physical tensor keeps it there, and its in-place fills walk memory in that order."""
    different = [axis for axis, randomness, _ in _KEY[0].levels if randomness == "different"]
    if len(different) != 1:
        return None
    bd = _batch_dim(array, different[0])
    return bd or None


_SAME = ("Vmap does not currently support same randomness with a batched tensor input. "
         "Please file an issue with functorch")
_DIFFERENT = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
              "will appear like same randomness. If this is necessary for your usage, please "
              "file an issue with functorch.")


def check_vmap(params=(), inplace=None, name=None):
    """PyTorch's refusals inside `vmap(randomness=...)`: under "same", a batched parameter
    array (probabilities, means); under "different", an in-place sampler writing an unbatched
    `inplace` array (`name`: the sampler, when a batched parameter cannot be written there).
    Under nested eager vmaps each level checks, innermost first, as each level's batching
    rule does: a "same" level fills a fresh unbatched tensor, which the levels around see."""
    if isinstance(_KEY[0], Host):
        levels = [(axis, randomness) for axis, randomness, _ in reversed(_KEY[0].levels)]
    elif _VMAP[0] is not None:
        levels = [_VMAP[0]]
    else:
        return
    for axis, randomness in levels:
        if randomness == "error" and isinstance(_KEY[0], Host):
            raise RuntimeError(RANDOMNESS_ERROR)
        if randomness == "same" and any(_mapped(a, axis) for a in params):
            raise RuntimeError(_SAME)
        if randomness == "different" and inplace is not None and not _mapped(inplace, axis):
            if any(_mapped(a, axis) for a in params):
                raise RuntimeError(
                    f"vmap: inplace {name}(self, *extra_args) is not possible because there "
                    "exists a Tensor `other` in extra_args that has more elements than `self`. "
                    "This happened due to `other` being vmapped over but `self` not being "
                    "vmapped over in a vmap. Please try to use out-of-place operators instead "
                    f"of inplace {name}. If said operator is being called inside the PyTorch "
                    "framework, please file a bug report instead.")
            raise RuntimeError(_DIFFERENT)
        if randomness == "same" and inplace is not None:
            inplace = jnp.zeros(())   # (the fresh intermediate: unbatched)


RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap")


class Host:
    """The "key" of an eagerly called vmap's body: random ops draw PyTorch's stream on the
    host. `levels`: (axis name, randomness, batch size) of the enclosing vmaps, outermost
    first. `key`: a JAX key for the few draws whose parameters cannot be read on the host
    (values only known inside compiled code), forked from the generator when first needed."""

    def __init__(self, levels):
        self.levels, self.key = levels, None

    def split(self):
        self.check()
        if self.key is None:
            self.key = next_key(True)
        self.key, sub = jax.random.split(self.key)
        for axis, randomness, _ in self.levels:
            if randomness == "different":
                sub = jax.random.fold_in(sub, jax.lax.axis_index(axis))
        return sub

    def check(self):
        # (an "error" vmap anywhere around refuses, as its batching rule is reached too)
        if any(randomness == "error" for _, randomness, _ in self.levels):
            raise RuntimeError(RANDOMNESS_ERROR)


def host():
    """Whether random ops draw on the host for an eagerly called vmap (see `Host`)."""
    return isinstance(_KEY[0], Host)


def host_levels():
    """The vmap levels a new vmap nests in when it follows PyTorch's stream: () outside any
    trace, the enclosing `Host`'s levels, or None inside other traced code (compile)."""
    if _KEY[0] is None:
        return ()
    return _KEY[0].levels if isinstance(_KEY[0], Host) else None


def batch_shape():
    """The leading dims of a host draw: the sizes of the "different" levels, outermost first
    (raises under an "error" level)."""
    _KEY[0].check()
    _USED[0] = True
    return tuple(size for _, randomness, size in _KEY[0].levels if randomness == "different")


def pick(values, device=None):
    """This example's part of a host draw of shape `batch_shape() + shape`."""
    values = jax.device_put(values, device) if device is not None else jnp.asarray(values)
    for axis, randomness, _ in _KEY[0].levels:
        if randomness == "different":
            values = values[jax.lax.axis_index(axis)]
    return values


def host_draw(draw, shape, device=None):
    """`draw(full_shape)` (a numpy sample) taken once for all examples, as PyTorch's batching
    rules take it, and this example's part of it."""
    return pick(draw(batch_shape() + tuple(shape)), device)


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
    if isinstance(_KEY[0], Host):
        return _KEY[0].split()
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
