"""PyTorch's `*_copy` functions (`torch.permute_copy`, `torch.view_copy`, ...): the value of a
view op as a new tensor that owns its storage. Each runs its view op's body as an ordinary
computing op and records `<view node>_copy` (PermuteBackward0_copy), as PyTorch's functionalized
variants do; the gradient is the view's."""
import jax
import jax.numpy as jnp
import numpy as np

from .._storage import root_storage
from ..autograd.grad_mode import is_grad_enabled
from .opdef import REGISTRY, Promote as P, omitted
from .declare import op
from .shape import _wrap_dim, check_strided


def _body(view_op):
    return REGISTRY[view_op].body


_permute, _view, _expand, _t = _body("permute"), _body("view"), _body("expand"), _body("t")
_transpose, _unsqueeze, _squeeze = _body("transpose"), _body("unsqueeze"), _body("squeeze")
_diagonal, _unfold, _unbind, _split = (_body("diagonal"), _body("unfold"), _body("unbind"),
                                       _body("split"))
_as_strided = _body("as_strided")


def _copy(grad_fn):
    """Declare a function-only copy variant (PyTorch binds no Tensor method for them)."""
    return op(promote=P.NONE, grad_fn=grad_fn, saves=(), method=False, tensors=("input",))


@_copy("PermuteBackward0_copy")
def permute_copy(input, dims):
    return _permute(input, *dims)


@_copy("ViewBackward0_copy")
def view_copy(input, size):
    return _view(input, *size)


@_copy("ExpandBackward0_copy")
def expand_copy(input, size, *, implicit=False):
    return _expand(input, *size)


@_copy("TBackward0_copy")
def t_copy(input):
    return _t(input)


@_copy("TransposeBackward0_copy")
def transpose_copy(input, dim0, dim1):
    return _transpose(input, dim0, dim1)


@_copy("UnsqueezeBackward0_copy")
def unsqueeze_copy(input, dim):
    return _unsqueeze(input, dim)


@_copy(lambda kinds, statics: REGISTRY["squeeze"].grad_fn(kinds, statics) + "_copy")
def squeeze_copy(input, dim=omitted(None, nullable=False)):
    return _squeeze(input, dim)


@_copy("DiagonalBackward0_copy")
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return _diagonal(input, offset, dim1, dim2)


@_copy("UnfoldBackward0_copy")
def unfold_copy(input, dimension, size, step):
    return _unfold(input, dimension, size, step)


@_copy("UnbindBackward0_copy")
def unbind_copy(input, dim=0):
    return _unbind(input, dim)


@_copy("SplitBackward0_copy")
def split_copy(input, split_size, dim=0):
    return _split(input, split_size, dim)


@_copy("SplitWithSizesBackward0_copy")
def split_with_sizes_copy(input, split_sizes, dim=0):
    return _split(input, tuple(split_sizes), dim)


@_copy("AliasBackward0_copy")
def alias_copy(input):
    return input


def _select_at(shape, dim, index):
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {dim}")
    return d, index % shape[d]


@_copy("SelectBackward0_copy")
def select_copy(input, dim, index):
    d, i = _select_at(input.shape, dim, index)
    return jax.lax.index_in_dim(input, i, d, keepdims=False)


@_copy("SliceBackward0_copy")
def slice_copy(input, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, input.ndim)
    lo, hi, _ = slice(start, end, step).indices(input.shape[d])
    return jax.lax.slice_in_dim(input, lo, max(lo, hi), step, d)


def _strided_index(size, stride, offset):
    """Flat storage positions of a (size, stride, offset) layout."""
    idx = np.full(tuple(size), offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n) * st).reshape(shape)
    return idx


@op(promote=P.NONE, grad_fn="AsStridedBackward0_copy", saves=(), method=False,
    function=False, tensors=("input",), saved_as={"geometry": None})
def _as_strided_copy(input, size, stride, storage_offset=None, geometry=None):
    return _as_strided(input, size, stride, storage_offset, geometry)


def as_strided_copy(input, size, stride, storage_offset=None):
    """(exported by `_aten_aliases`) `as_strided` over the input's own storage, copied."""
    size, stride = tuple(size), tuple(stride)
    offset = input.storage_offset() if storage_offset is None else storage_offset
    check_strided(size, stride, offset, input.dtype.itemsize,
                  root_storage(input._storage).nbytes())
    geometry = None if input._view is None else (
        tuple(input.shape), input.stride(), input.storage_offset())
    return _as_strided_copy(input, size, stride, storage_offset, geometry)


@_copy("ViewAsRealBackward0_copy")
def view_as_real_copy(input):
    if not jnp.iscomplexobj(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return jnp.stack([jnp.real(input), jnp.imag(input)], axis=-1)


def _complex_check(input):
    if not input.dtype.is_floating_point or input.dtype.itemsize < 4:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype._legacy}")
    if not input.ndim:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")


@op(promote=P.NONE, grad_fn="ViewAsComplexBackward0_copy", saves=(), method=False,
    function=False, tensors=("input",), differentiable=False)
def _view_as_complex_copy(input):
    return jax.lax.complex(input[..., 0], input[..., 1])


def view_as_complex_copy(input):
    """(exported by `_aten_aliases`: PyTorch refuses a complex result that would need grad)"""
    _complex_check(input)
    return _view_as_complex_copy(input)
