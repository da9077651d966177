"""Indexing: `__getitem__` / `__setitem__`, `index_put`, `copy_`, `fill_`, masked selection
and scatter, `nonzero`, `where` (gather/scatter along a dim: gather_scatter.py).

Basic indexing (ints, slices, None, Ellipsis) gives a view, like PyTorch; anything with a tensor,
list or bool mask is advanced indexing (a copy). A bool mask has a data-dependent shape, so it is
turned into integer indices on the host (PyTorch does the same `nonzero`); that needs concrete
values, so masks inside traced code are only supported where the shape does not change
(`x[mask] = value`, which becomes a `where`).
"""
import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._warnings import warn_once
from .. import _dtype as dt
from .._views import _apply_steps, apply_template, split_steps
from ..autograd import grad_mode
from ..autograd.graph import _FREED_MSG as FREED
from ..autograd.saved_tensors import ABSENT
from .registry import Promote, op, check_inplace
from .errors import scalar_overflow
from . import float8, unsigned_support

P = Promote


def _is_basic(item):
    return item is None or item is Ellipsis or isinstance(item, (int, slice)) and \
        not isinstance(item, bool)


def _consumed(key):
    """How many dims of the input a key indexes."""
    return sum(1 for k in key if k is not None and k is not Ellipsis and not (
        isinstance(k, Tensor) and k.dtype is dt.bool) and not isinstance(k, bool)) + sum(
        k.ndim for k in key if isinstance(k, Tensor) and k.dtype is dt.bool)


def _expand_ellipsis(key, ndim, positions=False, consumed=None):
    """The key with its `...` expanded; with `positions`, also each item's place in `key`."""
    if consumed is None:
        consumed = _consumed(key)
    out, pos = [], []
    first = True
    for i, k in enumerate(key):
        if k is Ellipsis:  # PyTorch expands the first `...`; later ones select nothing
            if first:
                out.extend([slice(None)] * max(ndim - consumed, 0))
                pos.extend([i] * max(ndim - consumed, 0))
            first = False
        else:
            out.append(k)
            pos.append(i)
    return (out, pos) if positions else out


def _index_error(key, i, k, n, ndim):
    """PyTorch's error for an int `k` out of range (item `i` of the expanded `key`): the key
    as a whole is checked first, and the dim named is the int's place in the user's key."""
    if _consumed(key) > ndim:
        return IndexError(f"too many indices for tensor of dimension {ndim}")
    where = _expand_ellipsis(key, ndim, positions=True)[1][i]
    return IndexError(f"index {k} is out of bounds for dimension {where} with size {n}")


def _expand_basic(key, ndim):
    """`_expand_ellipsis` for a key of ints, slices, None and `...` only (the fast path)."""
    if Ellipsis not in key:
        return key
    i = key.index(Ellipsis)
    fill = max(ndim - (len(key) - key.count(None) - key.count(Ellipsis)), 0)
    return key[:i] + (slice(None),) * fill + tuple(k for k in key[i + 1:] if k is not Ellipsis)


_INT64_MAX = 2 ** 63 - 1


def _raw_bounds(k):
    """A slice's (start, end) as PyTorch's indexing passes them, before clamping: what its
    SliceBackward0 saves (an omitted start is 0, an omitted end INT64_MAX)."""
    def bound(v, default):
        return default if v is None else max(min(operator.index(v), _INT64_MAX),
                                             -_INT64_MAX - 1)
    return bound(k.start, 0), bound(k.stop, _INT64_MAX)


def basic_steps(shape, key, user_key=None, raws=None):
    """View steps for a basic index key (ints, slices, None), with PyTorch's errors;
    `user_key`: the key before its `...` was expanded (for error messages); `raws`, a list,
    gets each step's raw slice bounds (None for other steps)."""
    steps = []
    dim = 0  # position in the output being built
    src = 0  # position in the input
    for i, k in enumerate(key):
        if k is None:
            steps.append(("unsqueeze", dim))
            dim += 1
            continue
        if src >= len(shape):
            raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
        n = shape[src]
        if isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = k.indices(n)
            # skipped when it names the whole dim, but PyTorch keeps one with a negative
            # start even then (`x[-3:, 0]` of 3 rows records a SliceBackward0)
            if step != 1 or stop != n or start != 0 or k.start is not None and k.start != 0:
                steps.append(("slice", dim, start, max(stop, start), step))
                if raws is not None:
                    raws.extend([None] * (len(steps) - 1 - len(raws)) + [_raw_bounds(k)])
            dim += 1
        else:
            if not -n <= k < n:
                raise _index_error(key if user_key is None else user_key, i, k, n, len(shape))
            steps.append(("select", dim, k % n))
        src += 1
    return tuple(steps)


_STEP_NAMES = {"select": "SelectBackward0", "slice": "SliceBackward0",
               "unsqueeze": "UnsqueezeBackward0"}


def _steps_name(kinds, statics):
    template = statics["template"]
    return _STEP_NAMES[template[-1][0]] if template else "AliasBackward0"


def _concrete_steps(template, offsets):
    """The view steps (for stride metadata) from a template and its index values."""
    out, it = [], iter(offsets)
    for step in template:
        if step[0] == "select":
            out.append(("select", step[1], next(it)))
        elif step[0] == "slice":
            start = next(it)
            length, st = step[2], step[3]
            out.append(("slice", step[1], start, start + (length - 1) * st + 1 if length
                        else start, st))
        else:
            out.append(step)
    return out


def _step_field(kind, field):
    """`grad_fn._saved_<field>` of a one-step view node of this kind (SliceBackward0's dim,
    start, end, step; SelectBackward0's dim, index), from its concrete step, or for a slice
    given by a key, from the raw bounds `basic_view` appended to its offsets (an int64 read
    back as uint64, as PyTorch's node gives a negative one)."""
    at = {"dim": 1, "start": 2, "end": 3, "step": 4, "index": 2}[field]

    def value(template, offsets=None, **_):
        if len(template) != 1 or template[0][0] != kind:
            return ABSENT
        if offsets is None:   # (freed by backward)
            raise RuntimeError(FREED)
        if len(offsets) == 3 and field in ("start", "end"):
            return int(offsets[at - 1]) % 2 ** 64
        return _concrete_steps(template, [int(o) for o in offsets])[0][at]
    return value


@op(promote=P.NONE, grad_fn=_steps_name, saves=(), function=False, method=False,
    tensors=("input", "offsets"),
    view=lambda t, offsets, template: _concrete_steps(template, offsets),
    saved_as={"offsets": None, "start": _step_field("slice", "start"),
              "end": _step_field("slice", "end"), "step": _step_field("slice", "step"),
              "index": _step_field("select", "index"),
              "dim": lambda template, **_: template[0][1]
              if len(template) == 1 and template[0][0] in ("slice", "select", "unsqueeze")
              else ABSENT})
def _indexed_view(input, offsets, template):
    # index values are dynamic: one compiled function for every `x[i]`
    return apply_template(input, template, offsets)


def _records(t):
    """Whether an op on `t` records a graph node (grad mode on and `t` requires grad)."""
    return grad_mode.GRAD_ENABLED[0] and (t._grad_fn is not None or t._requires_grad)


def basic_view(input, steps, raws=()):
    """`input` viewed through basic-indexing steps (select / slice / unsqueeze); `raws`: the
    raw bounds of the key's slices, per step (None: not given), for the recorded nodes."""
    if len(steps) > 1 and _records(input):
        # PyTorch applies a key dim by dim and records a node per step (`x[0, 0]` is two
        # SelectBackward0); without a graph one fused view does the same in one dispatch
        for i, step in enumerate(steps):
            template, offsets = split_steps((step,))
            input = _indexed_view(input, _with_raw(offsets, raws, i), template)
        return input
    template, offsets = split_steps(steps)
    if raws and _records(input):
        offsets = _with_raw(offsets, raws, 0)
    return _indexed_view(input, offsets, template)


def _with_raw(offsets, raws, i):
    # trailing offsets the view's template does not read: only the node's fields do, and as
    # operands (not statics) they cost no compile per value
    raw = raws[i] if i < len(raws) else None
    return offsets if raw is None else offsets + list(raw)


@op(promote=P.NONE, grad_fn="IndexBackward0", saves=("indices",), function=False,
    method=False)
def _advanced_index(input, indices, key, steps=()):
    # `steps`: the key's basic part (ints, slices, None, bool scalars), applied first as in
    # PyTorch, so an int never counts as an advanced index (NumPy would move the indexed dims
    # of `x[:, idx, :, 0]` to the front)
    return _apply_steps(input, steps)[_rebuild_key(key, indices)]


def _rebuild_key(key, arrays):
    out = []
    for k in key:
        if isinstance(k, tuple) and k and k[0] == "T":
            out.append(arrays[k[1]])
        elif isinstance(k, tuple) and k and k[0] == "S":
            out.append(slice(*k[1:]))
        elif isinstance(k, tuple) and k and k[0] == "B":   # a bool scalar's size-1 dim
            out.append(np.zeros(int(k[1]), np.int64))
        else:
            out.append(k)
    return tuple(out)


def _to_index_tensor(k):
    from .creation_data import tensor
    if isinstance(k, Tensor):
        return k
    if isinstance(k, float):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         "Variables are valid indices (got float)")
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        return tensor(arr)
    if arr.size == 0:
        return tensor(arr.astype(np.int64))
    if not np.issubdtype(arr.dtype, np.integer):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tensor(arr.astype(np.int64))


def _normalize_key(self, key, raws=None):
    """(basic steps, advanced key, index tensors) for a user key; the advanced key is None
    for a basic key. As PyTorch, the basic part of a mixed key (ints, slices, None, bool
    scalars) is applied first, as view steps; the advanced key then indexes the result with
    index tensors and full slices only. `raws`: as `basic_steps`'."""
    if not isinstance(key, tuple):
        if (type(key) is int or type(key) is slice) and not self.ndim:
            raise IndexError("slice() cannot be applied to a 0-dim tensor." if type(key) is slice
                             else "invalid index of a 0-dim tensor. Use `tensor.item()` in "
                             "Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to "
                             "a number")
        key = (key,)
    if all(_is_basic(k) for k in key):
        return basic_steps(self.shape, _expand_basic(key, self.ndim), key, raws), None, None
    if any(isinstance(k, np.integer) for k in key):   # a NumPy int is an int (a select)
        return _normalize_key(self, tuple(int(k) if isinstance(k, np.integer) else k
                                          for k in key), raws)
    items = [k if _is_basic(k) or isinstance(k, bool) else _to_index_tensor(k) for k in key]
    consumed = _consumed(items)
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    items, where = _expand_ellipsis(items, self.ndim, True, consumed)
    steps, static, arrays = [], [], []
    shapes, checks = [], []   # the index tensors' shapes; their bounds checks, for later
    shape = list(self.shape)   # the shape after the steps so far
    dim = 0   # position in that shape
    for i, k in enumerate(items):
        if isinstance(k, Tensor) and k.dtype is dt.bool and k.ndim == 0 and not isinstance(
                k._data, jax.core.Tracer):
            k = bool(k.item())
        if k is None or isinstance(k, bool):
            # None: a new dim; True / False: a new dim indexed by [0] / [] (a copy)
            steps.append(("unsqueeze", dim))
            shape.insert(dim, 1)
            static.append(("S", None, None, None) if k is None else ("B", k))
            if k is not None:
                shapes.append((int(k),))
            dim += 1
            continue
        if isinstance(k, Tensor):
            if k.dtype is dt.bool:
                _check_mask(shape, k, dim)
                for idx in np.nonzero(np.asarray(k._data)):
                    static.append(("T", len(arrays)))
                    arrays.append(_int_tensor(idx))
                    shapes.append(idx.shape)
                dim += k.ndim
                continue
            if k.dtype.is_floating_point or k.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            checks.append((k, len(shapes), shape[dim]))
            shapes.append(k._data.shape)
            static.append(("T", len(arrays)))
            arrays.append(k)
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            n = shape[dim]
            start, stop, step = k.indices(n)
            if step != 1 or stop != n or start != 0 or k.start is not None and k.start != 0:
                steps.append(("slice", dim, start, max(stop, start), step))
                shape[dim] = len(range(start, stop, step))
                if raws is not None:
                    raws.extend([None] * (len(steps) - 1 - len(raws)) + [_raw_bounds(k)])
            static.append(("S", None, None, None))
        else:
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {where[i]} with "
                                 f"size {n}")
            steps.append(("select", dim, k % n))
            del shape[dim]
            continue
        dim += 1
    if len(shapes) > 1:
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    for k, position, n in checks:   # (PyTorch names the dim among the indexed ones)
        _check_bounds(k, position, n)
    return tuple(steps), tuple(static), arrays


def _int_tensor(idx):
    from .creation_data import tensor
    return tensor(np.asarray(idx, dtype=np.int64))


def _check_mask(shape, mask, dim):
    for i, (a, b) in enumerate(zip(mask.shape, shape[dim:dim + mask.ndim])):
        if a != b:
            raise IndexError(f"The shape of the mask [{', '.join(map(str, mask.shape))}] at "
                             f"index {i} does not match the shape of the indexed tensor "
                             f"[{', '.join(map(str, shape))}] at index {dim + i}")


def _check_bounds(index, dim, n):
    data = index._data
    if isinstance(data, jax.core.Tracer) or index.numel() == 0:
        return
    arr = np.asarray(data)
    bad = (arr >= n) | (arr < -n)
    if bad.any():
        v = int(arr[bad].reshape(-1)[0])
        raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {n}")


def getitem(self, key):
    key = _int_scalars(key)
    if isinstance(key, slice):
        # a lone slice records a SliceBackward0 even when it covers the whole dim
        # (`x[:]`), where `x[:, :]` is an alias
        if not self.shape:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        raws = []
        steps = basic_steps(self.shape, (key,), raws=raws) or (
            ("slice", 0, 0, self.shape[0], 1),)
        return basic_view(self, steps, raws or [_raw_bounds(key)])
    raws = []
    steps, static, arrays = _normalize_key(self, key, raws)
    if static is None:
        return basic_view(self, steps, raws)
    if steps and _records(self):
        return _advanced_index(basic_view(self, steps, raws), arrays, static)
    return _advanced_index(self, arrays, static, steps)


def _int_scalars(key):
    """PyTorch reads a 0-d integer tensor in a key (not uint8, which is a mask) as a Python
    int: `x[torch.tensor(1)]` is a select view. A traced one stays an index tensor."""
    items = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, Tensor) and k.ndim == 0 for k in items):
        return key
    out = tuple(int(k.item()) if isinstance(k, Tensor) and k.ndim == 0 and not (
        k.dtype.is_floating_point or k.dtype.is_complex or k.dtype in (dt.bool, dt.uint8))
        and not isinstance(k._data, jax.core.Tracer) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


@op(promote=P.NONE, grad_fn="IndexPutBackward0", inplace=True, function=False, method=False,
    saves=("indices",))
def _index_put(input, indices, values, key, accumulate=False):
    idx = _rebuild_key(key, indices)
    target = input[idx].shape   # (traced: only the shape is used)
    try:
        jnp.broadcast_shapes(values.shape, target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(target)}") from None
    values = values.astype(input.dtype)
    if accumulate and input.dtype == jnp.bool_:  # bool accumulation is a logical or
        return input.at[idx].max(values)
    if accumulate:
        return input.at[idx].add(values)
    return _put(input, values, indices, key)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _put(input, values, indices, key):
    return input.at[_rebuild_key(key, indices)].set(values)


def _put_fwd(input, values, indices, key):
    return _put(input, values, indices, key), (indices, values)


def _put_bwd(key, saved, grad):
    # PyTorch's: every value gets the gradient at the position it was written to, repeated
    # indices included (JAX's own rule gives it only to the value that won the write)
    indices, values = saved
    idx = _rebuild_key(key, indices)
    g_values = grad[idx]
    lead = g_values.ndim - values.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(values.shape)
                                      if n == 1 and g_values.shape[lead + i] != 1)
    g_values = jnp.sum(g_values, axis=axes, keepdims=False).reshape(values.shape) if axes \
        else g_values
    return grad.at[idx].set(0), g_values, None


_put.defvjp(_put_fwd, _put_bwd)


@op(promote=P.NONE, grad_fn="IndexPutBackward0", inplace=True, function=False, method=False,
    saves=("mask",))
def _mask_put(input, mask, value):
    # `x[mask] = v` with a full-shape mask: index_put_ for autograd, a `where` to compute
    # (boolean indexing has no static shape inside traced code)
    return jnp.where(mask, jnp.asarray(value).astype(input.dtype), input)


@op(promote=P.NONE, grad_fn="torch::autograd::CopyBackwards", inplace=True, function=False,
    method=False, saves=(), scalar_operands=("other",))
def copy(input, other, non_blocking=False):   # (PyTorch's binding names `src` `other`)
    from .conversion import cast
    if jnp.shape(other) != input.shape:   # (as an in-place op's broadcast: `other` into input)
        from .errors import broadcast_error
        message = broadcast_error((input.shape, jnp.shape(other)))
        if message:
            raise RuntimeError(message)
        shape = np.broadcast_shapes(input.shape, jnp.shape(other))
        if shape != input.shape:
            raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    return jnp.broadcast_to(cast(other, input.dtype), input.shape)


_copy_on_one_device = Tensor.copy_


def _copy_(self, other, non_blocking=False):
    """`Tensor.copy_`: as PyTorch, `other` may live on another device (it is moved first)."""
    if isinstance(other, Tensor) and other.device != self.device and not _traced(self):
        other = other.to(self.device)
    if isinstance(other, Tensor):
        from .conversion import warn_if_complex_to_real
        warn_if_complex_to_real(other.dtype, self.dtype)
    return _copy_on_one_device(self, other, non_blocking)


Tensor.copy_ = _copy_


def _traced(t):
    return isinstance(t._storage.data, jax.core.Tracer)


def _fill_name(kinds, statics):
    return "FillBackward2" if isinstance(kinds[1], type) else "FillBackward3"


def _fill_check(compute, input, value):
    # (PyTorch's fill_ of a one-element half tensor writes the number unchecked: inf)
    if input.numel() == 1 and input.dtype in (dt.float16, dt.bfloat16):
        return None
    if input.dtype in dt.FLOAT8:
        return float8.fill_error(value, input.dtype.np, input.numel())
    return scalar_overflow(value, input.dtype)


def _filled_with(value, input):
    return jnp.broadcast_to(float8.number_as(value, input.dtype), input.shape)


@op(promote=P.NONE, grad_fn=_fill_name, inplace=True, function=False, method=False,
    saves=(), check=_fill_check)
def _fill(input, value):
    return _filled_with(value, input)


def _filled_name(kinds, statics):
    return "FillBackward0" if isinstance(kinds[1], type) else "FillBackward1"


@op(promote=P.NONE, grad_fn=_filled_name, function=False, method=False, saves=(),
    check=_fill_check)
def _filled(input, value):
    return _filled_with(value, input)


def check_fill_value(value):
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                           f"with {value.ndim} dimensions.")


def fill(input, value):
    """`torch.fill`: a new tensor like `input` holding `value` (fill_ out of place)."""
    check_fill_value(value)
    return _filled(input, value)


@op(promote=P.NONE, grad_fn="ZeroBackward0", inplace=True, function=False, method=False,
    saves=())
def _zero(input):
    if float8.is_float8(input.dtype):   # (bits 0: float8_e8m0fnu has no zero, 0x00 is 2**-127)
        return jax.lax.bitcast_convert_type(jnp.zeros(input.shape, jnp.uint8), input.dtype)
    return jnp.zeros_like(input)


def _expand_check(shape, target, kind=None):
    """PyTorch's error for copying a `shape` tensor into a `target` one (expand, which checks
    from the last dimension). `kind`: the tensor's type as ATen's internal expand names it
    ("CPUBoolType"), for its error on too many dimensions."""
    if kind is not None and len(shape) > len(target):
        raise RuntimeError(f"expand({kind}{{{list(shape)}}}, size={list(target)}): the number "
                           f"of sizes provided ({len(target)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for i in reversed(range(len(shape))):
        n = shape[i]
        t = target[lead + i] if lead + i >= 0 else None
        if n != 1 and n != t:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing "
                               f"size ({n}) at non-singleton dimension {lead + i}.  Target "
                               f"sizes: {list(target)}.  Tensor sizes: {list(shape)}")


def _assigned_number(self, value):
    """A number written by `x[key] = value`, as PyTorch reads it: an int (NumPy integers too)
    as a long long, a float (np.float64 too) as a double, a complex as one; other NumPy
    scalars refused; then c10's checked conversion to x's dtype (half types take any double,
    too large is inf, but no complex part)."""
    if isinstance(value, np.generic) and not isinstance(value, (np.integer, float, complex)):
        raise TypeError(f"can't assign a numpy.{type(value).__name__} to a {self.type()}")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = int(value)
        if not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
    elif isinstance(value, (float, complex)):   # (np.float64 / np.complex128: as Python's)
        value = complex(value) if isinstance(value, complex) else float(value)
    if self.dtype in (dt.float16, dt.bfloat16) or self.dtype in dt.FLOAT8:   # (unchecked)
        if isinstance(value, complex) and value.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
    else:
        error = scalar_overflow(value, self.dtype)
        if error is not None:
            raise error
    return value


_NUMBERS = (bool, int, float, complex, np.number, np.bool_)


def setitem(self, key, value):
    if not isinstance(key, tuple):
        key = (key,)
    if isinstance(value, _NUMBERS):
        value = _assigned_number(self, value)
    elif not isinstance(value, (Tensor, jax.Array)):
        # PyTorch assigns a Tensor or a number only (not a list, nor a numpy array: convert
        # it first); a JAX array is torchish's own data, written by its library code
        from .errors import type_name
        raise TypeError(f"can't assign a {type_name(type(value))} to a {self.type()}")
    if len(key) == 1 and isinstance(key[0], Tensor) and key[0].dtype is dt.bool and \
            key[0].shape == self.shape and (not isinstance(value, Tensor) or value.ndim == 0):
        check_inplace(self)
        if self.dtype in dt.SHELL:   # (PyTorch fills through masked_fill: no such kernel)
            raise NotImplementedError(f'"masked_fill" not implemented for '
                                      f"'{self.dtype._legacy}'")
        Tensor._mask_put_(self, key[0], value)
        return
    if len(key) == 1 and isinstance(key[0], bool):
        # a lone bool: PyTorch writes `x.unsqueeze(0)` for True, nothing for False
        if not key[0]:
            return
        steps, static, arrays = (("unsqueeze", 0),), None, None
    else:
        steps, static, arrays = _normalize_key(self, _int_scalars(key))
    if isinstance(value, _NUMBERS) and self.dtype not in (dt.float16, dt.bfloat16):
        from .creation import full   # (checked above: converted as `full` converts)
        value = full((), value.real if isinstance(value, complex) and not
                     self.dtype.is_complex else value, dtype=self.dtype, device=self.device)
    elif not isinstance(value, Tensor):
        from .creation_data import tensor
        if isinstance(value, complex) and not self.dtype.is_complex:
            value = value.real   # (a half tensor: checked above, no imaginary part)
        value = tensor(value, dtype=self.dtype, device=self.device)
    # through a view, as PyTorch: the base gets CopySlices
    target = basic_view(self, steps) if steps else self
    if static is None and value.ndim == 0 and target.shape != value.shape:
        target._fill_(value)   # (PyTorch fills from a 0-dim value: FillBackward3)
        return
    if value.ndim and value.shape[0] == 1 and (static is not None or
                                               value.shape != target.shape):
        # PyTorch views the value without its leading size-1 dims first (ViewBackward0)
        lead = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
        value = value.view(value.shape[lead:])
    if static is None:
        if value.shape != target.shape and (value.ndim > target.ndim or _records(value)):
            value = value.expand(target.shape)   # (PyTorch's node, and its error)
        elif value.shape != target.shape:
            _expand_check(value.shape, target.shape)   # (copy_ alone would not expand)
            if value._storage is target._storage:
                # PyTorch copies from the expanded value, whose overlap with the target its
                # copy_ cannot tell (`x.view(4, 10)[:] = x[:10]` is allowed)
                value = value.expand(target.shape)
        target.copy_(value)
        return
    check_inplace(target)
    Tensor._index_put_(target, arrays, value, static)


def index_put_(self, indices, values, accumulate=False):
    steps, static, arrays = _normalize_key(self, tuple(indices))
    target = basic_view(self, steps) if steps else self
    Tensor._index_put_(target, arrays, values, static, accumulate)
    return self


def index_put(self, indices, values, accumulate=False):
    steps, static, arrays = _normalize_key(self, tuple(indices))
    if steps:   # (a 0-d bool index: a new dim)
        return index_put_(self.clone(), indices, values, accumulate)
    return _index_put(self, arrays, values, static, accumulate)


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
Tensor.index_put_ = index_put_
Tensor.index_put = index_put


@op(promote=P.NONE, grad_fn="MaskedSelectBackward0", saves=("indices",), function=False,
    method=False)
def _masked_select(input, indices, shape):
    return jnp.broadcast_to(input, shape)[tuple(indices)]


def masked_select(input, mask):
    shape = jnp.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    if mask.dtype is not dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    # one node on `input` itself (PyTorch's MaskedSelectBackward0 broadcasts inside), the
    # selected positions found on the host as for a boolean index
    m = np.broadcast_to(np.asarray(mask._data), shape)
    if not m.ndim:   # 0-d: zero or one element, as a 1-d result
        input, m, shape = input.reshape(1), m.reshape(1), (1,)
    return _masked_select(input, [_int_tensor(i) for i in np.nonzero(m)], tuple(shape))


def nonzero(input, *, as_tuple=False):
    from .creation_data import tensor
    if input.dtype in dt.FEW_KERNELS:   # PyTorch has no nonzero kernel for these
        unsigned_support.refuse("nonzero", input.dtype)
    arr = np.asarray(input._data)
    idx = np.nonzero(arr) if arr.ndim else np.nonzero(arr.reshape(1))
    if as_tuple:
        return tuple(tensor(i.astype(np.int64), device=input.device) for i in idx)
    return tensor(np.stack(idx, axis=1).astype(np.int64).reshape(-1, max(arr.ndim, 1))
                  if arr.ndim else np.zeros((int(arr.item() != 0), 0), np.int64),
                  device=input.device)


def argwhere(input):
    return nonzero(input)


def where(condition, input=None, other=None, *, out=None):
    """torch.where(condition, input, other); `where(condition)` is nonzero(as_tuple=True)."""
    if not isinstance(condition, Tensor):   # (PyTorch's parser refuses it)
        from .overloads import parser_error
        error = parser_error("where", False, [v for v in (condition, input, other)
                                              if v is not None], {})
        if error is not None:
            raise error
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() missing 1 required positional argument")
    from .pointwise_select import where as where_op
    if getattr(condition, "dtype", None) is dt.uint8:
        warn_once("where received a uint8 condition tensor. This behavior is deprecated and "
                  "will be removed in a future version of PyTorch. Use a boolean condition "
                  "instead.")
    return where_op(condition, input, other)


def _masked_scatter_check(compute, input, mask, source):
    # the count needs the mask's values, so only concrete operands are checked (traced, a
    # position past the source's end reads its last element)
    if not isinstance(mask, Tensor) or not isinstance(source, Tensor) or not mask.numel():
        return None
    try:
        shape = jnp.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    except ValueError:   # (the op's own error)
        return None
    ones = int(np.count_nonzero(np.asarray(mask._data))) * (math.prod(shape) // mask.numel())
    if source.numel() < ones:
        return RuntimeError("Number of elements of source < number of ones in mask")
    return None


@op(promote=P.NONE, grad_fn="MaskedScatterBackward0", inplace=True, saves=("mask",),
    check=_masked_scatter_check)
def masked_scatter(input, mask, source):
    """The k-th True position of `mask` (broadcast with `input`) takes the k-th element of the
    flattened `source`; the others keep `input`."""
    from .errors import broadcast_error
    from .pointwise import legacy_name
    message = broadcast_error([mask.shape, input.shape])
    if message:
        raise RuntimeError(message)
    if source.dtype != input.dtype:   # (PyTorch's message has no space after "got")
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{legacy_name(input)} and {legacy_name(source)}")
    if mask.dtype != jnp.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {legacy_name(mask)}")
    shape = jnp.broadcast_shapes(input.shape, mask.shape)
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    flat = jnp.broadcast_to(input, shape).reshape(-1)
    if not source.size or not m.size:
        return flat.reshape(shape)
    k = jnp.clip(jnp.cumsum(m, dtype=jnp.int32) - 1, 0, source.size - 1)
    return jnp.where(m, source.reshape(-1)[k], flat).reshape(shape)


_masked_scatter_inplace = Tensor.masked_scatter_


def masked_scatter_(self, mask, source):
    """In place, `self` keeps its shape: PyTorch checks the dtypes, then expands the mask to
    `self` (its errors), before the op."""
    if isinstance(self, Tensor) and isinstance(source, Tensor) and source.dtype != self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{self.dtype._legacy} and {source.dtype._legacy}")
    if isinstance(self, Tensor) and isinstance(mask, Tensor) and mask.shape != self.shape:
        _expand_check(mask.shape, self.shape, f"{'CPU' if mask.device.type == 'cpu' else 'CUDA'}"
                                              f"{mask.dtype._legacy}Type")
    return _masked_scatter_inplace(self, mask, source)


Tensor.masked_scatter_ = masked_scatter_


for _n in ("masked_select", "nonzero", "argwhere"):
    setattr(Tensor, _n, globals()[_n])

PLAIN = ["where", "masked_select", "nonzero", "argwhere", "index_put", "index_put_", "fill"]
