"""`torch.binomial(count, prob)`: PyTorch's CPU binomial sampler on its generator stream
(inversion or BTRS per element, `_random_discrete.binomial`), so seeded draws, and every draw
after them, match PyTorch's; in an eager vmap's body drawn once for the batch, as PyTorch's
batching rule draws (compiled code: JAX's PRNG)."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _random_trace
from ..random import engine_of
from .creation_data import _leaf
from .registry import record_not_implemented


def binomial(count, prob, generator=None):
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype._legacy}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._legacy} but expected "
                           f"{count.dtype._legacy}")
    out = None
    if _random_trace.host():
        # an eager vmap's body: PyTorch's stream, drawn once on the values of the whole batch
        from ..distributions._sampling import host_sample
        out = host_sample(lambda n, p: engine_of(generator).binomial(
            *np.broadcast_arrays(n, p)), count, (count, prob), count.dtype.np)
    if out is None and (_random_trace.active() or isinstance(count._data, jax.core.Tracer)
                        or isinstance(prob._data, jax.core.Tracer)):
        # compiled code (or values an eager vmap cannot read): JAX keys
        from .random_ops import _key, _vmap_params
        _vmap_params(count, prob)
        n, p = count.detach()._data, prob.detach()._data
        out = _leaf(jax.random.binomial(_key(generator), n, p, jnp.broadcast_shapes(
            n.shape, p.shape), count.dtype.np), count.device, False)
    if out is None:
        counts = np.asarray(count.detach()._data)
        probs = np.broadcast_to(np.asarray(prob.detach()._data), counts.shape)
        out = _leaf(np.asarray(engine_of(generator).binomial(counts, probs)), count.device,
                    False)
    if isinstance(count._data, jax.core.Tracer) or isinstance(prob._data, jax.core.Tracer):
        # (a transform may differentiate the draw: its backward raises, as PyTorch's node)
        out = _leaf(_no_derivative(out._data, count._data, prob._data), count.device, False)
    # PyTorch records a node whose backward raises (no derivative formula for binomial)
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        _NO_DERIVATIVE), [count, prob], [out])
    return out


_NO_DERIVATIVE = "derivative for aten::binomial is not implemented"


@jax.custom_vjp
def _no_derivative(out, count, prob):
    return out


def _no_derivative_fwd(out, count, prob):
    # (wrapped again: the differentiation levels around this one refuse too)
    return _no_derivative(out, count, prob), None


def _no_derivative_bwd(_, ct):
    raise RuntimeError(_NO_DERIVATIVE)


_no_derivative.defvjp(_no_derivative_fwd, _no_derivative_bwd)


PLAIN = ["binomial"]
