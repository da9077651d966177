"""`torch.binomial(count, prob)`: PyTorch's CPU binomial sampler on its generator stream
(inversion or BTRS per element, `_random_discrete.binomial`), so seeded draws, and every draw
after them, match PyTorch's."""
import numpy as np

from ..random import engine_of
from .creation import _leaf
from .registry import record_not_implemented


def binomial(count, prob, generator=None):
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype._legacy}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._legacy} but expected "
                           f"{count.dtype._legacy}")
    counts = np.asarray(count.detach()._data)
    probs = np.broadcast_to(np.asarray(prob.detach()._data), counts.shape)
    out = _leaf(np.asarray(engine_of(generator).binomial(counts, probs)), count.device, False)
    # PyTorch records a node whose backward raises (no derivative formula for binomial)
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        "derivative for aten::binomial is not implemented"), [count, prob], [out])
    return out


PLAIN = ["binomial"]
