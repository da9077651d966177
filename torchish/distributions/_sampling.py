"""Samplers PyTorch implements as dedicated kernels (`_standard_gamma`, `_sample_dirichlet`,
`binomial`) and the traced fallbacks of host-only samplers (`multinomial`, `poisson`).

Eagerly, gamma and Dirichlet samples are PyTorch's CPU stream, replayed on the host
(`_random_gamma`); they are differentiated by implicit reparameterization at the drawn
value with PyTorch's own approximations (`_standard_gamma_grad`, `_dirichlet_grad`, in
`_reparam_grads`), eagerly and in traced code alike. In an eager vmap's body they follow
PyTorch's stream too, their batched parameters read on the host (see `_vmap_host`). Inside other
traces they come from JAX's PRNG with a key forked from the torchish generator, so
`manual_seed` still makes them reproducible.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _random_trace
from .._device import jax_device
from .._ops.creation_data import _leaf
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
    # (the primal output wrapped again, so that the levels around this one, nested
    # differentiation, see the reparameterized derivative too, as `inplace._with_gradient_of`)
    return _gamma_value(c, g), standard_gamma_grad(c, g) * tangents[0]


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
    return _dirichlet_value(c, x), scaled - x * scaled.sum(-1, keepdims=True)


def _host_tensor(values, like):
    return _torch().from_numpy(np.asarray(values)).to(like.device)


def _vmap_host(*params):
    """In an eager vmap's body (`_random_trace.Host`): the parameters' values for the whole
    batch as numpy arrays of shape `batch_shape() + shape` (see `_full_values`), so PyTorch's
    stream can be followed, drawn once for the batch as functorch's rules draw it; False when
    a value cannot be read (JAX keys then); None outside such a body. Batched parameters are
    refused under "same" randomness, as PyTorch refuses them."""
    if not _random_trace.host():
        return None
    arrays = [p.detach()._data for p in params]
    _random_trace.check_vmap(arrays)
    full = [_full_values(a) for a in arrays]
    return False if any(f is None for f in full) else full


def _full_values(array):
    """`array` (the per-example value in an eager vmap's body) for every example: the vmap
    levels' batch dims lead, outermost first, broadcast where it is not batched. An eager
    vmap traces with concrete values under its tracers, so the batched values can be read
    on the host; None under any other tracer (compiled code)."""
    from jax._src.interpreters import ad, batching   # (no public name for their tracers)
    peeled = []   # (axis name, batch dim), innermost level first
    while isinstance(array, jax.core.Tracer):
        if isinstance(array, batching.BatchTracer) and isinstance(array.batch_dim, int):
            peeled.append((array._trace.axis_data.name, array.batch_dim))
            array = array.val
        elif isinstance(array, (ad.JVPTracer, getattr(ad, "LinearizeTracer", ad.JVPTracer))):
            array = array.primal   # (a differentiating transform's values are concrete)
        else:
            return None
    values, names = np.asarray(array), []
    for name, bd in reversed(peeled):   # each level's dim to the front of the dims left
        values = np.moveaxis(values, bd + len(names), len(names))
        names.append(name)
    levels = [(axis, size) for axis, randomness, size in _random_trace.host_levels()
              if randomness == "different"]
    if any(name not in [axis for axis, _ in levels] for name in names):
        return None
    shape = values.shape[len(names):]
    order, lead = [], []
    for axis, size in levels:   # the draw's leading dims, a size-1 dim where not batched
        if axis in names:
            order.append(names.index(axis))
            lead.append(size)
        else:
            values = np.expand_dims(values, len(names))
            order.append(len(names))
            names.append(axis)
            lead.append(size)
    values = np.transpose(values, order + list(range(len(names), values.ndim)))
    return np.broadcast_to(values, tuple(lead) + shape)


def host_sample(draw, like, params, dtype):
    """In an eager vmap's body, `draw(*values)` of `params`' values for the whole batch (see
    `_vmap_host`: PyTorch's batching rule draws once for the batch), this example's part as a
    tensor of numpy `dtype`; None elsewhere or when a value cannot be read (JAX keys then)."""
    full = _vmap_host(*params)
    if not full:
        return None
    return _host_batch(lambda *values: np.asarray(draw(*values), dtype), like, full)


def _host_batch(draw, like, full):
    """`draw(*full)` (the parameters for the whole batch), this example's part as a tensor."""
    _random_trace.batch_shape()   # (marks the trace as drawing random numbers)
    values = _random_trace.pick(draw(*full), jax_device(like.device))
    return _leaf(values, like.device, False)


def standard_gamma(concentration):
    host = _vmap_host(concentration)
    if host:
        g = _host_batch(engine_of(None).standard_gamma, concentration, host)
        return call_jax("StandardGammaBackward0", _gamma_value, [concentration, g],
                        key="standard_gamma")
    if host is None and not rng_traced(concentration):
        c = np.asarray(concentration.detach()._data)
        g = _host_tensor(engine_of(None).standard_gamma(c), concentration)
        return call_jax("StandardGammaBackward0", _gamma_value, [concentration, g],
                        key="standard_gamma")
    key = _key(None)
    return call_jax("StandardGammaBackward0", lambda c: _gamma_value(
        c, jax.random.gamma(key, jax.lax.stop_gradient(c), dtype=c.dtype)), [concentration])


# (PyTorch samples through an autograd.Function without `setup_context`, which functorch's
# transforms refuse)
_DIRICHLET_VMAP = ("In order to use an autograd.Function with functorch transforms (vmap, "
                   "grad, jvp, jacrev, ...), it must override the setup_context staticmethod. "
                   "For more details, please see "
                   "https://pytorch.org/docs/main/notes/extending.func.html")


def sample_dirichlet(concentration):
    if _random_trace.host():
        raise RuntimeError(_DIRICHLET_VMAP)
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
    host = _vmap_host(total_count, probs)
    if host:
        return _host_batch(lambda n, p: np.asarray(engine_of(None).binomial(n, p), p.dtype),
                           probs, host)
    if host is None and not (rng_traced(total_count) or rng_traced(probs)):
        return torch.binomial(total_count.detach(), probs.detach())
    key = _key(None)   # (also parameters an eager vmap cannot read: see `_vmap_host`)
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
    host = _vmap_host(rate)
    if host:   # (torch.poisson follows PyTorch's stream only for unbatched rates)
        return _host_batch(lambda r: np.asarray(engine_of(None).poisson(r), r.dtype), rate,
                           host)
    if host is None and not rng_traced(rate):
        return torch.poisson(rate)
    key = _key(None)
    return call_jax("PoissonBackward0", lambda r: jax.random.poisson(key, r, r.shape)
                    .astype(r.dtype), [rate.detach()])
