"""Shape ops that split a tensor into views: split / split_with_sizes, chunk, tensor_split,
hsplit / vsplit / dsplit and unbind (each result a view of the input, see `shape.py`)."""
import numpy as np

from .._views import _apply_steps
from .._tensor import Tensor
from ..autograd.saved_tensors import ABSENT
from .declare import parsed
from .registry import Promote, given, omitted, op
from .arg_parser import REQUIRED, numpy_axis
from .argcheck import _is_index, python_level_ints
from .errors import int_list_error, type_name
from .shape import _bad_int, _int_list_error, _int_sequence, _wrap_dim

P = Promote


def _split_steps(shape, split_size_or_sections, dim):
    if not shape:   # (refused before the dim is read, as PyTorch)
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, len(shape))
    n = shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        bounds = [(s, min(s + size, n)) for s in range(0, n, size)] if size else [(0, 0)]
        if not bounds:
            bounds = [(0, 0)]
    else:
        sections = split_size_or_sections
        if sum(sections) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={list(sections)}")
        bounds, s = [], 0
        for k in sections:
            bounds.append((s, s + k))
            s += k
    return [[("slice", d, a, b, 1)] for a, b in bounds]


def _split_name(kinds, statics):
    return "SplitBackward0" if isinstance(statics["split_size_or_sections"], int) else \
        "SplitWithSizesBackward0"


def _saved_split(sizes):
    """`saved_as` of split's `split_size` (an int) or `split_sizes` (a list)."""
    def saved(split_size_or_sections, **_):
        if isinstance(split_size_or_sections, int) == sizes:
            return ABSENT
        return tuple(split_size_or_sections) if sizes else split_size_or_sections
    return saved


def _split_ints(args):
    """PyTorch's errors for split's size or dim that is no int: its `Tensor.split` (and
    `torch.split`) call `split` for an int size, `split_with_sizes` otherwise, by position."""
    input, size, dim = args["input"], args["split_size_or_sections"], args["dim"]
    if isinstance(size, Tensor) or (size.__class__ is int and dim.__class__ is int):
        return
    if isinstance(size, int) and not isinstance(size, np.integer):   # (bool: no overload)
        from .overloads import parser_error
        error = parser_error("split", False, [input, size, dim], {})
        if error is not None:
            raise error
    elif not _int_sequence(size):
        raise _int_list_error("split_with_sizes", "split_sizes", size, 2)
    if not _is_index(dim):
        raise TypeError(f"split_with_sizes(): argument 'dim' (position 3) must be int, not "
                        f"{type_name(type(dim))}")


@op(promote=P.NONE, grad_fn=_split_name, saves=(), multi_view=True,
    ints_check=(("split_size_or_sections", "dim"), _split_ints),
    saved_as={"split_size": _saved_split(False), "split_sizes": _saved_split(True)},
    view=lambda t, split_size_or_sections, dim=0: _split_steps(t.shape, split_size_or_sections,
                                                               dim))
def split(input, split_size_or_sections, dim=0):
    return [_apply_steps(input, s) for s in _split_steps(input.shape, split_size_or_sections, dim)]


def split_with_sizes(input, split_sizes, dim=0):
    if not _int_sequence(split_sizes):
        raise _int_list_error("split_with_sizes", "split_sizes", split_sizes, 2)
    return split(input, tuple(split_sizes), dim)


def chunk(input, chunks, dim=0, *, axis=REQUIRED):
    dim = numpy_axis("chunk", dim, axis, 0)
    if chunks.__class__ is not int or dim.__class__ is not int:
        python_level_ints("chunk", ("chunks", "dim"), (chunks, dim))
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    n = input.shape[_wrap_dim(dim, input.ndim)]
    return split(input, max(1, -(-n // chunks)), dim)


_NO_DIM = omitted(0)


def tensor_split(input, indices_or_sections, dim=_NO_DIM):
    """Slices of `input` along `dim`: each output is its own view (SliceBackward0)."""
    return _tensor_split(input, indices_or_sections, dim, False)


def _tensor_split_method(self, indices_or_sections, dim=_NO_DIM):
    return _tensor_split(self, indices_or_sections, dim, True)


def _tensor_split_types(input, value, dim, method):
    """PyTorch's parser's TypeError for `tensor_split` with `value` or `dim` of a type none
    of its overloads takes (a sequence is read by its first element)."""
    from .overloads import parser_error
    from .errors import _keywords_of_call, user_frame
    sequence = isinstance(value, (list, tuple))
    if (_is_index(value) or isinstance(value, Tensor) or (
            sequence and (not value or _is_index(value[0])))) and (
            _is_index(dim) or not given(dim)):
        if sequence and _bad_int(value) is not None:   # (the overload was picked by the first)
            bad = _bad_int(value)
            raise int_list_error("tensor_split", "indices", type(value[bad]), bad, "")
        return
    keywords = [k for k in _keywords_of_call(user_frame(3))
                if k in ("indices_or_sections", "dim")]
    args = [] if method else [input]
    args += [v for k, v in (("indices_or_sections", value), ("dim", dim))
             if k not in keywords and given(v)]
    error = parser_error("tensor_split", method, args,
                         {k: value if k == "indices_or_sections" else dim for k in keywords})
    if error is not None:
        raise error


def _tensor_split(input, indices_or_sections, dim, method):
    from .indexing import basic_view
    if indices_or_sections.__class__ is not int or (dim.__class__ is not int and
                                                    dim is not _NO_DIM):
        _tensor_split_types(input, indices_or_sections, dim, method)
    if dim is _NO_DIM:
        dim = 0
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    if isinstance(indices_or_sections, Tensor):  # a 0-dim count or a 1-D list of indices
        t = indices_or_sections
        if t.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t.ndim} dims")
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype.itemsize != 8:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {t.dtype._legacy}")
        indices_or_sections = t.tolist()
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        bounds = [sum(sizes[:i]) for i in range(k + 1)]
        pairs = list(zip(bounds, bounds[1:]))
    else:
        idx = [0] + list(indices_or_sections) + [None]
        pairs = []
        for a, b in zip(idx, idx[1:]):
            start, stop, _ = slice(a, b).indices(n)
            pairs.append((start, max(stop, start)))
    return tuple(basic_view(input, (("slice", d, a, b, 1),)) for a, b in pairs)


def _split_dim_check(name, input, sections, min_ndim, d):
    if not isinstance(sections, (int, list, tuple)) or isinstance(sections, bool):
        from .errors import _keywords_of_call, positional_count_of_call, user_frame
        from .overloads import parser_error
        caller = user_frame(2)   # (as a method, the call passes one argument)
        keywords = _keywords_of_call(caller)
        method = (positional_count_of_call(caller) or 0) + len(keywords) == 1
        args = [] if keywords else [sections] if method else [input, sections]
        raise parser_error(name, method, args, {k: sections for k in keywords}) or TypeError(
            f"{name}(): argument 'indices_or_sections' must be int or tuple of ints")
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[d] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size "
                           f"of the dimension {input.shape[d]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, d)


def hsplit(input, indices_or_sections):
    d = 0 if input.ndim == 1 else 1
    return _split_dim_check("hsplit", input, indices_or_sections, 1, d)


def vsplit(input, indices_or_sections):
    return _split_dim_check("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input, indices_or_sections):
    return _split_dim_check("dsplit", input, indices_or_sections, 3, 2)


def _unbind_steps(shape, dim):
    if not shape:   # PyTorch wraps the dim (as for one dim) before refusing
        raise IndexError(f"Dimension specified as {_wrap_dim(dim, 0)} but tensor has no "
                         "dimensions")
    d = _wrap_dim(dim, len(shape))
    return [[("select", d, i)] for i in range(shape[d])]


@op(promote=P.NONE, grad_fn="UnbindBackward0", saves=(), multi_view=True,
    view=lambda t, dim=0: _unbind_steps(t.shape, dim))
def unbind(input, dim=0):
    return [_apply_steps(input, s) for s in _unbind_steps(input.shape, dim)]


def _split_with_sizes_method(self, split_sizes, dim=0):
    if not _int_sequence(split_sizes):
        raise _int_list_error("split_with_sizes", "split_sizes", split_sizes, 1)
    return split(self, tuple(split_sizes), dim)


def _bind():
    """Bind the Python-level splitting functions above as Tensor methods."""
    for name, method in (("split_with_sizes", _split_with_sizes_method),
                         ("tensor_split", _tensor_split_method)):
        # (PyTorch binds these in C++: a bad call gets its argument parser's TypeError)
        setattr(Tensor, name, parsed(method, name, method=True))
    for n in ("chunk", "hsplit", "vsplit", "dsplit"):
        setattr(Tensor, n, parsed(globals()[n], method=True))


_bind()

PLAIN = ["split_with_sizes", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit"]
