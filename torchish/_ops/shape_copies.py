"""Shape ops that copy: clone, contiguous, cat / stack and their spellings (hstack, ...,
atleast_*), flip, roll, rot90, repeat, tile, repeat_interleave. The views are in `shape.py`."""
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, contiguous_format, preserve_format
from .._memory_layout import lay_out, layout_strides, like_layout
from ..autograd import grad_mode
from .registry import Promote, op
from .arg_parser import REQUIRED, numpy_axis
from .errors import int_list_error
from .shape import (_int_list_error, _int_sequence, _saved_int_list, _sizes, _unsq, _wrap_dim,
                    tensor_elements)

P = Promote


@op("clone", promote=P.NONE, grad_fn="CloneBackward0", saves=(), function=False,
    method=False)
def _clone(input):
    return jnp.copy(input)


def clone(input, *, memory_format=preserve_format):
    # preserve_format keeps a dense input's strides (`x.t().clone()` is transposed too)
    return like_layout(_clone(input), input, memory_format)


def contiguous(input, memory_format=contiguous_format):
    if memory_format is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if input.is_contiguous(memory_format=memory_format):
        return input
    return clone(input, memory_format=memory_format)


def _cat_dim(tensors, dim):
    shapes = [x.shape for x in tensors if not (x.ndim == 1 and x.shape[0] == 0)]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    if not shapes:
        return 0, shapes
    ref = shapes[0]
    d = _wrap_dim(dim, len(ref))
    for i, s in enumerate(shapes):
        if len(s) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} "
                               f"and {len(s)}")
        for k in range(len(ref)):
            if k != d and s[k] != ref[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref[k]} but got size {s[k]} for tensor "
                                   f"number {i} in the list.")
    return d, shapes


@op("cat", grad_fn="CatBackward0", saves=(), aliases=("concat", "concatenate"), method=False)
def _cat(tensors, dim=0):
    d, _ = _cat_dim(tensors, dim)
    parts = [x for x in tensors if not (x.ndim == 1 and x.shape[0] == 0)]
    if not parts:
        return tensors[0]
    return jnp.concatenate(parts, axis=d)


@op(grad_fn="StackBackward0", saves=(), method=False)
def stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors[1:], 1):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(x.shape)} at "
                               f"entry {i}")
    return jnp.stack(tensors, axis=_unsq(tensors[0].ndim, dim))


def _tensor_list(name, tensors):
    """A `Tensor[] tensors` argument as PyTorch's parser and kernel check it."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    tensor_elements(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors):
    _tensor_list("hstack", tensors)
    tensors = [atleast_1d(x) for x in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    _tensor_list("vstack", tensors)
    return cat([atleast_2d(x) for x in tensors], 0)


def row_stack(tensors):
    _tensor_list("row_stack", tensors)
    return vstack(tensors)


def dstack(tensors):
    _tensor_list("dstack", tensors)
    return cat([atleast_3d(x) for x in tensors], 2)


def column_stack(tensors):
    _tensor_list("column_stack", tensors)
    return hstack([x.reshape(-1, 1) if x.ndim <= 1 else x for x in tensors])


def _atleast(one, args):
    """torch.atleast_Nd(tensor) -> tensor; (*tensors) or (sequence of tensors) -> tuple."""
    if len(args) == 1 and not isinstance(args[0], (list, tuple)):
        return one(args[0])
    seq = args[0] if len(args) == 1 else args
    tensor_elements(seq)
    return tuple(one(x) for x in seq)


def _atleast_1d(x):
    return x.reshape(1) if x.ndim == 0 else x


def _atleast_2d(x):
    if x.ndim == 0:
        return x.reshape(1, 1)
    return x.unsqueeze(0) if x.ndim == 1 else x


def _atleast_3d(x):
    if x.ndim == 0:
        return x.reshape(1, 1, 1)
    if x.ndim == 1:
        return x.unsqueeze(0).unsqueeze(-1)
    if x.ndim == 2:
        return x.unsqueeze(-1)
    return x


def atleast_1d(*tensors):
    return _atleast(_atleast_1d, tensors)


def atleast_2d(*tensors):
    return _atleast(_atleast_2d, tensors)


def atleast_3d(*tensors):
    return _atleast(_atleast_3d, tensors)


@op(promote=P.NONE, grad_fn="FlipBackward0", saves=())
def flip(input, *dim_args, dims=None):
    """torch.flip(input, dims); Tensor.flip also takes the dims as varargs."""
    if dims is None and not dim_args:   # (dims has no default in PyTorch: `flip([])` is fine)
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = _sizes(dim_args) if dims is None else _sizes((dims,))
    axes = [_wrap_dim(d, input.ndim) for d in dims]
    if len(set(axes)) != len(axes):
        dup = next(a for i, a in enumerate(axes) if a in axes[:i])
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return jnp.flip(input, tuple(axes)) if axes and input.ndim else input


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@op(promote=P.NONE, grad_fn="RollBackward0", saves=())
def roll(input, shifts, dims=None):
    sh = shifts if isinstance(shifts, tuple) else (shifts,)
    dm = () if dims is None else dims if isinstance(dims, tuple) else (dims,)
    if not sh:
        raise RuntimeError("`shifts` required")
    if dm and len(sh) != len(dm):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:"
                           f"{len(dm)}")
    if input.ndim == 0 and dm:
        raise IndexError(f"Dimension specified as {dm[0]} but tensor has no dimensions")
    dims = dims if dims is None else tuple(_wrap_dim(d, input.ndim) for d in dm)
    if dims is None and len(sh) > 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
    if dims is None:
        return jnp.roll(input.reshape(-1), shifts).reshape(input.shape)
    return jnp.roll(input, shifts, dims)


def _rot90_dims(ndim, dims):
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    a, b = (_wrap_dim(d, ndim) for d in dims)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and "
                           f"dim1 = {b}")
    return a, b


@op("rot90", promote=P.NONE, grad_fn="Rot90Backward0", saves=(), function=False,
    method=False)
def _rot90(input, k=1, dims=(0, 1)):
    return jnp.rot90(input, k, axes=_rot90_dims(input.ndim, dims))


def rot90(input, k=1, dims=(0, 1)):
    out = _rot90(input, k, dims)
    if k % 4 == 0:  # (a contiguous clone)
        return out
    # ATen flips (a copy laid out as the input) and, for a quarter turn, transposes that
    # copy in place: the result's strides are the copy's with the two dims swapped
    stride = list(layout_strides(input))
    if k % 2:
        a, b = _rot90_dims(input.ndim, dims)
        stride[a], stride[b] = stride[b], stride[a]
    return lay_out(out, stride)


@op(promote=P.NONE, grad_fn="RepeatBackward0", saves=(), function=False,
    saved_as={"repeats": _saved_int_list("repeats")})
def repeat(input, *repeats):
    sizes = _sizes(repeats)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.ndim) + input.shape)
    if min(sizes, default=0) < 0:
        out = [n * r for n, r in zip(x.shape, sizes)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(o for o in out if o < 0)}: {out}")
    return jnp.tile(x, sizes)


def tile(input, *dim_args, dims=None, _position=2):
    dims = _sizes(dim_args) if dims is None else _sizes((dims,))
    if not _int_sequence(dims):
        raise _int_list_error("tile", "dims", dims[0] if len(dims) == 1 else dims, _position)
    dims = (1,) * (input.ndim - len(dims)) + tuple(dims)
    return repeat(input, dims)


def cat(tensors, dim=0, *, axis=REQUIRED, out=None):
    dim = numpy_axis("cat", dim, axis, 0)
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    return _cat(tensors, dim)


concat = concatenate = cat


@op("repeat_interleave", promote=P.NONE, grad_fn="RepeatInterleaveBackward0", saves=(),
    tensors=("input",))
def _repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if not isinstance(repeats, int):
        repeats = np.asarray(repeats, np.int64)  # static counts: the output shape is known
    if dim is None:
        return jnp.repeat(input.reshape(-1), repeats)
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not isinstance(repeats, int) and repeats.size not in (1, n):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.size} and input.size(0) = {n}")
    return jnp.repeat(input, repeats, axis=d) if input.ndim else jnp.repeat(
        input.reshape(1), repeats)


def _interleave_counts(counts, output_size=None):
    """The host-side values of a tensor of repeat counts, with ATen's checks in its order:
    dtype (its CPU kernel takes int32/int64 only), rank, sign, then `output_size`."""
    from .pointwise import legacy_name
    if counts.dtype not in (dt.int32, dt.int64):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{legacy_name(counts._data)}'")
    if counts.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    values = counts.tolist()
    if min(values, default=0) < 0:
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != sum(values):
        raise RuntimeError("allocated size does not match required size")
    return values


def _interleave_size_check(input, repeats, dim):
    """A tensor of counts for `input`: 0-d or one per element along `dim` (or one for all)."""
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    d = 0 if dim is None else _wrap_dim(dim, input.ndim)
    n = input.numel() if dim is None else input.shape[d]
    if repeats.ndim == 1 and repeats.shape[0] not in (1, n):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")


def _interleave_parser_error(method, repeats, dim, output_size):
    """The parser's TypeError for a call that names no tensor to repeat (the arguments it
    had given as keywords: the only way to leave `input` out)."""
    from .overloads import parser_error
    given = {k: v for k, v in (("repeats", repeats), ("dim", dim),
                               ("output_size", output_size)) if v is not None}
    return parser_error("repeat_interleave", method, (), given)


def repeat_interleave(input=None, repeats=None, dim=None, *, output_size=None):
    """Repeat counts given as a tensor are read on the host: they decide the output shape."""
    from .._tensor import Tensor
    if input is None:   # repeat_interleave(repeats=counts): its one-tensor overload
        if not isinstance(repeats, Tensor) or dim is not None:
            raise _interleave_parser_error(False, repeats, dim, output_size)
        input, repeats = repeats, None
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        from .creation_ranges import arange
        counts = input
        values = _interleave_counts(counts, output_size)
        return _repeat_interleave(arange(counts.numel(), dtype=counts.dtype,
                                         device=counts.device), tuple(values), 0)
    if dim is not None and isinstance(input, Tensor) and input.ndim == 0:
        # PyTorch's kernel: a tensor of counts reads the dim's size; a number unsqueezes at
        # the wrapped dim + 1, past a 0-d tensor's range
        if isinstance(repeats, Tensor):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{_wrap_dim(dim, 0) + 1})")
    if isinstance(repeats, int) and repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if isinstance(input, Tensor) and input.requires_grad and grad_mode.is_grad_enabled():
        return _repeat_interleave_steps(input, repeats, dim, output_size)
    if isinstance(repeats, Tensor):
        _interleave_size_check(input, repeats, dim)
        values = _interleave_counts(repeats.reshape(-1))
        n = input.numel() if dim is None else input.shape[_wrap_dim(dim, input.ndim)]
        repeats = tuple(values * n if len(values) == 1 else values)
        if output_size is not None and output_size != sum(repeats):
            raise RuntimeError("allocated size does not match required size")
    elif output_size is not None:
        n = input.numel() if dim is None else input.shape[_wrap_dim(dim, input.ndim)]
        if output_size != n * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                               f"{n * repeats} but got {output_size}")
    return _repeat_interleave(input, repeats, dim)


def _repeat_interleave_steps(input, repeats, dim, output_size):
    """PyTorch's repeat_interleave op by op (the graph it records): a count per element
    selects with index_select; one count for all expands a new dim and flattens it away."""
    from .._tensor import Tensor
    if dim is None:
        input, dim = input.flatten(), 0
    if isinstance(repeats, Tensor):
        d = _wrap_dim(dim, input.ndim)
        n = input.shape[d] if input.ndim else 1
        if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
            repeats = repeats.reshape(1).expand(n)
        elif repeats.ndim == 1:
            if repeats.shape[0] != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {repeats.shape[0]} and "
                                   f"input.size({d}) = {n}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return input.index_select(d, repeat_interleave(repeats, output_size=output_size))
    d = _wrap_dim(dim, max(input.ndim, 1)) if input.ndim else 0
    input = input.unsqueeze(d + 1)
    shape = list(input.shape)
    shape[d + 1] = repeats
    if output_size is not None and output_size != input.shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{input.shape[d] * repeats} but got {output_size}")
    return input.expand(shape).clone().flatten(d, d + 1)


def _tile_method(self, *dim_args, dims=None):
    if not dim_args and dims is None:
        raise TypeError('tile() missing 1 required positional arguments: "dims"')
    if dims is not None and not isinstance(dims, (tuple, list)):   # (by keyword: a sequence)
        raise int_list_error("tile", "dims", type(dims), None, "")
    # (PyTorch counts a method's arguments after self)
    return tile(self, *dim_args, dims=dims, _position=1)


def _tile_function(input, dims):
    """torch.tile: unlike the method, `dims` is one sequence (an int is refused)."""
    if not isinstance(dims, (tuple, list)):
        raise int_list_error("tile", "dims", type(dims), None, " (position 2)")
    return tile(input, dims)


def _repeat_interleave_method(self, repeats=None, dim=None, *, output_size=None):
    # (the method has no counts-only form: `x.repeat_interleave()` is the parser's error)
    if repeats is None:
        raise _interleave_parser_error(True, repeats, dim, output_size)
    return repeat_interleave(self, repeats, dim, output_size=output_size)


def _bind():
    """Bind the Python-level copying functions above as Tensor methods."""
    _tile_method.__qualname__ = "tile"   # (Python's TypeErrors name it: `tile() got an ...`)
    Tensor.tile = _tile_method
    _repeat_interleave_method.__qualname__ = "repeat_interleave"
    Tensor.repeat_interleave = _repeat_interleave_method
    for n in ("contiguous", "clone", "fliplr", "flipud", "rot90"):
        setattr(Tensor, n, globals()[n])


_bind()

FUNCTION_FORMS = {"tile": _tile_function}   # (torch.X differing from Tensor.X)
PLAIN = ["clone", "cat", "concat", "concatenate", "repeat_interleave", "hstack", "vstack",
         "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d", "atleast_3d", "fliplr",
         "flipud", "tile", "rot90"]
