"""Shape ops that view. Views (view, transpose, select, split, ...) alias their input's
storage: each declares `view=`, a function giving the view steps (see `_storage.py`) for the
call. The splitting views (split, chunk, unbind, ...) are in `shape_split.py`, the ops that
copy (clone, cat, stack, flip, repeat, ...) in `shape_copies.py`."""
import math

import jax.numpy as jnp
import numpy as np

from .._storage import RetypedStorage, root_storage
from .._views import View, _apply_steps, base_view, contiguous_strides, view_strides
from .. import _dtype as dt
from .._dtype import dtype as _dtype_cls
from .._tensor import Tensor
from ..autograd.saved_tensors import ABSENT
from .declare import parsed
from .registry import Promote, given, omitted, op
from .argcheck import _is_index, python_level_ints
from .errors import int_list_error, tensor_element_error

P = Promote


def _wrap_dim(d, ndim):
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _sizes(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _saved_int_list(param):
    """`saved_as` for a `*sizes` argument: the int list PyTorch saves (one sequence given is
    its elements; a negative int reads as its unsigned 64-bit pattern)."""
    return lambda **args: tuple(int(v) % 2 ** 64 for v in _sizes(args[param]))


def infer_shape(shape, numel, name="view", given=None):
    """`shape` with a -1 inferred; `given`: reshape's sizes as passed, for its errors."""
    for i, s in enumerate(shape):
        if given is not None and s.__class__ is not int and not (
                _is_index(s) or i and s.__class__ is bool):
            raise _reshape_error(given, i, s)
        if isinstance(s, (float, np.floating)):   # (int() would truncate: `x.view(n / 2, 3)`)
            raise int_list_error(name, "size", type(s), i, "")
    shape = [int(s) for s in shape]
    inferred = False
    for i, s in enumerate(shape):
        if s == -1:
            if inferred:
                raise RuntimeError("only one dimension can be inferred")
            inferred = True
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _meta(t):
    return t._view or base_view(t._storage.data.shape)


# ---- view / reshape ----------------------------------------------------------------------

def _view_steps(t, shape):
    shape = infer_shape(_sizes(shape), t.numel())
    v = _meta(t)
    if view_strides(v.size, v.stride, shape) is None:
        return None
    return [("reshape", shape)]


def _view_only(t, *shape):
    steps = _view_steps(t, shape)
    if steps is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return steps


@op(promote=P.NONE, grad_fn="ViewBackward0", saves=(), view=_view_only, function=False)
def view(input, *shape):
    return jnp.reshape(input, infer_shape(_sizes(shape), input.size))


_view_shape = view
_NOT_SIZES = (bool, float)


def _view_method(self, *shape, dtype=None, **unknown):
    """`Tensor.view(*shape)`, or `Tensor.view(dtype)`: the same bytes read as `dtype`."""
    if "size" in unknown and not shape:   # (the sizes as one sequence, by keyword)
        shape = (unknown.pop("size"),)
    if unknown:   # (the parser's word, with its overloads)
        from .overloads import parser_error
        given = {} if dtype is None else {"dtype": dtype}
        raise parser_error("view", True, list(shape), {**given, **unknown})
    if dtype is None:
        if not shape:   # (neither overload: the parser lists them)
            from .overloads import parser_error
            raise parser_error("view", True, [], {})
        if len(shape) != 1 or shape[0].__class__ is not _dtype_cls:
            sizes = _sizes(shape)
            if sizes and sizes[0].__class__ is not int and not _is_index(sizes[0]):
                from .overloads import parser_error   # (its overload pick reads the first)
                raise parser_error("view", True, list(shape), {})
            if any(s.__class__ is not int for s in sizes) and _bad_int(sizes) is not None:
                # (before the plan cache, whose key cannot tell (2, 3.0) from (2, 3))
                bad = _bad_int(sizes)
                raise int_list_error("view", "size", type(sizes[bad]), bad, "")
            return _view_shape(self, *shape)
        dtype = shape[0]
    elif shape:
        raise TypeError("view() received an invalid combination of arguments")
    return view_dtype(self, dtype)


# ---- dtype views: the same bytes as another dtype (see `_storage.RetypedStorage`) ---------

def view_dtype(self, dtype):
    """PyTorch's `view(dtype)`: an alias over the same storage and version counter, but, as
    PyTorch's, not differentiable and nobody's view (`_base` None, no grad_fn)."""
    if self._view is not None and self._view.bits():   # (the bit would be lost)
        from .conj_views import refuse_bits
        refuse_bits(self, "view")
    old = self.dtype
    v = _meta(self)
    size, stride, offset = v.size, v.stride, v.offset
    if dtype is not old and dtype.itemsize != old.itemsize:
        a, b = old.itemsize, dtype.itemsize
        what = f"to view {old._legacy} as {dtype._legacy} (different element sizes)"
        if not size:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if stride[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {stride[-1]}")
        if a > b:
            r = a // b
            size = size[:-1] + (size[-1] * r,)
            stride = tuple(st * r for st in stride[:-1]) + (1,)
            offset *= r
        else:
            r = b // a
            if size[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got "
                                   f"{size[-1]}")
            if offset % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, "
                                   f"but got {offset}")
            for d, st in enumerate(stride[:-1]):
                if st % r:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {r} {what}, "
                                       f"but got {st}")
            size = size[:-1] + (size[-1] // r,)
            stride = tuple(st // r for st in stride[:-1]) + (1,)
            offset //= r
    from .._tensor import _alias
    out = _alias(self)
    out._base = None
    out._view_vc = None
    if dtype is not old:
        retype(out, self._storage, None, dtype.np, size, stride, offset)
    return out


def retype(t, storage, base, np_dtype, size, stride, offset):
    """Make `t` read the bytes of `storage` as `np_dtype`, laid out `size/stride/offset` (in
    elements of `np_dtype`). `base`: the tensor `t` is a view of (its steps must also read `t`
    from `base`'s storage), or None."""
    anchor = base._storage if base is not None else storage
    root = root_storage(anchor)
    whole = root.data.size * root.data.dtype.itemsize // np_dtype.itemsize
    full = offset == 0 and math.prod(size) == whole and all(
        st == c or n == 1 for n, st, c in zip(size, stride, contiguous_strides(size)))
    if anchor.data.dtype == np_dtype:
        new, steps = anchor, []
    else:
        new = RetypedStorage(root, np_dtype, size if full else (whole,))
        steps = [("dtype", new.dtype, new.shape)] if base is not None else []
    shape = new.shape if type(new) is RetypedStorage else new.data.shape
    if not (full and tuple(size) == shape):
        if offset == 0 and tuple(size) == shape and tuple(stride) == contiguous_strides(size):
            pass
        elif all(st == c or n == 1 for n, st, c in
                 zip(size, stride, contiguous_strides(size))):
            # contiguous from `offset`: a slice of the flat array, reshaped
            numel = math.prod(size)
            if offset == 0 and numel == math.prod(shape):
                steps.append(("reshape", tuple(size)))
            elif len(shape) != 1:
                steps.append(("reshape", (math.prod(shape),)))
            if not (offset == 0 and numel == math.prod(shape)):
                steps.append(("slice", 0, offset, offset + numel, 1))
                steps.append(("reshape", tuple(size)))
        else:
            steps.append(("as_strided", tuple(size), tuple(stride), offset))
    t._storage = new
    t._view = View(tuple(steps), tuple(size), tuple(stride), offset) \
        if steps or base is not None else None
    t._cache, t._cache_base = None, None
    return t


@op(promote=P.NONE, grad_fn="UnsafeViewBackward0", saves=(), function=False, method=False)
def _reshape_copy(input, shape):
    return jnp.reshape(input, shape)


@op(promote=P.NONE, grad_fn="ReshapeAliasBackward0", saves=(),
    view=lambda t, shape: _view_only(t, shape),
    function=False, method=False)
def _reshape_alias(input, shape):
    return jnp.reshape(input, shape)


@op(promote=P.NONE, grad_fn="torch::autograd::Identity", saves=(),
    view=lambda t: _view_only(t, t.shape), function=False, method=False)
def _fw_primal(input):
    """forward_ad.unpack_dual's primal: a view without the tangent."""
    return input


def reshape(input, *sizes, shape=None):
    if shape is not None:   # (the sizes as one sequence, by keyword)
        if sizes:
            raise TypeError("reshape() got multiple values for argument 'shape'")
        sizes = (shape,)
    elif not sizes:   # (PyTorch's parser: `shape` is required, `x.reshape()` refused)
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    shape = infer_shape(_sizes(sizes), input.numel(), "reshape", sizes)
    if _view_steps(input, shape) is not None:
        # PyTorch views a contiguous input (ViewBackward0) and aliases a strided one
        return view(input, shape) if input.is_contiguous() else _reshape_alias(input, shape)
    # PyTorch: clone(contiguous) then _unsafe_view, two nodes (CloneBackward0 first)
    return _reshape_copy(input.contiguous(), shape)


def _reshape_function(input, shape):
    """torch.reshape: unlike the method, `shape` is one sequence (an int is refused)."""
    if not isinstance(shape, (tuple, list)):
        raise int_list_error("reshape", "shape", type(shape), None, " (position 2)")
    return reshape(input, shape)


def _reshape_method(self, *sizes, shape=None):
    if shape is not None and not isinstance(shape, (tuple, list)):   # (by keyword: a sequence)
        raise int_list_error("reshape", "shape", type(shape), None, "")
    return reshape(self, *sizes, shape=shape)


def _reshape_error(given, i, value):
    """PyTorch's TypeError for reshape's size `value` at `i` that is no int; `given`: the
    sizes as passed (several, or one sequence or value). As a function, `shape` is the
    second argument (the call's positional count tells)."""
    from .errors import _entry_name, positional_count_of_call
    method = positional_count_of_call(_entry_name()[1]) != len(given) + 1
    if i == 0 and len(given) > 1:
        taken = 1 if method else 2
        return TypeError(f"reshape() takes {taken} positional argument{'s' * (not method)} but "
                         f"{len(given) + taken - 1} were given")
    sequence = i or isinstance(given[0], (tuple, list))
    return int_list_error("reshape", "shape", type(value), i if sequence else None,
                          f" (position {2 - method})")


def view_as(input, other):
    if not isinstance(other, Tensor):
        raise _not_tensor("view_as", other)
    return view(input, other.shape)


def _not_tensor(name, other):
    """PyTorch's parser's TypeError for the method `name`'s `other` that is no Tensor."""
    from .errors import _entry_name, _keywords_of_call, type_name
    where = "" if "other" in _keywords_of_call(_entry_name()[1]) else " (position 1)"
    return TypeError(f"{name}(): argument 'other'{where} must be Tensor, not "
                     f"{type_name(type(other))}")


def reshape_as(input, other):
    if not isinstance(other, Tensor):
        raise _not_tensor("reshape_as", other)
    return reshape(input, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    if start_dim.__class__ is not int or end_dim.__class__ is not int:
        python_level_ints("flatten", ("start_dim", "end_dim"), (start_dim, end_dim))
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if input.ndim == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def ravel(input):
    # PyTorch: contiguous() then view(-1), so a strided input records CloneBackward0 first
    return view(input.contiguous(), (-1,))


def unflatten(input, dim, sizes):
    if not _int_sequence(sizes):
        raise _called_int_list_error("unflatten", "sizes", sizes, 3)
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:   # (wrapped as a scalar's dim, then its size cannot be read)
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {d} "
                           "but tensor has no dimensions")
    shape = input.shape
    sizes = [int(s) for s in _sizes(sizes)]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) <= 1 and min(sizes) >= -1 and (
            known != shape[d] if -1 not in sizes else (known == 0 or shape[d] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size "
                           f"of dim {d} ({shape[d]}) in the input tensor")
    new = shape[:d] + infer_shape(sizes, shape[d]) + shape[d + 1:]
    return view(input, new) if _view_steps(input, new) else reshape(input, new)


# ---- dims: permute, transpose, squeeze, unsqueeze, expand --------------------------------

def _perm(dims, ndim):
    dims = _sizes(dims)
    perm = tuple(_wrap_dim(d, ndim) for d in dims)
    if len(perm) != ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {ndim} is not equal to len(dims) = {len(perm)}")
    if len(set(perm)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return perm


@op(promote=P.NONE, grad_fn="PermuteBackward0", saves=(),
    saved_as={"dims": _saved_int_list("dims")},
    view=lambda t, *dims: [("permute", _perm(dims, t.ndim))])
def permute(input, *dims):
    return jnp.transpose(input, _perm(dims, input.ndim))


def _transpose_perm(ndim, dim0, dim1):
    perm = list(range(ndim))
    a, b = _wrap_dim(dim0, ndim), _wrap_dim(dim1, ndim)   # (a 0-dim input takes 0 and -1)
    if ndim:
        perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


@op(promote=P.NONE, grad_fn="TransposeBackward0", saves=(), aliases=("swapdims",),
    view=lambda t, dim0, dim1: [("permute", _transpose_perm(t.ndim, dim0, dim1))])
def transpose(input, dim0, dim1):
    return jnp.transpose(input, _transpose_perm(input.ndim, dim0, dim1))


@op(promote=P.NONE, grad_fn="TransposeBackward0", saves=(), tensors=("input",),
    view=lambda t, axis0, axis1: [("permute", _transpose_perm(t.ndim, axis0, axis1))])
def swapaxes(input, axis0, axis1):   # (transpose with numpy's parameter names)
    return transpose.body(input, axis0, axis1)


def _t_check(ndim):
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")
    return tuple(range(ndim))[::-1]


@op(promote=P.NONE, grad_fn="TBackward0", saves=(),
    view=lambda t: [("permute", _t_check(t.ndim))])
def t(input):
    return jnp.transpose(input, _t_check(input.ndim))


def _movedim_perm(ndim, source, destination):
    source = tuple(source) if isinstance(source, (tuple, list)) else (source,)
    destination = tuple(destination) if isinstance(destination, (tuple, list)) else (
        destination,)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({list(source)} dims) should contain the same number of dims as "
                           f"destination ({list(destination)} dims)")
    src = [_wrap_dim(d, ndim) for d in source]
    dst = [_wrap_dim(d, ndim) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if not ndim:   # (0 and -1 name the one dim a 0-dim tensor is taken to have)
        return ()
    order = [d for d in range(ndim) if d not in src]
    perm = [None] * ndim
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    return tuple(p if p is not None else next(it) for p in perm)


@op(promote=P.NONE, grad_fn="PermuteBackward0", saves=(), aliases=("moveaxis",), tensors=("input",),
    saved_as={"dims": lambda source, destination, input=None, **_: ABSENT if input is None
              else _movedim_perm(input.ndim, source, destination)},
    view=lambda t, source, destination: [("permute", _movedim_perm(t.ndim, source, destination))])
def movedim(input, source, destination):
    return jnp.transpose(input, _movedim_perm(input.ndim, source, destination))


def _squeeze_dims(shape, dim):
    if dim is None:
        return tuple(i for i, n in enumerate(shape) if n == 1)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return tuple(sorted({_wrap_dim(d, len(shape)) for d in dims} & {
        i for i, n in enumerate(shape) if n == 1}))


def _squeeze_name(kinds, statics):
    d = statics.get("dim")
    return "SqueezeBackward0" if not given(d) else (
        "SqueezeBackward2" if isinstance(d, tuple) else "SqueezeBackward1")


@op(promote=P.NONE, grad_fn=_squeeze_name, saves=(), inplace=False,
    view=lambda t, dim=None: [("squeeze", _squeeze_dims(t.shape, dim))])
def squeeze(input, dim=omitted(None, nullable=False)):
    return jnp.squeeze(input, _squeeze_dims(input.shape, dim))


def _unsq(ndim, dim):
    n = ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


@op(promote=P.NONE, grad_fn="UnsqueezeBackward0", saves=(),
    view=lambda t, dim: [("unsqueeze", _unsq(t.ndim, dim))])
def unsqueeze(input, dim):
    return jnp.expand_dims(input, _unsq(input.ndim, dim))


def _expand_shape(shape, sizes, dtype):
    sizes = _sizes(sizes)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({dt.type_name(dtype)}{{{list(shape)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i in reversed(range(len(sizes))):   # PyTorch checks from the last dim
        n = shape[i - lead] if i >= lead else 1
        s = sizes[i]
        if s == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out[i] = n
        elif n != 1 and s != n:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({n}) at non-singleton dimension {i}.  Target "
                               f"sizes: {list(sizes)}.  Tensor sizes: {list(shape)}")
    return tuple(out)


@op(promote=P.NONE, grad_fn="ExpandBackward0", saves=(),
    view=lambda t, *size, implicit=False: [("expand", _expand_shape(t.shape, size, t.dtype))])
def expand(input, *size, implicit=omitted(False)):
    # (`implicit` only marks an expand the tracer inserted: no effect on the result;
    # `omitted` keeps the plans of calls without it apart from those given it)
    return jnp.broadcast_to(input, _expand_shape(input.shape, size, dt.from_np(input.dtype)))


def expand_as(input, other):
    if not isinstance(other, Tensor):
        raise _not_tensor("expand_as", other)
    return expand(input, other.shape)


def broadcast_to(input, size):
    if not _int_sequence(size):
        raise _called_int_list_error("broadcast_to", "size", size, 2)
    return expand(input, size)


# ---- select / narrow / split / unbind / diagonal -------------------------------------------

def _select_step(shape, dim, index):
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    n = shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {d}")
    return ("select", d, index % n)


def select(input, dim, index):
    if dim.__class__ is not int or index.__class__ is not int:
        python_level_ints("select", ("dim", "index"), (dim, index))
    from .indexing import basic_view
    return basic_view(input, (_select_step(input.shape, dim, index),))


def _narrow_step(shape, dim, start, length):
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    n = shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but "
                         f"got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += shape[d]
    if not (0 <= start and start + length <= shape[d]):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({shape[d]}).")
    return ("slice", d, start, start + length, 1)


def narrow(input, dim, start, length):
    from .indexing import basic_view
    if dim.__class__ is not int or length.__class__ is not int or \
            start.__class__ in _NOT_SIZES:   # (start may be a 0-d tensor)
        python_level_ints("narrow", ("dim", "start", "length"), (dim, start, length), input)
    if hasattr(start, "item"):
        if start.ndim or start.dtype.is_floating_point or start.dtype.is_complex:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    return basic_view(input, (_narrow_step(input.shape, dim, start, length),))


def _int_list_error(name, param, value, position):
    """PyTorch's parser's TypeError for an `int[]` argument that is no sequence of ints."""
    where = f" (position {position})"
    if not isinstance(value, (list, tuple)):
        return int_list_error(name, param, type(value), None, where)
    bad = _bad_int(value)
    return int_list_error(name, param, type(value[bad]), bad, where)


def _called_int_list_error(name, param, value, position):
    """`_int_list_error` for a Python-level function here that is also a Tensor method, whose
    positions PyTorch counts without self (its call then passes one argument less)."""
    from .errors import _keywords_of_call, positional_count_of_call, user_frame
    frame = user_frame(2)
    method = (positional_count_of_call(frame) or 0) + len(_keywords_of_call(frame)) < position
    return _int_list_error(name, param, value, position - method)


def _int_sequence(value):
    return isinstance(value, (list, tuple)) and _bad_int(value) is None


def _bad_int(values):
    """The position of the first element of `values` PyTorch's parser refuses as an int: it
    reads the first element's type only, so a later bool passes as an int."""
    return next((i for i, v in enumerate(values)
                 if not (_is_index(v) or (i and isinstance(v, bool)))), None)


def _diag_step(ndim, offset, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return ("diagonal", offset, d1, d2)


@op(promote=P.NONE, grad_fn="DiagonalBackward0", saves=(),
    view=lambda t, offset=0, dim1=0, dim2=1: [_diag_step(t.ndim, offset, dim1, dim2)])
def diagonal(input, offset=0, dim1=0, dim2=1):
    return _apply_steps(input, [_diag_step(input.ndim, offset, dim1, dim2)])


def _as_strided_steps(t, size, stride, storage_offset=None, geometry=None):
    # relative to the storage: `extend` replaces the input's own steps by this one
    offset = t.storage_offset() if storage_offset is None else storage_offset
    check_strided(size, stride, offset, t.dtype.itemsize, root_storage(t._storage).nbytes())
    return [("as_strided", tuple(size), tuple(stride), offset)]


def _ints(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def check_strided(size, stride, offset, itemsize, nbytes):
    """PyTorch's checks of a size/stride/offset laid over a storage of `nbytes` bytes."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_ints(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else itemsize * (
        1 + offset + sum((n - 1) * st for n, st in zip(size, stride)))
    if need > nbytes:
        raise RuntimeError(
            f"setStorage: sizes {_ints(size)}, strides {_ints(stride)}, storage offset "
            f"{offset}, and itemsize {itemsize} requiring a storage size of {need} are out "
            f"of bounds for storage of size {nbytes}")


@op("as_strided", promote=P.NONE, grad_fn="AsStridedBackward0", saves=(), function=False,
    method=False, view=_as_strided_steps, saved_as={"geometry": None})
def _as_strided(input, size, stride, storage_offset=None, geometry=None):
    """`geometry`: the input's (size, stride, offset) when it is laid out over its storage
    other than as its whole array (a view); the gradient reaches the input elements that
    share a storage position with an output element (the others read no input element)."""
    if geometry is None:
        offset = storage_offset or 0
        return _apply_steps(input, [("as_strided", tuple(size), tuple(stride), offset)])
    offset = geometry[2] if storage_offset is None else storage_offset
    out = View((), tuple(size), tuple(stride), offset).index_map()
    held = View((), *geometry).index_map().reshape(-1)
    if not out.size or not held.size:
        return jnp.zeros(size, input.dtype)
    where = np.full(max(out.max(), held.max()) + 1, -1, np.int64)
    where[held] = np.arange(held.size)
    idx = where[out]
    return jnp.where(idx >= 0, input.reshape(-1)[np.maximum(idx, 0)], 0)


def as_strided(input, size, stride, storage_offset=None):
    geometry = None if input._view is None else (
        tuple(input.shape), input.stride(), input.storage_offset())
    return _as_strided(input, tuple(size), tuple(stride), storage_offset, geometry)


@op(promote=P.NONE, grad_fn="AliasBackward0", saves=(), function=False, method=False,
    view=lambda t, steps: list(steps))
def _view_steps_op(input, steps):
    return _apply_steps(input, steps)


def _unfold_geometry(shape, dimension, size, step):
    d = _wrap_dim(dimension, len(shape))
    n = shape[d] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return d, (n - size) // step + 1


def _unfold_view(t, dimension, size, step):
    """unfold is a view, of a view too (`x.unfold(2, k, k).unfold(3, k, k)` for patches)."""
    d, _ = _unfold_geometry(t.shape, dimension, size, step)
    return [("unfold", d, size, step)] if t.ndim else None


@op(promote=P.NONE, grad_fn="UnfoldBackward0", saves=(), function=False, view=_unfold_view)
def unfold(input, dimension, size, step):
    d, _ = _unfold_geometry(input.shape, dimension, size, step)
    if input.ndim == 0:
        return input.reshape(1)
    return _apply_steps(input, [("unfold", d, size, step)])


def tensor_elements(tensors):
    """PyTorch's parser on the elements of a TensorList (a `*tensors` one is argument 0 too)."""
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise tensor_element_error(i, 0, type(x))


def broadcast_shapes(*shapes):
    # PyTorch's Python reference: shapes are merged left to right and the first dimension that
    # does not fit the common shape so far is named, with the argument as it was passed
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in shapes:
        if not isinstance(shape, (tuple, list)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            elif shape[idx] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} "
                                   f"at {idx}! Mismatching argument at index {arg} had {shape}; "
                                   f"but expected shape should be broadcastable to {common}")
    from .._tensor import Size
    return Size(common)


def broadcast_tensors(*tensors):
    tensor_elements(tensors)
    from .errors import broadcast_error
    msg = broadcast_error([t.shape for t in tensors])   # the kernel's message, not the ref's
    if msg:
        raise RuntimeError(msg)
    shape = broadcast_shapes(*[t.shape for t in tensors])
    # a tensor already of the shape is returned itself, as PyTorch's
    return tuple(t if tuple(t.shape) == tuple(shape) else t.expand(shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    tensors = _sizes(tensors) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else tensors
    tensor_elements(tensors)
    if indexing is None:
        from .._warnings import warn_once   # (TORCH_WARN_ONCE, under PyTorch's Python wrapper)
        warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument.", at_user=False)
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", '
                           f'but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if any(t.dim() > 1 for t in tensors):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        view_shape = [1] * n
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape[pos] = -1
        out.append(t.reshape(view_shape).expand(shape))
    return tuple(out)


def _python_method(fn):
    """A copy of `fn` that Python's own TypeErrors name `Tensor.<name>()`."""
    import types
    method = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                                fn.__closure__)
    method.__kwdefaults__, method.__doc__ = fn.__kwdefaults__, fn.__doc__
    method.__qualname__ = "Tensor." + fn.__name__
    return method


def _bind_plain():
    """Bind the Python-level shape functions above as Tensor methods."""
    _view_method.__qualname__ = "view"   # (Python's TypeErrors name it: `view() got an ...`)
    Tensor.view = _view_method
    names = ["select", "narrow", "reshape", "view_as", "reshape_as", "flatten", "ravel",
             "unflatten", "expand_as", "broadcast_to", "as_strided"]
    for n in names:
        setattr(Tensor, n, globals()[n])
    _reshape_method.__qualname__ = _reshape_method.__name__ = "reshape"
    Tensor.reshape = _reshape_method
    # (PyTorch binds these in C++: a bad call gets its argument parser's TypeError)
    for n in ("select", "narrow", "view_as", "reshape_as", "flatten", "ravel", "expand_as",
              "broadcast_to", "as_strided"):
        setattr(Tensor, n, parsed(globals()[n], method=True))
    # (PyTorch's Tensor.unflatten is Python's: its TypeErrors name it `Tensor.unflatten()`)
    Tensor.unflatten = _python_method(unflatten)


_bind_plain()
narrow = parsed(narrow)
FUNCTION_FORMS = {"reshape": _reshape_function}   # (torch.X differing from Tensor.X)

from .structure import block_diag, cartesian_prod  # noqa: E402,F401  (public via PLAIN)

PLAIN = ["broadcast_shapes", "broadcast_tensors", "cartesian_prod", "block_diag", "select",
         "narrow", "reshape", "flatten", "ravel", "unflatten", "broadcast_to", "meshgrid",
         "as_strided"]
