"""Helpers shared by the distributions: parameter broadcasting, probs <-> logits, lazily
computed parameters, and the random draws whose primitive depends on eager vs traced data."""
import numbers

import jax

from .. import _tensor
from .. import _random_trace

euler_constant = 0.5772156649015329

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _torch():
    import torchish
    return torchish


def is_traced(*values):
    """Whether any tensor among `values` holds a JAX tracer (compiled code): argument checks
    that need concrete values are skipped there, as PyTorch skips them while tracing."""
    return any(isinstance(v, _tensor.Tensor) and isinstance(v._data, jax.core.Tracer)
               for v in values)


def rng_traced(*values):
    """Whether random draws must come from JAX's PRNG (inside a trace) rather than the host
    engine that reproduces PyTorch's CPU generator. The body of an eagerly called vmap is
    traced but draws PyTorch's stream on the host (`_random_trace.Host`), through the random
    ops, as functorch's batching rules draw it."""
    if _random_trace.host():
        return False
    return _random_trace.active() or is_traced(*values)


def broadcast_all(*values):
    torch = _torch()
    if not all(isinstance(v, (_tensor.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if all(isinstance(v, _tensor.Tensor) for v in values):
        return torch.broadcast_tensors(*values)
    ref = next((v for v in values if isinstance(v, _tensor.Tensor)), None)
    opts = dict(dtype=torch.get_default_dtype()) if ref is None else \
        dict(dtype=ref.dtype, device=ref.device)
    return torch.broadcast_tensors(*[v if isinstance(v, _tensor.Tensor)
                                     else torch.tensor(v, **opts) for v in values])


def _fresh_inplace(t):
    """`t`, a fresh tensor a sampler is about to fill in place (`normal_`, `uniform_`, ...),
    as PyTorch's distributions draw. Inside a vmap such a tensor is unbatched, and vmap's
    "different" randomness refuses an in-place draw into it (torchish's own in-place calls
    skip that check, meant for user code, so it is made here)."""
    if _random_trace.active():
        _random_trace.check_vmap(inplace=t._data)
    return t


def _standard_normal(shape, dtype, device):
    torch = _torch()
    return _fresh_inplace(torch.empty(shape, dtype=dtype, device=device)).normal_()


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dimensions of `value`."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    torch = _torch()
    if is_binary:
        return torch.sigmoid(logits)
    return torch.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = _torch().finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    torch = _torch()
    clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(clamped) - torch.log1p(-clamped)
    return torch.log(clamped)


class lazy_property:
    """A parameter derived from another on first access and then stored on the instance
    (`probs` from `logits` or the reverse); computed with grad enabled, as PyTorch does."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__name__ = wrapped.__name__
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with _torch().enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_index(n, diag):
    """Row and column indices (row-major order) of the entries on or below diagonal `diag`."""
    rows, cols = [], []
    for i in range(n):
        for j in range(n):
            if j < i + diag + 1:
                rows.append(i)
                cols.append(j)
    return rows, cols


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries of (a batch of) D x D matrices, in row order."""
    n = mat.shape[-1]
    if not is_traced(mat) and (diag < -n or diag >= n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = _tril_index(n, diag)
    torch = _torch()
    return mat[..., torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of `tril_matrix_to_vec`: a lower-triangular D x D matrix per vector."""
    torch = _torch()
    # positive root of D^2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] +
                            4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = torch.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    rows, cols = _tril_index(n, diag)
    flat = torch.tensor([r * n + c for r, c in zip(rows, cols)], dtype=torch.long)
    mat = vec.new_zeros(vec.shape[:-1] + (n * n,))
    mat = mat.index_copy(-1, flat, vec) if len(rows) else mat
    return mat.reshape(vec.shape[:-1] + (n, n))
