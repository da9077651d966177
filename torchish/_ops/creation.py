"""Tensor factories: zeros/ones/full/empty (+ their `_like` and `Tensor.new_*` forms), eye,
tril/triu_indices, scalar_tensor, complex / polar, fill_/zero_. Tensors from data (tensor,
as_tensor, from_numpy) are made in `creation_data.py`, dtype conversion (`to`) is in
`conversion.py`; the evenly spaced factories (arange, linspace, logspace) and the window
functions are in `creation_ranges.py`."""
import builtins
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit
from .. import _dtype as dt, _meta
from .._device import jax_device
from .._tensor import (Size, Tensor, _wrap, contiguous_format, memory_format as _memory_format,
                       preserve_format)
from .._memory_layout import lay_out, layout_strides, like_layout, memory_order
from .registry import Promote, op
from .plans import number_arg
from .indexing import check_fill_value
from . import float8, unsigned_support
from .pointwise_math import _complex_sgn
from .._layout import strided as _STRIDED
from .creation_data import _dev, _factory_requires_grad, _leaf, tensor

P = Promote


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
             memory_format=None, pin_memory=False):
        if not isinstance(input, Tensor):
            raise TypeError(f"{fn.__name__}_like(): argument 'input' (position 1) must be "
                            f"Tensor, not {type(input).__name__}")
        if layout is not None and layout is not _STRIDED:
            return _other_layout(fn.__name__ + "_like", input.shape, layout,
                                 dtype or input.dtype,
                                 device if device is not None else input.device, requires_grad)
        return like_layout(fn(input.shape, dtype=dtype or input.dtype,
                              device=device if device is not None else input.device,
                              requires_grad=requires_grad), input, memory_format)
    like.__name__ = like.__qualname__ = fn.__name__ + "_like"
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
    return base.permute(np.argsort(perm).tolist())


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


def _check_indices(name, row, col, offset, dtype):
    if row.__class__ is not int or col.__class__ is not int or offset.__class__ is not int:
        from .errors import _entry_name, _keywords_of_call, type_name
        from .overloads import _fits
        keywords = _keywords_of_call(_entry_name()[1])
        for i, (label, v) in enumerate((("row", row), ("col", col), ("offset", offset))):
            if not _fits("int", v):   # (the parser's `int` check)
                where = "" if label in keywords else f" (position {i + 1})"
                raise TypeError(f"{name}(): argument '{label}'{where} must be int, not "
                                f"{type_name(type(v))}")
    for label, v in (("row", row), ("col", col)):
        if v < 0:   # (sic: PyTorch prints no space before the number)
            raise RuntimeError(f"{label} must be non-negative, got{v}")
    if dtype in dt.SHELL:
        unsigned_support.refuse(name, dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    _check_indices("tril_indices", row, col, offset, dtype)
    r, c = np.tril_indices(row, offset, col)
    return _leaf(np.stack([r, c]).astype((dtype or dt.int64).np), device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    _check_indices("triu_indices", row, col, offset, dtype)
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
    return _polar(*jnp.broadcast_arrays(abs, angle))


@jax.custom_jvp
def _polar(r, theta):
    return jax.lax.complex(r * jnp.cos(theta), r * jnp.sin(theta))


@_polar.defjvp
def _polar_jvp(primals, tangents):
    # PyTorch's polar_backward reads the abs direction as sgn(result), not e^(i angle): no
    # gradient to abs where it is 0, and its sign flipped where abs is negative
    y = _polar(*primals)
    dr, dtheta = tangents
    return y, _complex_sgn(y) * dr + y * 1j * dtheta


def _bind():

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
PLAIN = ["zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
         "eye", "tril_indices", "triu_indices", "scalar_tensor"]
