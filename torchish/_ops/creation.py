"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty(+_like), arange,
linspace, logspace, eye, and dtype conversion (`to`, `float()`, ...)."""
import builtins
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .._device import device as Device, get_default_device, jax_device, CPU
from .._tensor import Tensor, _wrap, _to_python
from ..autograd import grad_mode
from .registry import Promote, op, call_jax

P = Promote


def _dev(device):
    return get_default_device() if device is None else Device(device)


def _place(array, device):
    """Put a host array (NumPy) on a torchish device as a JAX array."""
    dev = _dev(device)
    return jax.device_put(array, jax_device(dev)), dev


def _leaf(array, device, requires_grad):
    arr, dev = _place(array, device)
    t = _wrap(arr, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data):
    """PyTorch's dtype inference for Python data (bool < int < float < complex)."""
    kind = 0
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            kind = builtins.max(kind, 10 + dt.ALL.index(x.dtype))
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, builtins.bool) or isinstance(x, np.bool_):
            kind = builtins.max(kind, 1)
        elif isinstance(x, (int, np.integer)):
            kind = builtins.max(kind, 2)
        elif isinstance(x, (float, np.floating)):
            kind = builtins.max(kind, 3)
        elif isinstance(x, (complex, np.complexfloating)):
            kind = builtins.max(kind, 4)
        else:
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    if kind >= 10:
        return None
    return {0: dt.get_default_dtype(), 1: dt.bool, 2: dt.int64, 3: dt.get_default_dtype(),
            4: dt.default_complex()}[kind]


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
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_nested_tolist(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        # torch.tensor(t) copies (PyTorch warns and suggests clone().detach())
        arr = data._data
        if dtype is not None:
            arr = arr.astype(dtype.np)
        return _leaf(np.asarray(arr), device if device is not None else data.device,
                     requires_grad)
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.asarray(data)
        d = dtype or dt.from_np(arr.dtype)
        return _leaf(arr.astype(d.np), device, requires_grad)
    if isinstance(data, jax.Array):
        arr = data if dtype is None else data.astype(dtype.np)
        t = _wrap(arr)
        return t.requires_grad_(requires_grad) if requires_grad else t
    inferred = _infer_dtype(data)
    d = dtype or inferred
    if d is None:  # a list of tensors: their promoted dtype
        d = _promote_all([x.dtype for x in _flatten(data) if isinstance(x, Tensor)])
    arr = _to_numpy(data, None)
    if arr.dtype == object:
        raise ValueError("expected sequence of length consistent with the first element")
    if d is dt.int64 and arr.dtype.kind == "u":
        raise RuntimeError("Overflow when unpacking long")
    return _leaf(arr.astype(d.np), device, requires_grad)


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
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = dt.from_np(ndarray.dtype)
    return _leaf(np.asarray(ndarray, order="C").astype(d.np, copy=False), CPU, False)


def from_jax(array):
    """A tensor holding a JAX array (no copy)."""
    return _wrap(jnp.asarray(array))


def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _filled(size, value, dtype, device, requires_grad):
    d = dtype or dt.get_default_dtype()
    dev = _dev(device)
    arr = jnp.full(size, value, dtype=d.np, device=jax_device(dev))
    t = _wrap(arr, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _filled(_size(size), 0, dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, memory_format=None):
    return _filled(_size(size), 1, dtype, device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    # JAX has no uninitialised memory: empty is zeros
    return _filled(_size(size), 0, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if dtype is None:
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        dtype = dt.scalar_dtype(fill_value)
    return _filled(_size((size,) if isinstance(size, int) else (tuple(size),)), fill_value,
                   dtype, device, requires_grad)


def _like(fn):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        return fn(input.shape, dtype=dtype or input.dtype,
                  device=device if device is not None else input.device,
                  requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return full(input.shape, fill_value, dtype=dtype or input.dtype,
                device=device if device is not None else input.device,
                requires_grad=requires_grad)


def _scalar(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dt.get_default_dtype() if is_float else dt.int64
    n = math.ceil((end - start) / step)
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.max(n, 0)
    # PyTorch computes start + i * step in double (int64 for integer dtypes), then casts.
    if dtype.is_floating_point or dtype.is_complex:
        values = start + np.arange(n, dtype=np.float64) * step
    else:
        values = int(start) + np.arange(n, dtype=np.int64) * int(step) if all(
            isinstance(v, int) for v in (start, step)) else np.floor(
            start + np.arange(n, dtype=np.float64) * step)
    return _leaf(values.astype(dtype.np), device, requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    d = dtype or dt.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    return _leaf((start + np.arange(n, dtype=np.float64) * step).astype(d.np), device,
                 requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    start, end = _scalar(start), _scalar(end)
    d = dtype or dt.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    work = np.float64 if d in (dt.float64, dt.int64, dt.int32) or not d.is_floating_point \
        else np.float32
    if d.is_complex:
        work = d.np
    if steps == 1:
        values = np.array([start], dtype=work)
    else:
        # PyTorch fills from both ends (start + i*step for the first half, end - ... after)
        step = (work(end) - work(start)) / work(builtins.max(steps - 1, 1))
        i = np.arange(steps)
        half = steps // 2
        values = np.where(i < half, work(start) + step * i.astype(work),
                          work(end) - step * (steps - i - 1).astype(work)).astype(work)
    if not (d.is_floating_point or d.is_complex):
        values = np.trunc(values)
    return _leaf(values.astype(d.np), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    d = dtype or dt.get_default_dtype()
    exps = linspace(start, end, steps, dtype=dt.float64)._data
    values = np.power(np.float64(base), np.asarray(exps))
    return _leaf(values.astype(d.np), device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    d = dtype or dt.get_default_dtype()
    return _leaf(np.eye(n, n if m is None else m, dtype=d.np), device, requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.tril_indices(row, offset, col)
    return _leaf(np.stack([r, c]).astype((dtype or dt.int64).np), device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    r, c = np.triu_indices(row, offset, col)
    return _leaf(np.stack([r, c]).astype((dtype or dt.int64).np), device, False)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    return tensor(s, dtype=dtype or dt.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


@op(promote=P.NONE, grad_fn="ComplexBackward0", method=False)
def complex(real, imag):
    return jax.lax.complex(real, imag)


@op(promote=P.NONE, grad_fn="PolarBackward0", method=False)
def polar(abs, angle):
    return jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle))


@op(promote=P.NONE, grad_fn="RealBackward0", method=False)
def real(input):
    return jnp.real(input)


@op(promote=P.NONE, grad_fn="ImagBackward0", method=False)
def imag(input):
    return jnp.imag(input)


# ---- dtype / device conversion -----------------------------------------------------------

@op(promote=P.NONE, grad_fn="ToCopyBackward0", function=False, method=False, saves=())
def _to_dtype(input, dtype):
    return input.astype(dtype.np)


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, Device, int)):
            device = a
        elif isinstance(a, builtins.bool):
            pass
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {list(kwargs)}")
    return dtype, (None if device is None else Device(device)), copy


def to(self, *args, **kwargs):
    dtype, device, copy = _parse_to(args, kwargs)
    out = self
    if dtype is not None and dtype is not self.dtype:
        out = _to_dtype(out, dtype)
    if device is not None and _norm(device) != self.device:
        dev = _norm(device)
        target = jax_device(dev)
        out = call_jax("ToCopyBackward0", lambda a: jax.device_put(a, target), [out])
        out._storage.device = dev
    if copy and out is self:
        out = self.clone()
    return out


def _norm(device):
    if device.type == "cuda" and device.index is None:
        return Device("cuda", 0)
    return device


def _conversion(dtype):
    def convert(self, memory_format=None):
        return to(self, dtype)
    convert.__name__ = dtype.name
    return convert


def _bind():
    Tensor.to = to
    for name, d in (("float", dt.float32), ("double", dt.float64), ("half", dt.float16),
                    ("bfloat16", dt.bfloat16), ("long", dt.int64), ("int", dt.int32),
                    ("short", dt.int16), ("char", dt.int8), ("byte", dt.uint8),
                    ("bool", dt.bool), ("cfloat", dt.complex64), ("cdouble", dt.complex128)):
        setattr(Tensor, name, _conversion(d))
    Tensor.real = property(lambda self: real(self))
    Tensor.imag = property(lambda self: imag(self))

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def _new(fn):
        def method(self, *size, dtype=None, device=None, requires_grad=False, **kw):
            return fn(*size, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)
        return method

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    Tensor.new_tensor = new_tensor
    Tensor.new_zeros = _new(zeros)
    Tensor.new_ones = _new(ones)
    Tensor.new_empty = _new(empty)
    Tensor.new_full = new_full

    def fill_(self, value):
        src = value if isinstance(value, Tensor) else full((), value, dtype=self.dtype,
                                                           device=self.device)
        return self.copy_(src)

    def zero_(self):
        return fill_(self, 0)

    Tensor.fill_ = fill_
    Tensor.zero_ = zero_


_bind()

PLAIN = ["tensor", "as_tensor", "asarray", "from_numpy", "from_jax", "zeros", "ones", "empty",
         "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace",
         "logspace", "eye", "tril_indices", "triu_indices", "scalar_tensor"]
