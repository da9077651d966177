"""Matrix structure and differences: tril/triu, diag/diag_embed, block_diag, diff and
cartesian_prod (re-exported by `shape.py`, whose PLAIN list publishes the Python-level ones)."""
import builtins
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .registry import Promote, op
from .shape import _wrap_dim, meshgrid, stack

P = Promote


@op(promote=P.NONE, grad_fn="TrilBackward0", saves=(), inplace=True)
def tril(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return jnp.tril(input, diagonal)


@op(promote=P.NONE, grad_fn="TriuBackward0", saves=(), inplace=True)
def triu(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return jnp.triu(input, diagonal)


@op(promote=P.NONE, grad_fn="DiagBackward0", saves=())
def diag(input, diagonal=0):
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return jnp.diag(input, diagonal)


@op(promote=P.NONE, grad_fn="DiagEmbedBackward0", saves=())
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    d1, d2 = _wrap_dim(dim1, input.ndim + 1), _wrap_dim(dim2, input.ndim + 1)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(offset)
    idx = jnp.arange(input.shape[-1])
    out = jnp.zeros(input.shape[:-1] + (n, n), input.dtype)
    rows = idx + max(-offset, 0)
    cols = idx + max(offset, 0)
    out = out.at[..., rows, cols].set(input)
    return jnp.moveaxis(out, (-2, -1), (d1, d2))


@op(promote=P.INT_TO_LONG, method=False,
    grad_fn=lambda kinds, statics: "CopySlices" if statics["increasing"] else "FlipBackward0")
def vander(x, N=None, increasing=False):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    return jnp.vander(x, x.shape[0] if N is None else N, increasing=increasing)


@op(grad_fn="DiffBackward0", saves=(), tensors=("input", "prepend", "append"))
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    x = jnp.concatenate([p for p in (prepend, input, append) if p is not None], axis=d)
    for _ in range(n):
        a = jax.lax.slice_in_dim(x, 1, x.shape[d], axis=d)
        b = jax.lax.slice_in_dim(x, 0, x.shape[d] - 1, axis=d)
        x = a != b if x.dtype == jnp.bool_ else a - b
    return x


@op(grad_fn="CatBackward0", saves=(), function=False, method=False)
def _block_diag(tensors):
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    rows = builtins.sum(m.shape[0] for m in mats) if mats else 1
    cols = builtins.sum(m.shape[1] for m in mats)
    dtype = mats[0].dtype if mats else jnp.float32
    out = jnp.zeros((rows, cols), dtype)
    r = c = 0
    for m in mats:
        out = jax.lax.dynamic_update_slice(out, m, (r, c))
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def block_diag(*tensors):
    return _block_diag(list(tensors))


def cartesian_prod(*tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def diagflat(input, offset=0):
    """A matrix with the flattened input on its `offset` diagonal."""
    return diag_embed(input.reshape(-1), offset)


def combinations(input, r=2, with_replacement=False):
    """Rows of `r` elements of a 1-D input, in itertools' order."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(builtins.range(input.shape[0]), r)), np.int64).reshape(-1, r)
    from .creation import tensor
    return stack([input.index_select(0, tensor(idx[:, j])) for j in builtins.range(r)], 1)


@op(promote=P.NONE, differentiable=False, method=False)
def _unravel_index(indices, shape):
    flat = indices % math.prod(shape) if shape else indices
    out = []
    for n in reversed(shape):
        out.append(flat % n)
        flat = flat // n
    return tuple(o.astype(jnp.int64) for o in reversed(out))


def unravel_index(indices, shape):
    from .._tensor import Tensor
    if not isinstance(indices, Tensor):
        from .creation import tensor
        indices = tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    return _unravel_index(indices, shape)


@op(promote=P.NONE, grad_fn="ViewAsRealBackward0", saves=(), method=False)
def view_as_real(input):
    # a copy here: a storage holds one dtype, so the reinterpreting view cannot alias it
    if not jnp.iscomplexobj(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return jnp.stack([input.real, input.imag], -1)


@op(promote=P.NONE, grad_fn="ViewAsComplexBackward0", saves=(), method=False)
def view_as_complex(input):
    if input.dtype not in (jnp.float16, jnp.float32, jnp.float64):
        from .pointwise import legacy_name
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {legacy_name(input)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return jax.lax.complex(input[..., 0], input[..., 1])


def _bind():
    from .._tensor import Tensor
    Tensor.diagflat = diagflat


_bind()
PLAIN = ["diagflat", "combinations", "unravel_index"]
