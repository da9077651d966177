"""Tensors from data: tensor, as_tensor/asarray, from_numpy, from_jax, with PyTorch's dtype
inference, range checks and NumPy sharing; and `_leaf`, which puts host data on a device as a
new tensor (for the factories in `creation.py` and others)."""
import builtins
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt, _meta
from .._storage import share_host
from ..autograd import grad_mode
from .._device import device as Device, get_default_device, jax_device, CPU
from .._warnings import user_stacklevel
from .._tensor import Tensor, _wrap
from .._memory_layout import lay_out, preserved_strides
from . import float8
from .conversion import warn_if_complex_to_real


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


def as_tensor(data, *, dtype=None, device=None):
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


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """`as_tensor` with PyTorch's `copy` (True: always a copy; False: an alias or
    ValueError; None: an alias where one can be) and `requires_grad`."""
    from .errors import type_name
    if copy is not None and copy.__class__ is not bool:
        raise TypeError(f"asarray(): argument 'copy' must be bool, not "
                        f"{type_name(type(copy))}")
    if not isinstance(obj, (Tensor, np.ndarray)):
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return tensor(obj, dtype=dtype, device=device, requires_grad=requires_grad)
    # (a NumPy array is read as the tensor sharing its memory first)
    t = obj if isinstance(obj, Tensor) or copy else as_tensor(obj)
    if isinstance(obj, np.ndarray) and copy:
        t = tensor(obj)
    wrong_device = device is not None and Device(device) != t.device
    wrong_dtype = dtype is not None and dtype is not t.dtype
    if copy is False and (wrong_device or wrong_dtype):
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{Device(device)}'."
                         if wrong_device else f"can't alias tensor with dtype "
                         f"'{t.dtype._legacy}' into dtype '{dtype._legacy}'.")
    if wrong_device or wrong_dtype:
        t = t.to(device=device, dtype=dtype)
    elif copy and t is obj:
        t = t.clone()
    if requires_grad and t.is_leaf:
        t.requires_grad_(True)
    return t


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



PLAIN = ["tensor", "as_tensor", "asarray", "from_numpy", "from_jax"]
