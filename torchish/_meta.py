"""The `meta` device: tensors with a shape and a dtype but no data.

A meta tensor's storage holds a `MetaArray` (a `jax.ShapeDtypeStruct`) instead of a JAX array.
The op dispatcher hands any op with a meta operand to `dispatch` / `dispatch_inplace` here:
the op's own forward runs under `jax.eval_shape` (cached per plan and operand shapes), so
every registry op gets meta behaviour at once, with the shape and dtype errors of its eager
path, and no memory is allocated. Autograd records nodes as usual; a backward kernel (an
`EagerJit`) handed MetaArrays answers with `shapes_of` (see `_eager_jit.py`), so `backward()`
and optimizer steps yield meta tensors too. Reading values raises PyTorch's errors.
"""
import math

import jax
import numpy as np

from ._device import device

__all__ = ["MetaArray", "META", "ACTIVE", "NO_DATA", "empty", "involved", "has_meta",
           "shapes_of", "dispatch", "dispatch_inplace"]

META = device("meta")
ACTIVE = [False]   # set once a meta tensor exists: until then the dispatcher skips the check
NO_DATA = "Cannot copy out of meta tensor; no data!"


class MetaArray(jax.ShapeDtypeStruct):
    """Shape and dtype without data: reading values raises PyTorch's error."""
    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def astype(self, dtype):
        return MetaArray(self.shape, dtype)

    def transpose(self, axes):
        return MetaArray(tuple(self.shape[a] for a in axes), self.dtype)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        if -1 in shape:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        return MetaArray(shape, self.dtype)

    def __add__(self, other):   # (autograd accumulates gradients with `+`)
        return MetaArray(np.broadcast_shapes(self.shape, other.shape),
                         np.result_type(self.dtype, other.dtype))

    __radd__ = __add__


def empty(shape, np_dtype):
    ACTIVE[0] = True
    return MetaArray(tuple(shape), np.dtype(np_dtype))


def involved(tensors):
    return any(t is not None and t._storage.device.type == "meta" for t in tensors)


def has_meta(*trees):
    return any(isinstance(x, MetaArray) for x in jax.tree_util.tree_leaves(trees))


def shapes_of(fn, args, kwargs):
    """What `fn(*args, **kwargs)` would return, as MetaArrays (no computation)."""
    return _as_meta(jax.eval_shape(lambda a, k: fn(*a, **k), args, kwargs))


def _as_meta(tree):
    return jax.tree_util.tree_map(lambda s: MetaArray(s.shape, s.dtype), tree)


def _signature(x):
    if isinstance(x, tuple):   # a fused view operand (base, offsets)
        return tuple(_signature(v) for v in x)
    if hasattr(x, "shape"):
        return (tuple(x.shape), np.dtype(x.dtype))
    return type(x)


_SHAPES = {}   # (plan, operand signatures) -> output MetaArrays


def _eval(plan, leaves):
    key = (plan, tuple(_signature(x) for x in leaves))
    try:
        return _SHAPES[key]
    except KeyError:
        pass
    try:
        out = _as_meta(jax.eval_shape(plan.fwd, *leaves))
    except (TypeError, ValueError) as exc:
        from ._ops.errors import translate
        raise translate(plan, [x[0] if isinstance(x, tuple) else x for x in leaves],
                        exc) from None
    _SHAPES[key] = out
    return out


def check_devices(tensors, definition=None, targs=()):
    """PyTorch's error for meta and non-meta operands (a CPU 0-dim tensor is a scalar, and
    CPU index tensors may index a meta tensor)."""
    indices = {id(x) for name, a in zip(definition.tensors if definition else (), targs)
               if name in ("index", "indices")
               for x in (a if isinstance(a, (list, tuple)) else [a])}
    live = [t for t in tensors if t is not None and id(t) not in indices]
    expected = next((t.device for t in live if t.device.type == "meta" or t.ndim), None)
    if expected is None:
        return META
    for t in live:
        if t.device.type != expected.type and not (t.device.type == "cpu" and t.ndim == 0):
            raise RuntimeError(f"Tensor on device {t.device} is not on the expected device "
                               f"{expected}!")
    return expected


def dispatch(definition, plan, targs, leaves, tensors, kinds, record):
    """An out-of-place op with a meta operand (see `registry.dispatch`)."""
    from ._ops import registry
    dev = check_devices(tensors, definition, targs)
    out = _eval(plan, leaves)
    outs, result = registry.wrap_result(definition, out, dev)
    if definition.layout is not None:
        definition.layout(definition, tensors, outs, plan._kw)
    if record:
        node = registry._record(plan, leaves, tensors, outs, kinds)
        if node is not None:
            node._vjp = _shape_vjp(node._vjp)
    return result


def _shape_vjp(vjp):
    def meta_vjp(leaves, cts):
        return shapes_of(vjp, (leaves, cts), {})
    return meta_vjp


def dispatch_inplace(definition, plan, targs, leaves, tensors, kinds, record):
    """An in-place op with a meta operand (see `registry.dispatch_inplace`): checks shapes,
    records for autograd, writes no data."""
    self = targs[0]
    check_devices(tensors, definition, targs)
    out = _eval(plan, leaves)
    if isinstance(out, (tuple, list)):
        out = out[0]
    if tuple(out.shape) != tuple(self.shape):
        # (PyTorch's meta kernels word it so: a Size, then a tuple)
        raise RuntimeError(f"output with shape {self.shape!r} doesn't match the broadcast "
                           f"shape {tuple(out.shape)}")
    from ._ops.registry import write_inplace
    record = record and (self.dtype.is_floating_point or self.dtype.is_complex)
    write_inplace(self, out, plan if record else None, leaves, tensors, kinds)
    return self
