"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty(+_like), eye,
complex / polar, and dtype conversion (`to`, `float()`, ...). The evenly spaced factories
(arange, linspace, logspace) and the window functions are in `creation_ranges.py`."""
import builtins
import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit
from .. import _dtype as dt, _meta
from .._storage import share_host
from ..autograd import grad_mode
from .._device import device as Device, get_default_device, jax_device, CPU
from .._warnings import user_stacklevel
from .._tensor import (Size, Tensor, _wrap, contiguous_format, memory_format as _memory_format,
                       preserve_format)
from .._memory_layout import (lay_out, layout_strides, like_layout, memory_order,
                              preserved_strides)
from .registry import Promote, op, call_jax
from .plans import bool_to, number_arg
from .indexing import check_fill_value
from . import float8, unsigned_support
from .result_layout import suggest_memory_format
from .._layout import strided as _STRIDED

P = Promote


def _dev(device):
    return get_default_device() if device is None else Device(device)


def _place(array, device):
    """Put a host array (NumPy) on a torchish device as a JAX array."""
    dev = _dev(device)
    if dev.type == "meta":
        return _meta.empty(np.shape(array), np.asarray(array).dtype), dev
    return jax.device_put(array, jax_device(dev)), dev


def _leaf(array, device, requires_grad):
    arr, dev = _place(array, device)
    t = _wrap(arr, dev)
    if requires_grad:
        _factory_requires_grad(t)
    return t


def _factory_requires_grad(t):
    # factories word the error differently from `requires_grad_()`
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return t.requires_grad_(True)


def _infer_dtype(data):
    """PyTorch's dtype inference for Python data: the elements' types promoted in order (a
    bool as Bool, an int as Long, a float or complex as the defaults); tensors and NumPy
    arrays and scalars count with their own dtypes. Its promotion error names the first pair
    that fails, in the data's order."""
    seen = {}   # the distinct element dtypes, in order of appearance (an ordered set)
    first = data   # PyTorch sizes the data by its first elements: an array there is a sequence
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
        if isinstance(first, np.ndarray) and first.ndim == 0:
            raise TypeError("len() of unsized object")
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            seen[x.dtype] = None
        elif isinstance(x, (list, tuple, range)):
            stack.extend(reversed(x))
        elif isinstance(x, (np.ndarray, np.generic)):   # (np.float64 is also a float)
            seen[dt.from_np(x.dtype)] = None   # NumPy data keeps its dtype
        elif isinstance(x, builtins.bool):
            seen[dt.bool] = None
        elif isinstance(x, int):
            seen[dt.int64] = None
        elif isinstance(x, float):
            seen[dt.get_default_dtype()] = None
        elif isinstance(x, builtins.complex):
            seen[dt.default_complex()] = None
        elif isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    return _promote_all(list(seen)) if seen else dt.get_default_dtype()


def _to_numpy(data, dtype):
    if isinstance(data, Tensor):
        return np.asarray(data._data)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flatten(data)):
        data = _nested_tolist(data)
    return np.array(data, dtype=dtype.np if dtype is not None else None)


def _flatten(data):
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            yield x


def _nested_tolist(data):
    if isinstance(data, Tensor):   # (an element, read as a number)
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_nested_tolist(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    dtype = dt.from_python_type(dtype)
    if isinstance(data, Tensor):
        # torch.tensor(t) copies (PyTorch warns and suggests clone().detach())
        arr = data._data
        if dtype in dt.FLOAT8:
            arr = float8.host_to_float8(np.asarray(arr), dtype.np)
        elif dtype is not None:
            arr = arr.astype(dtype.np)
        return _leaf(np.asarray(arr), device if device is not None else data.device,
                     requires_grad)
    if isinstance(data, np.generic) and not isinstance(data, (np.number, np.bool_)):
        if isinstance(data, (np.str_, np.bytes_)):   # (a NumPy scalar is read as a number)
            raise TypeError(f"new(): invalid data type 'numpy.{type(data).__name__}'")
    elif isinstance(data, np.generic) and (dtype or dt.from_np(data.dtype)) is dt.uint64:
        # PyTorch reads a NumPy scalar as a number; a uint64 element only from a Python int
        raise TypeError("an integer is required")
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = _checked_strides(np.asarray(data))
        d = dtype or dt.from_np(arr.dtype)
        t = _leaf(_host_cast(arr, d), device, requires_grad)
        stride = tuple(s // arr.itemsize for s in arr.strides)
        if arr.size and stride != t.stride():
            # PyTorch copies the array's memory order too (a transposed image stays so)
            lay_out(t, preserved_strides(arr.shape, stride))
        return t
    if isinstance(data, jax.Array):
        arr = data if dtype is None else data.astype(dtype.np)
        t = _wrap(arr)
        return _factory_requires_grad(t) if requires_grad else t
    _warn_list_of_arrays(data)
    if dtype is dt.uint64:
        return _leaf(_uint64_array(data), device, requires_grad)
    inferred = _infer_dtype(data)
    if dtype is None and inferred is dt.uint64:   # (NumPy uint64 elements: see _uint64_array)
        return _leaf(_uint64_array(data), device, requires_grad)
    d = dtype or inferred
    if d is None:  # a list of tensors: their promoted dtype
        d = _promote_all([x.dtype for x in _flatten(data) if isinstance(x, Tensor)])
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flatten(data)):
        data = _nested_tolist(data)   # (raises for an element of several values)
    try:
        arr = _to_numpy(data, None)
    except ValueError:
        arr = None
    if arr is None or arr.dtype == object:
        if any(type(x) is int and not -2 ** 63 <= x < 2 ** 63 for x in _flatten(data)):
            if not (d.is_floating_point or d.is_complex or d is dt.bool):
                raise ValueError("Overflow when unpacking long long")
            # a float target reads each int as a double, however large
            arr = _to_numpy(data, dt.complex128 if d.is_complex else dt.float64)
    if arr is None or arr.dtype == object:
        _check_nested(data)
    if arr.dtype == np.uint64 and not (d.is_floating_point or d.is_complex or d is dt.bool) \
            and any((type(x) is int or isinstance(x, np.unsignedinteger)) and x >= 2 ** 63
                    for x in _flatten(data)):
        # (NumPy gives uint64 for ints above int64; PyTorch reads them, NumPy's uint64 too,
        # as long long)
        raise ValueError("Overflow when unpacking long long")
    _check_overflow(arr, d)
    if arr.dtype.kind == "c" and not d.is_complex:
        # PyTorch reads each Python number as the target's C type (bool: its truth)
        if d is dt.bool:
            arr = arr != 0
        elif d.is_floating_point:
            raise TypeError("must be real number, not complex")
        else:
            raise TypeError("'complex' object cannot be interpreted as an integer")
    with np.errstate(over="ignore"):   # (a float too large for float32 is inf, silently)
        arr = _host_cast(arr, d)
    return _leaf(arr, device, requires_grad)


_LIST_OF_ARRAYS_WARNED = [False]


def _warn_list_of_arrays(data):
    # PyTorch warns (once per program) about an ndarray among nested data, except where the
    # first element it sizes the data by is a 0-d one
    if _LIST_OF_ARRAYS_WARNED[0] or not isinstance(data, (list, tuple)):
        return
    first = data
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if isinstance(first, np.ndarray):
        slow = first.ndim > 0
    else:
        slow = any(isinstance(x, np.ndarray) for x in _flatten(data))
    if slow:
        _LIST_OF_ARRAYS_WARNED[0] = True
        warnings.warn(
            "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
            "consider converting the list to a single numpy.ndarray with numpy.array() "
            "before converting to a tensor.", UserWarning, stacklevel=user_stacklevel())


def _host_cast(arr, d):
    """A NumPy array as dtype `d`: float8 by PyTorch's rules (`float8`), complex -> real with
    PyTorch's warning (NumPy's would be a ComplexWarning), else NumPy's `astype`."""
    if arr.dtype.kind == "c" and not d.is_complex:
        warn_if_complex_to_real(dt.complex128, d)
        arr = arr.real
    if d in dt.FLOAT8 and arr.dtype != d.np:
        return float8.host_to_float8(arr, d.np)
    return arr.astype(d.np)


def _uint64_array(data):
    """Python data as uint64, exactly: PyTorch reads each element as an unsigned 64-bit
    integer (no floats, no wrapping of negatives), where NumPy would infer float64 for ints
    above int64 and wrap negative ones."""
    for x in _flatten(data):   # (NumPy would hand an array's elements over as Python ints)
        if isinstance(x, Tensor) or isinstance(x, np.ndarray) and x.size:
            raise TypeError("len() of unsized object" if isinstance(x, np.ndarray) and
                            x.ndim == 0 else "an integer is required")
    try:
        obj = np.array(data, dtype=object)
    except ValueError:
        obj = None
    if obj is None or any(isinstance(x, (list, tuple)) for x in obj.flat):
        try:
            _check_nested(data)   # ragged: PyTorch's message
        except TypeError:   # (a sequence where a number belongs)
            raise TypeError("an integer is required") from None
    values = []
    for x in obj.flat:   # in order: the first bad element decides the error
        if isinstance(x, str):
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        if not isinstance(x, int):   # (NumPy scalars and floats too)
            raise TypeError("an integer is required")
        if x < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if x >= 2 ** 64:
            raise OverflowError("int too big to convert")
        values.append(int(x))
    return np.array(values, dtype=np.uint64).reshape(obj.shape)


def _check_overflow(arr, d):
    """PyTorch's range check of each value converted to an integer dtype (NumPy would wrap);
    uint8 takes negative values down to -255, wrapped."""
    if arr.dtype.kind not in "iuf" or not arr.size or d.is_floating_point or d.is_complex or \
            d is dt.bool or arr.dtype == d.np:
        return
    info = np.iinfo(d.np)
    low = -int(info.max) if info.min == 0 else int(info.min)
    if arr.dtype.kind == "f":
        bad = np.isnan(arr).any() or arr.min() < low or arr.max() > info.max
    else:
        bad = int(arr.min()) < low or int(arr.max()) > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {np.dtype(d.np).name} without "
                           "overflow")


def _is_seq(x):
    return isinstance(x, (list, tuple, range)) or isinstance(x, np.ndarray) and x.ndim > 0


def _check_nested(data):
    """Raise PyTorch's error for ragged nested data (sizes follow the first elements)."""
    sizes, x = [], data
    while _is_seq(x):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    stack = [(data, 0)]
    while stack:
        x, d = stack.pop()
        if d == len(sizes):
            if _is_seq(x):
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an "
                                "integer")
            continue
        if not _is_seq(x):
            raise TypeError("not a sequence")
        if len(x) != sizes[d]:
            raise ValueError(f"expected sequence of length {sizes[d]} at dim {d} (got "
                             f"{len(x)})")
        stack.extend((v, d + 1) for v in x)
    raise ValueError("could not convert the data to a tensor")


def _promote_all(dtypes):
    out = dtypes[0]
    for d in dtypes[1:]:
        out = dt.promote_types(out, d)
    return out


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        if (dtype is None or data.dtype is dtype) and (device is None or
                                                      Device(device) == data.device):
            return data
        return data.to(device=device, dtype=dtype)
    if type(data) is np.ndarray and data.dtype.kind in "biufc" and _dev(device).type == "cpu":
        d = dt.from_np(_checked_strides(data).dtype)
        _warn_read_only(data)
        if dtype is None or dtype is d:   # the array's memory, as from_numpy shares it
            shared = _shared(data, d)
            if shared is not None:
                return shared
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = dt.from_np(_checked_strides(ndarray).dtype)
    _warn_read_only(ndarray)
    shared = _shared(ndarray, d)
    if shared is not None:
        return shared
    return _leaf(np.asarray(ndarray, order="C").astype(d.np, copy=False), CPU, False)


_READ_ONLY_WARNED = [False]
# A shared storage copies the whole array on every read (XLA must not alias memory the user
# writes): cheap for the small arrays whose sharing programs look at, ruinous for a dataset
# indexed every step. Bigger arrays are copied once, as before (their sharing is a known gap).
SHARE_LIMIT = 1 << 18


def _warn_read_only(array):
    # once per program, as PyTorch's warning says
    if not array.flags.writeable and not _READ_ONLY_WARNED[0]:
        _READ_ONLY_WARNED[0] = True
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.", UserWarning, stacklevel=user_stacklevel())


def _shared(array, d):
    """A tensor over `array`'s own memory (PyTorch's from_numpy: writes on either side are seen
    by the other), laid out by its strides; None where torchish copies instead (a read-only,
    empty or big array, one torchish stores as another dtype, inference mode)."""
    item = array.itemsize
    if (array.dtype != d.np or not array.flags.writeable or array.size == 0
            or grad_mode._INFERENCE[0]):
        return None
    # the span of memory the strides reach, from the first element (the lowest address: no
    # stride is negative): what every read copies
    span = 1 + sum((n - 1) * st // item for n, st in zip(array.shape, array.strides))
    if span > SHARE_LIMIT:
        return None
    if array.flags.c_contiguous:
        t = _wrap(array, CPU)
        share_host(t._storage, array)
        return t
    flat = np.lib.stride_tricks.as_strided(array, shape=(span,), strides=(item,))
    t = _wrap(flat, CPU)
    share_host(t._storage, flat)
    from .shape import retype
    return retype(t, t._storage, None, array.dtype, array.shape,
                  tuple(st // item for st in array.strides), 0)


def _checked_strides(array):
    # PyTorch views (or copies) NumPy data by its strides, and it has no negative strides
    if any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around this "
            "by making a copy of your array  with array.copy().) ")
    if any(s % array.itemsize for s in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    return array


def from_jax(array):
    """A tensor holding a JAX array (no copy); a meta one for a `_meta.MetaArray`."""
    return _wrap(array if isinstance(array, _meta.MetaArray) else jnp.asarray(array))


def _size(size, name="zeros", keyword=None):
    """The shape of a factory call: its sizes given positionally (`zeros(2, 3)`,
    `zeros((2, 3))`) or as the `size=` keyword."""
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(keyword, (list, tuple)):
            from .errors import int_list_error
            raise int_list_error(name, "size", type(keyword), None, "")
        size = (keyword,)
    elif not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    single = len(size) == 1 and not isinstance(size[0], (list, tuple))
    sequence = len(size) == 1 and not single
    given = size
    if sequence:
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.ndim == 0 and not (s.dtype.is_floating_point or
                                                          s.dtype.is_complex):
            s = int(s.item())   # (a 0-d integer tensor reads as an int)
        # (the parser reads the first size's type; a later bool is an int)
        if not isinstance(s, (int, np.integer)) or (i == 0 and isinstance(s, builtins.bool)):
            raise _size_error(name, given, i, s, single, sequence)
        out.append(int(s))
    for s in out:
        if s < 0:
            if name == "zeros":  # zeros checks sizes before allocating, with its own text
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _size_error(name, given, i, s, single, sequence):
    """PyTorch's TypeError for a factory's size `s` at `i` that is no int."""
    from .errors import int_list_error
    if i == 0 and not single and not sequence:   # separate sizes, the first no int: no
        from .overloads import parser_error      # overload takes them
        return parser_error(name, False, list(given), {}) or TypeError(
            f"{name}() takes 1 positional argument but {len(given)} were given")
    return int_list_error(name, "size", type(s), None if single else i, " (position 1)")


@functools.lru_cache(maxsize=1024)
def _filler(size, np_dtype, jdev):
    """A compiled `full` for one shape/dtype/device: ~10 us a call instead of ~60 us for an
    uncached `jnp.full`; the fill value is an argument, so every value shares it."""
    sharding = jax.sharding.SingleDeviceSharding(jdev)
    if float8.is_float8(np_dtype):   # (PyTorch's float8 conversion, not XLA's)
        return eager_jit(lambda v: float8.to_float8(jnp.full(size, v, dtype=np.float64),
                                                    np_dtype), out_shardings=sharding)
    return eager_jit(lambda v: jnp.full(size, v, dtype=np_dtype), out_shardings=sharding)


def _filled(size, value, dtype, device, requires_grad):
    d = dt.from_python_type(dtype) or dt.get_default_dtype()
    if d in dt.FLOAT8:   # (range checked unless one element; see float8.fill_error)
        error = float8.fill_error(value, d.np, math.prod(size))
        if error is not None:
            raise error
        value = float8.fill_number(value)
    elif type(value) is not int or not 0 <= value <= 1:   # (zeros, ones: no check)
        from .errors import scalar_overflow
        error = scalar_overflow(value, d)
        if error is not None:
            raise error
    dev = _dev(device)
    if dev.type == "meta":
        t = _wrap(_meta.empty(size, d.np), dev)
        return _factory_requires_grad(t) if requires_grad else t
    jdev = jax_device(dev)
    if type(value) in (builtins.bool, int, float) and not (type(value) is int and
                                                            abs(value) >= 2 ** 31) or \
            d in dt.FLOAT8 and not isinstance(value, (builtins.complex, np.complexfloating)):
        arr = _filler(tuple(size), d.np, jdev)(value)
    else:  # complex, NumPy scalars, wide ints: keep jnp.full's exact conversion
        arr = jnp.full(size, value, dtype=d.np, device=jdev)
    t = _wrap(arr, dev)
    if requires_grad:
        _factory_requires_grad(t)
    return t


def _other_layout(name, size, layout, dtype, device, requires_grad):
    """zeros / empty / ones / full with a layout besides strided (sparse_coo: its own)."""
    from .._sparse_ops import factory
    return factory(name, tuple(size), layout, dtype, device, requires_grad)


def zeros(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, size=None):   # (no memory_format: PyTorch's zeros takes none)
    if layout is not None and layout is not _STRIDED:
        return _other_layout("zeros", _size(sizes, "zeros", size), layout, dtype, device,
                             requires_grad)
    return _filled(_size(sizes, "zeros", size), 0, dtype, device, requires_grad)


def ones(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, size=None):
    if layout is not None and layout is not _STRIDED:
        return _other_layout("ones", _size(sizes, "ones", size), layout, dtype, device,
                             requires_grad)
    return _filled(_size(sizes, "ones", size), 1, dtype, device, requires_grad)


def empty(*sizes, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None, size=None):
    # JAX has no uninitialised memory: empty is zeros
    size = _size(sizes, "empty", size)
    if layout is not None and layout is not _STRIDED:
        return _other_layout("empty", size, layout, dtype, device, requires_grad)
    if memory_format is None or memory_format is contiguous_format:
        return _filled(size, 0, dtype, device, requires_grad)
    if not isinstance(memory_format, _memory_format):
        raise TypeError(f"empty(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    t = _filled(size, 0, dtype, device, False)
    lay_out(t, layout_strides(t, memory_format))   # (raises PyTorch's error for a wrong rank)
    return _factory_requires_grad(t) if requires_grad else t


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if not isinstance(size, (list, tuple)):   # (unlike `ones`, no single int: a `size`)
        raise _size_error("full", (size,), 0, size, True, False)
    size = _size((tuple(size),), "full")
    if layout is not None and layout is not _STRIDED:
        return _other_layout("full", size, layout, dtype, device, requires_grad)
    if isinstance(fill_value, Tensor):
        if isinstance(fill_value._data, jax.core.Tracer) and fill_value.numel() == 1:
            # traced (torchish.compile): the value stays in the graph, typed as the Python
            # number `.item()` would give
            kind = fill_value.dtype
            number = (False if kind is dt.bool else 0j if kind.is_complex else
                      0.0 if kind.is_floating_point else 0)
            dtype = dtype or dt.scalar_dtype(number)
            return _filled(size, fill_value._data.reshape(()), dtype, device, requires_grad)
        fill_value = fill_value.item()
    elif isinstance(fill_value, (np.number, np.bool_)) or type(fill_value) is int:
        fill_value = number_arg(fill_value)   # (the parser's errors for huge ints)
    if not isinstance(fill_value, (builtins.bool, int, float, builtins.complex)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value)
    return _filled(size, fill_value, dtype, device, requires_grad)


def _like(fn):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        if not isinstance(input, Tensor):
            raise TypeError(f"{fn.__name__}_like(): argument 'input' (position 1) must be "
                            f"Tensor, not {type(input).__name__}")
        if layout is not None and layout is not _STRIDED:
            return _other_layout(fn.__name__ + "_like", input.shape, layout,
                                 dtype or input.dtype,
                                 device if device is not None else input.device, requires_grad)
        return like_layout(fn(input.shape, dtype=dtype or input.dtype,
                              device=device if device is not None else input.device,
                              requires_grad=requires_grad, **kw), input, memory_format)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)


def layout_order(t):
    """`t`'s dims from the outermost to the innermost in memory."""
    return memory_order(t.shape, t.stride())[::-1]


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """As PyTorch's (preserve_format): the result keeps the order of `input`'s strides, which
    decides the order in which in-place random fills (`bernoulli_`, `normal_`...) write it."""
    dtype = dtype or input.dtype
    device = device if device is not None else input.device
    if memory_format not in (None, preserve_format):
        return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad,
                     memory_format=memory_format)
    perm = layout_order(input)
    if perm == sorted(perm) or requires_grad:
        return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)
    base = empty(tuple(input.shape[d] for d in perm), dtype=dtype, device=device)
    return base.permute(*np.argsort(perm).tolist())


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return like_layout(full(input.shape, fill_value, dtype=dtype or input.dtype,
                            device=device if device is not None else input.device,
                            requires_grad=requires_grad), input, memory_format)


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    d = dtype or dt.get_default_dtype()
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if d in dt.SHELL:   # no eye kernel for uint16/32/64
        unsigned_support.refuse("eye", d)
    return _leaf(np.eye(n, n if m is None else m, dtype=d.np), device, requires_grad)


def _check_indices(name, row, col, dtype):
    for label, v in (("row", row), ("col", col)):
        if v < 0:   # (sic: PyTorch prints no space before the number)
            raise RuntimeError(f"{label} must be non-negative, got{v}")
    if dtype in dt.SHELL:
        unsigned_support.refuse(name, dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    _check_indices("tril_indices", row, col, dtype)
    r, c = np.tril_indices(row, offset, col)
    return _leaf(np.stack([r, c]).astype((dtype or dt.int64).np), device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    _check_indices("triu_indices", row, col, dtype)
    r, c = np.triu_indices(row, offset, col)
    return _leaf(np.stack([r, c]).astype((dtype or dt.int64).np), device, False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    # a Scalar argument (unlike `tensor`'s data): c10's conversion and range check, as `full`
    if not isinstance(s, (builtins.bool, int, float, builtins.complex, np.number, np.bool_)):
        return tensor(s, dtype=dtype or dt.get_default_dtype(), device=device,
                      requires_grad=requires_grad)
    d = dt.from_python_type(dtype) or dt.get_default_dtype()
    if d in (dt.float16, dt.bfloat16):   # (unchecked there: too large is inf)
        return tensor(number_arg(s), dtype=d, device=device, requires_grad=requires_grad)
    return full((), s, dtype=d, device=device, requires_grad=requires_grad)


def _complex_parts_check(real, imag):
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {dt.from_np(real.dtype)._legacy} "
                           f"but got scalar type {dt.from_np(imag.dtype)._legacy} for second "
                           "argument")
    if real.dtype not in (np.float16, np.float32, np.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dt.from_np(real.dtype)._legacy} and "
                           f"{dt.from_np(imag.dtype)._legacy}")


@op(promote=P.NONE, grad_fn="ComplexBackward0", method=False, scalar_operands=False)
def complex(real, imag):
    _complex_parts_check(real, imag)
    return jax.lax.complex(*jnp.broadcast_arrays(real, imag))


@op(promote=P.NONE, grad_fn="PolarBackward0", method=False, scalar_operands=False,
    saves="result")
def polar(abs, angle):
    # PyTorch checks polar's inputs as complex's (same texts); it has no Half kernel
    if abs.dtype == angle.dtype == np.float16:
        raise NotImplementedError('"polar_cpu" not implemented for \'Half\'')
    _complex_parts_check(abs, angle)
    return jax.lax.complex(*jnp.broadcast_arrays(abs * jnp.cos(angle), abs * jnp.sin(angle)))


# ---- dtype / device conversion -----------------------------------------------------------

_complex_to_real_warned = [False]


def warn_if_complex_to_real(src, dst):
    """PyTorch's copy kernel warns (once per process) when a cast drops imaginary parts."""
    if src.is_complex and not dst.is_complex and not _complex_to_real_warned[0]:
        _complex_to_real_warned[0] = True
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=user_stacklevel())


def cast(x, np_dtype):
    """`x.astype`, taking the real part first for complex -> real (as PyTorch; JAX deprecates
    the implicit form), and float -> signed or 8-bit integers as PyTorch's CPU kernels convert
    (x86 truncation: out of range or NaN is the most negative value, and narrower integers
    take the low bits of the int32; XLA would saturate)."""
    if jnp.iscomplexobj(x) and not jnp.issubdtype(np_dtype, jnp.complexfloating):
        x = jnp.real(x)
    target = np.dtype(np_dtype)
    if x.dtype != target and float8.is_float8(target):
        return float8.to_float8(x, target)
    from_float8 = x.dtype != target and float8.is_float8(x.dtype)
    if from_float8:   # (read in float32; its non-finite values give uint32 0, as float16's)
        x = float8.from_float8(x, target)
    if jnp.issubdtype(x.dtype, jnp.floating) and target.kind in "iu":
        fp16 = x.dtype == np.float16 or from_float8
        if x.dtype.itemsize < 4:   # (half types: compared in float32, where the limits fit)
            x = x.astype(np.float32)
        if target.kind == "i" or target.itemsize <= 2:
            wide = np.int64 if target == np.int64 else np.int32
            return unsigned_support.truncate(x, wide).astype(target)
        return unsigned_support.float_to_unsigned(x, target, fp16)
    if x.dtype == bool and target.kind != "b":
        return bool_to(x, np_dtype)
    return x.astype(np_dtype)


@op(promote=P.NONE, grad_fn="ToCopyBackward0", function=False, method=False, saves=())
def _to_dtype(input, dtype, memory_format=None):
    # (memory_format: read by its layout rule, result_layout.preserve)
    return cast(input, dtype.np)


_TO_OVERLOADS = []   # (read on first use)
_TO_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy"})


def _to_common(args, kwargs):
    """`_parse_to` for the common calls, which the first two overloads take: a device and a
    dtype (or either) by position or keyword, the flags as bools by keyword; else None."""
    for k, v in kwargs.items():
        if k not in _TO_KEYWORDS or (k[0] in "nc" and v.__class__ is not builtins.bool):
            return None
    if not args:
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
    elif len(args) == 1 and isinstance(args[0], dt.dtype):
        if "device" in kwargs or "dtype" in kwargs:
            return None
        device, dtype = None, args[0]
    elif len(args) <= 2 and isinstance(args[0], (str, Device)) and "device" not in kwargs:
        if len(args) == 2 and "dtype" in kwargs:
            return None
        device, dtype = args[0], args[1] if len(args) == 2 else kwargs.get("dtype")
    else:
        return None
    if not (device is None or isinstance(device, (str, Device))) or not (
            dtype is None or isinstance(dtype, dt.dtype)):
        return None
    return dtype, None if device is None else Device(device), kwargs.get("copy", False)


def _parse_to(args, kwargs):
    """(dtype, device, copy) of a `Tensor.to` call, as PyTorch's parser reads its overloads
    (device and dtype; dtype; tensor; each with non_blocking and copy)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        return args[0].dtype, args[0].device, False
    common = _to_common(args, kwargs)
    if common is not None:
        return common
    from .overloads import parse, table
    if not _TO_OVERLOADS:
        _TO_OVERLOADS.extend(table("to", True))
    sigs = _TO_OVERLOADS
    try:
        index, bound = parse("to", sigs, args, kwargs)
    except TypeError as error:
        # the parser lets a number stand for the tensor (as a wrapped number: float64 for a
        # float, ...), whose overload it tries last
        first = args[0] if args else kwargs.get("tensor")
        if not isinstance(first, (int, float, builtins.complex, np.number, np.bool_)):
            raise
        wrapped = _number_as_tensor(first)
        try:
            bound = parse("to", sigs[2:], (wrapped,) + tuple(args[1:]) if args else args,
                          kwargs if args else dict(kwargs, tensor=wrapped))[1]
        except TypeError:
            raise error from None
        index = 2
    if index == 2:
        return bound["tensor"].dtype, bound["tensor"].device, bound.get("copy", False)
    device = bound.get("device")
    return (dt.from_python_type(bound.get("dtype")), None if device is None else Device(device),
            bound.get("copy", False))


def _number_as_tensor(value):
    """A number as PyTorch's parser wraps it for a Tensor parameter: a 0-d CPU tensor of
    int64, float64, complex128 or bool."""
    kind = builtins.bool if isinstance(value, (builtins.bool, np.bool_)) else int if \
        isinstance(value, (int, np.integer)) else builtins.complex if isinstance(
            value, (builtins.complex, np.complexfloating)) else float
    return tensor(kind(value), dtype=dt.from_python_type(kind), device="cpu")


def to(self, *args, **kwargs):
    memory_format = kwargs.pop("memory_format", None)
    dtype, device, copy = _parse_to(args, kwargs)
    if memory_format is preserve_format:
        memory_format = None
    new_dtype = dtype is not None and dtype is not self.dtype
    new_device = device is not None and _norm(device) != self.device
    if not (new_dtype or new_device or copy) and (memory_format is None or memory_format is (
            suggest_memory_format(self) or contiguous_format)):
        return self   # (ATen's to_will_alias: a format the tensor already suggests is no copy)
    out = self
    if new_dtype:
        warn_if_complex_to_real(self.dtype, dtype)
        out = _to_dtype(out, dtype, memory_format)   # (laid out in memory_format by its rule)
    if new_device:
        dev = _norm(device)
        if self.device.type == "meta":
            raise NotImplementedError(_meta.NO_DATA)
        if dev.type == "meta":
            out = call_jax("ToCopyBackward0", lambda a: _meta.empty(a.shape, a.dtype), [out])
            out._storage.device = _meta.META
            return out
        target = jax_device(dev)
        out = call_jax("ToCopyBackward0", lambda a: jax.device_put(a, target), [out])
        out._storage.device = dev
        if memory_format is not None:
            out = like_layout(out, self, memory_format)
    if out is self:
        # copy=True or a format the tensor does not suggest (x.to(memory_format=
        # torch.channels_last)): one copy, recorded as PyTorch's _to_copy
        out = call_jax("ToCopyBackward0", _copy, [self])
        if not isinstance(out._storage.data, jax.core.Tracer):   # (traced: no strides to keep)
            out = like_layout(out, self, memory_format)
    return out


_copy = eager_jit(jnp.copy)   # (an EagerJit: on a meta tensor it gives its shape)


def _norm(device):
    if device.type == "cuda" and device.index is None:
        return Device("cuda", 0)
    return device


def _conversion(dtype, name):
    def convert(self, memory_format=None):
        return to(self, dtype, memory_format=memory_format)
    convert.__name__ = convert.__qualname__ = name   # (Python's TypeErrors name it)
    return convert


def _bind():
    Tensor.to = to
    Tensor.type_as = lambda self, other: to(self, device=other.device, dtype=other.dtype)
    for name, d in (("float", dt.float32), ("double", dt.float64), ("half", dt.float16),
                    ("bfloat16", dt.bfloat16), ("long", dt.int64), ("int", dt.int32),
                    ("short", dt.int16), ("char", dt.int8), ("byte", dt.uint8),
                    ("bool", dt.bool), ("cfloat", dt.complex64), ("cdouble", dt.complex128)):
        setattr(Tensor, name, _conversion(d, name))

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def _new(name, value):
        def method(self, *sizes, dtype=None, device=None, requires_grad=False, size=None,
                   **kw):
            return _filled(_size(sizes, name, size), value, dtype or self.dtype,
                           device or self.device, requires_grad)
        method.__name__ = name
        return method

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new(self, *args, device=None):
        """The legacy constructor: `x.new(2, 3)` / `x.new(size)` (uninitialised, here zeros),
        `x.new([1, 2])` (from data), `x.new()` (empty), all of `x`'s dtype and device."""
        device = device or self.device
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(self.dtype).detach()
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and \
                not isinstance(args[0], Size):
            return tensor(args[0], dtype=self.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        return empty(*(args or (0,)), dtype=self.dtype, device=device)

    Tensor.new = new
    Tensor.new_tensor = new_tensor
    Tensor.new_zeros = _new("new_zeros", 0)
    Tensor.new_ones = _new("new_ones", 1)
    Tensor.new_empty = _new("new_empty", 0)
    Tensor.new_full = new_full

    def fill_(self, value):
        check_fill_value(value)
        return self._fill_(value)

    def zero_(self):
        return self._zero_()

    Tensor.fill_ = fill_
    Tensor.zero_ = zero_


_bind()

class _LegacyTensorType(type):
    """`torch.FloatTensor`, `torch.cuda.FloatTensor` and kin: constructors, and isinstance
    checks by dtype and device type."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls.device_type

    def __call__(cls, *args, device=None):
        if cls.device_type == "cuda":
            from .. import cuda
            if not cuda.is_available():
                raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch "
                                "not compiled with CUDA enabled.")
            device = "cuda" if device is None else device
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(cls.dtype)
            return tensor(data, dtype=cls.dtype, device=device)
        return empty(*(args or (0,)), dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_types(module="torch", device_type="cpu"):
    out = {}
    for d in dt.ALL:
        if d in dt.SHELL:   # PyTorch has no UInt16Tensor/... classes (type strings work)
            continue
        name = d._legacy + "Tensor"
        out[name] = _LegacyTensorType(name, (), {"dtype": d, "__module__": module,
                                                 "device_type": device_type})
    return out


_LEGACY = _legacy_types()
globals().update(_LEGACY)

PLAIN = list(_LEGACY) + [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_jax", "zeros", "ones", "empty",
    "full", "zeros_like", "ones_like", "empty_like", "full_like", "eye", "tril_indices",
    "triu_indices", "scalar_tensor"]
