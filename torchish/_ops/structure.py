"""Matrix structure and differences: tril/triu, diag/diag_embed, block_diag, diff and
cartesian_prod (re-exported by `shape.py`, whose PLAIN list publishes the Python-level ones)."""
import builtins
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .._views import CONJ, NEG
from ..autograd import grad_mode
from .composite import composite
from .errors import type_name
from .registry import Promote, op
from .shape import _meta, _wrap_dim, meshgrid, retype
from .shape_copies import stack
from .unsigned_support import refuse

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


def _diag_check(input):
    if input.ndim not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@op(promote=P.NONE, grad_fn="DiagBackward0", saves=())
def diag(input, diagonal=0):
    _diag_check(input)
    return jnp.diag(input, diagonal)


@op(promote=P.NONE, grad_fn="DiagonalBackward0_copy", saves=(), function=False, method=False)
def _diagonal_copy(input, offset=0):
    return jnp.diagonal(input, offset)


def _diag_steps(input, diagonal=0):
    """PyTorch's diag: diag_embed of a vector, diagonal_copy of a matrix."""
    _diag_check(input)
    return diag_embed(input, diagonal) if input.ndim == 1 else _diagonal_copy(input, diagonal)


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
    grad_fn=lambda kinds, statics: "torch::autograd::CopySlices" if statics["increasing"]
    else "FlipBackward0")
def vander(x, N=None, increasing=False):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    return jnp.vander(x, x.shape[0] if N is None else N, increasing=increasing)


def _diff_check(input, n, dim, prepend, append):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    for other in (prepend, append):
        if other is None:
            continue
        if other.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for i in builtins.range(input.ndim):
            if i != d and other.shape[i] != input.shape[i]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input.shape[i]}, but got tensor.size({i}) = {other.shape[i]}")
    return d


@op(grad_fn="DiffBackward0", saves=(), tensors=("input", "prepend", "append"))
def diff(input, n=1, dim=-1, prepend=None, append=None):
    d = _diff_check(input, n, dim, prepend, append)
    if n == 0:   # PyTorch ignores prepend and append then
        return input
    x = jnp.concatenate([p for p in (prepend, input, append) if p is not None], axis=d)
    for _ in range(n):
        a = jax.lax.slice_in_dim(x, 1, x.shape[d], axis=d)
        b = jax.lax.slice_in_dim(x, 0, x.shape[d] - 1, axis=d)
        x = a != b if x.dtype == jnp.bool_ else a - b
    return x


def _diff_steps(input, n=1, dim=-1, prepend=None, append=None):
    """PyTorch's diff op by op: cat the ends on, then `n` differences of narrowed slices
    (n = 0 copies the input, ends or not, into zeros: CopyBackwards)."""
    from .creation import zeros_like
    from .shape_copies import cat
    d = _diff_check(input, n, dim, prepend, append)
    if n == 0:
        return zeros_like(input).copy_(input)
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, input, append) if t is not None], d)
    length = x.shape[d] - 1
    for _ in builtins.range(builtins.min(n, x.shape[d])):
        x = x.narrow(d, 1, length) - x.narrow(d, 0, length)
        length -= 1
    return x


@op("_block_diag", grad_fn="BlockDiagBackward0", saves=(), function=False, method=False)
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
    from .shape import tensor_elements
    tensor_elements(tensors)
    return _block_diag(list(tensors))


def cartesian_prod(*tensors):
    from .shape import tensor_elements
    tensor_elements(tensors)
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
    from .creation_data import tensor
    if input.dtype in dt.SHELL:
        if input.numel():
            refuse("combinations", input.dtype)
        return input.new_empty((0, r))
    if input.requires_grad and grad_mode.is_grad_enabled():
        # PyTorch's graph: r expanded grids of the input, each masked by the index order
        n = input.shape[0]
        grids = np.meshgrid(*[np.arange(n)] * r, indexing="ij")
        ordered = np.less_equal if with_replacement else np.less
        mask = np.ones((n,) * r, bool)
        for a, b in zip(grids, grids[1:]):
            mask &= ordered(a, b)
        mask = tensor(mask)
        return stack([g.masked_select(mask) for g in meshgrid(*[input] * r, indexing="ij")],
                     1)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(builtins.range(input.shape[0]), r)), np.int64).reshape(-1, r)
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
        from .creation_data import tensor
        indices = tensor(indices)
    if indices.dtype.is_floating_point or indices.dtype.is_complex:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    return _unravel_index(indices, shape)


@op(promote=P.NONE, differentiable=False)
def nonzero_static(input, *, size, fill_value=-1):
    """nonzero's indices in a (size, input.dim()) result of a fixed size (so it also traces):
    cut to `size` rows, or padded with rows of `fill_value`."""
    for name, value in (("size", size), ("fill_value", fill_value)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"nonzero_static(): argument '{name}' must be int, not "
                            f"{type_name(type(value))}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    return jnp.stack(jnp.nonzero(input, size=size, fill_value=fill_value), axis=1)


def _view_as_real_meta(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input._view is not None and input._view.bits():   # (the bit would be lost)
        from .conj_views import refuse_bits
        refuse_bits(input, "view_as_real")
    v = _meta(input)
    return (v.size + (2,), tuple(2 * st for st in v.stride) + (1,), 2 * v.offset)


def _view_as_complex_meta(input):
    if input.dtype not in (dt.float16, dt.float32, dt.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype._legacy}")
    v = _meta(input)
    if not v.size:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if v.size[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if v.stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % 2 for st in v.stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if v.offset % 2:
        raise RuntimeError("Tensor must have a storage offset divisible by 2")
    if input.dtype is dt.float16:
        raise NotImplementedError("torchish: complex32 (view_as_complex of a half tensor) is "
                                  "not supported")
    return v.size[:-1], tuple(st // 2 for st in v.stride[:-1]), v.offset // 2


# The view ops record as any view (grad_fn, `_base`, creation meta) with a stand-in "retype"
# step giving the view's size and strides; `_retyped` then points the result at its bytes.
@op(promote=P.NONE, grad_fn="ViewAsRealBackward0", saves=(), function=False, method=False,
    view=lambda input: [("retype",) + _view_as_real_meta(input)])
def _view_as_real(input):
    return jnp.stack([jnp.real(input), jnp.imag(input)], -1)


@op(promote=P.NONE, grad_fn="ViewAsComplexBackward0", saves=(), function=False, method=False,
    view=lambda input: [("retype",) + _view_as_complex_meta(input)])
def _view_as_complex(input):
    return jax.lax.complex(input[..., 0], input[..., 1])


_REAL = {np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX = {v: k for k, v in _REAL.items()}


def _retyped(out, input, np_dtype):
    v = out._view
    base = out._base
    retype(out, input._storage, base, np_dtype, v.size, v.stride, v.offset)
    node = out._grad_fn
    if node is not None:  # recorded while `out` still had its input's dtype
        node._out_avals = ((out.shape, out.dtype),)
    view = input._view
    if view is not None and view.bits() & NEG:   # PyTorch's dtype views keep the negative bit
        from .conj_views import set_bits
        set_bits(out, neg=True)
    return out


def view_as_real(input):
    """The real and imaginary parts of a complex tensor as a last dimension of size 2: a view
    sharing its storage (writes through either are seen by the other)."""
    out = _view_as_real(input)
    return _retyped(out, input, _REAL[input._storage.data.dtype])


def view_as_complex(input):
    """A float tensor with a last dimension of size 2 read as complex: a view sharing its
    storage."""
    out = _view_as_complex(input)
    return _retyped(out, input, _COMPLEX[input._storage.data.dtype])


def _complex_part(input, index):
    # PyTorch's real/imag of a complex tensor are views: select(-1, k) of view_as_real, so
    # writes through them reach the tensor, and grad_fn is SelectBackward0; of a conj view,
    # the conjugate bit is cleared first (`_conj`) and imag gets the negative bit on the real
    # view (imag(conj(z)) = -imag(z))
    if not input.dtype.is_complex:
        if index == 0:
            return input   # the tensor itself, as PyTorch
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    view = input._view
    if view is not None and view.bits() & CONJ:
        from .conj_views import _conj, _neg_view
        pair = view_as_real(_conj(input))
        if index == 1:
            pair = _neg_view(pair)
    else:
        pair = view_as_real(input)
    return pair.select(-1, index)


def real(input):
    """The real part of a complex tensor as a view (a real tensor itself)."""
    return _complex_part(input, 0)


def imag(input):
    """The imaginary part of a complex tensor as a view."""
    return _complex_part(input, 1)


def _bind():
    from .._tensor import Tensor
    Tensor.diagflat = diagflat
    Tensor.real = property(real)
    Tensor.imag = property(imag)


_bind()
PLAIN = ["diagflat", "combinations", "unravel_index", "view_as_real", "view_as_complex", "real",
         "imag"]
# ops PyTorch composes of others: with a graph to record, they record PyTorch's inner nodes
for _name, _steps in (("diag", _diag_steps), ("diff", _diff_steps)):
    _fns = composite(_name, _steps)
    globals().update(_fns)
    PLAIN += list(_fns)
