"""Views: how a tensor reads its storage's array (see `_storage.py` for the storages).

A `View` is the chain of view steps from the base array (applied with fast native JAX ops,
compiled once per chain, with select indices and slice starts passed as arguments so a loop
over `x[i]` does not recompile) plus PyTorch's stride metadata (size, stride, storage offset).
Each step kind has a metadata transform (`_meta_*`) and an array transform (`_apply_step`);
a write through a view scatters into the base at the flat positions the metadata gives.

PyTorch's conjugate and negative bits are steps too ("conj", "neg": elementwise, so they
commute with every other step and leave the metadata alone): a view reads its base conjugated
or negated, a write through it stores the value conjugated or negated back (`View.bits`).
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ._eager_jit import eager_jit
from ._storage import LaidOutStorage, _reinterpret


def contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class View:
    """How a view reads its base: `steps` from the base array; `size/stride/offset` as torch."""
    __slots__ = ("steps", "size", "stride", "offset", "_index_map", "_split", "_bits")

    def __init__(self, steps, size, stride, offset):
        self.steps = steps
        self.size = size
        self.stride = stride
        self.offset = offset
        self._index_map = None
        self._split = None
        self._bits = None

    def bits(self):
        """PyTorch's conjugate and negative bits of the view: CONJ | NEG, each set where its
        steps occur an odd number of times (a conj of a conj view clears the bit)."""
        bits = self._bits
        if bits is None:
            bits = 0
            for step in self.steps:
                kind = step[0]
                if kind == "conj":
                    bits ^= CONJ
                elif kind == "neg":
                    bits ^= NEG
            self._bits = bits
        return bits

    def split(self):
        """`split_steps(self.steps)`, worked out once (a view never changes)."""
        if self._split is None:
            template, offsets = split_steps(self.steps)
            self._split = (template, tuple(offsets))
        return self._split

    def index_map(self):
        """Flat positions in the base of every element of the view (row-major)."""
        if self._index_map is None:
            idx = np.full(self.size, self.offset, dtype=np.int64)
            for d, (n, s) in enumerate(zip(self.size, self.stride)):
                shape = [1] * len(self.size)
                shape[d] = n
                idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
            self._index_map = idx
        return self._index_map


CONJ, NEG = 1, 2


def apply_bits(x, bits):
    """`x` conjugated and/or negated as `bits` say (each its own inverse: reads and writes)."""
    if bits & CONJ:
        x = jnp.conj(x)
    if bits & NEG:
        x = jnp.negative(x)
    return x


def base_view(shape):
    shape = tuple(shape)
    return View((), shape, _strides_of(shape), 0)


@functools.lru_cache(maxsize=4096)
def _strides_of(shape):
    return contiguous_strides(shape)


# ---- the view steps: metadata transform + array transform, one entry per kind ------------

def _meta_select(size, stride, offset, dim, index):
    return (size[:dim] + size[dim + 1:], stride[:dim] + stride[dim + 1:],
            offset + index * stride[dim])


def _meta_slice(size, stride, offset, dim, start, stop, step):
    n = max(0, (stop - start + step - 1) // step)
    return (size[:dim] + (n,) + size[dim + 1:],
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:],
            offset + (start * stride[dim] if n else 0))


def _meta_permute(size, stride, offset, perm):
    return tuple(size[p] for p in perm), tuple(stride[p] for p in perm), offset


def _meta_unsqueeze(size, stride, offset, dim):
    new_stride = stride[dim] * size[dim] if dim < len(size) else 1
    return size[:dim] + (1,) + size[dim:], stride[:dim] + (new_stride,) + stride[dim:], offset


def _meta_squeeze(size, stride, offset, dims):
    keep = [d for d in range(len(size)) if d not in dims]
    return tuple(size[d] for d in keep), tuple(stride[d] for d in keep), offset


def _meta_expand(size, stride, offset, shape):
    lead = len(shape) - len(size)
    new_stride = [stride[d] if n == shape[lead + d] else 0 for d, n in enumerate(size)]
    for i in reversed(range(lead)):   # a new dim of size 1 gets the stride of the dims after
        after = new_stride[0] * shape[i + 1] if size else 0   # it (0-d: none)
        new_stride.insert(0, after if shape[i] == 1 else 0)
    return tuple(shape), tuple(new_stride), offset


def _meta_diagonal(size, stride, offset, diag_offset, dim1, dim2):
    if diag_offset >= 0:
        n = max(0, min(size[dim1], size[dim2] - diag_offset))
        offset += diag_offset * stride[dim2] if n else 0
    else:
        n = max(0, min(size[dim1] + diag_offset, size[dim2]))
        offset -= diag_offset * stride[dim1] if n else 0
    keep = [d for d in range(len(size)) if d not in (dim1, dim2)]
    return (tuple(size[d] for d in keep) + (n,),
            tuple(stride[d] for d in keep) + (stride[dim1] + stride[dim2],), offset)


def _meta_reshape(size, stride, offset, shape):
    new_stride = view_strides(size, stride, shape)
    assert new_stride is not None
    return tuple(shape), new_stride, offset


def _meta_as_strided(size, stride, offset, new_size, new_stride, new_offset):
    return tuple(new_size), tuple(new_stride), new_offset


def _meta_unfold(size, stride, offset, dim, length, step):
    n = (size[dim] - length) // step + 1
    return (size[:dim] + (n,) + size[dim + 1:] + (length,),
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:] + (stride[dim],), offset)


def _meta_retype(size, stride, offset, new_size, new_stride, new_offset):
    # a dtype view's metadata, stood in while its op records (its steps are built apart)
    return tuple(new_size), tuple(new_stride), new_offset


def _meta_same(size, stride, offset):
    return size, stride, offset


_META = {"conj": _meta_same, "neg": _meta_same, "select": _meta_select, "slice": _meta_slice,
         "permute": _meta_permute,
         "unsqueeze": _meta_unsqueeze, "squeeze": _meta_squeeze, "expand": _meta_expand,
         "diagonal": _meta_diagonal, "reshape": _meta_reshape, "as_strided": _meta_as_strided,
         "unfold": _meta_unfold, "retype": _meta_retype}


def _apply_step(x, step, base_size):
    kind, *a = step
    if kind == "select":
        return jax.lax.index_in_dim(x, a[1], a[0], keepdims=False)
    if kind == "slice":
        dim, start, stop, st = a
        stop = max(stop, start)
        return jax.lax.slice_in_dim(x, start, stop, st, dim)
    if kind == "permute":
        return jnp.transpose(x, a[0])
    if kind == "unsqueeze":
        return jnp.expand_dims(x, a[0])
    if kind == "squeeze":
        return jnp.squeeze(x, a[0]) if a[0] else x
    if kind == "expand":
        return jnp.broadcast_to(x, a[0])
    if kind == "diagonal":
        return jnp.diagonal(x, a[0], a[1], a[2])
    if kind == "reshape":
        return jnp.reshape(x, a[0])
    if kind == "conj":
        return jnp.conj(x)
    if kind == "neg":
        if x.dtype == np.bool_:   # (PyTorch makes the view, its kernel refuses to read it)
            raise NotImplementedError("\"neg_cpu\" not implemented for 'Bool'")
        return jnp.negative(x)
    if kind == "dtype":  # a dtype view's bytes, unless `x` is already its storage's array
        if x.dtype == a[0] and x.shape == a[1]:
            return x
        return _reinterpret(x, a[0], a[1], None)
    if kind == "unfold":  # relative to the array so far, so it also follows other steps
        dim, length, st = a
        n = (x.shape[dim] - length) // st + 1
        idx = np.arange(n)[:, None] * st + np.arange(length)[None, :]
        x = jnp.take(x, idx.reshape(-1), axis=dim)
        return jnp.moveaxis(x.reshape(x.shape[:dim] + (n, length) + x.shape[dim + 1:]),
                            dim + 1, -1)
    if kind == "as_strided":
        view = View((), a[0], a[1], a[2])
        return x.reshape(-1)[view.index_map()] if math.prod(a[0]) else \
            jnp.zeros(a[0], x.dtype)
    raise AssertionError(kind)


def _apply_steps(base, steps):
    for step in steps:
        base = _apply_step(base, step, None)
    return base


def split_steps(steps):
    """(template, offsets): the steps with select indices and slice starts taken out, so one
    compiled function serves every index value (`x[i]` in a loop must not recompile)."""
    template, offsets = [], []
    for step in steps:
        if step[0] == "select":
            template.append(("select", step[1]))
            offsets.append(step[2])
        elif step[0] == "slice":
            _, dim, start, stop, st = step
            template.append(("slice", dim, max(0, (stop - start + st - 1) // st), st))
            offsets.append(start)
        else:
            template.append(step)
    return tuple(template), offsets


def apply_template(x, template, offsets):
    it = iter(offsets)
    for step in template:
        if step[0] == "select":
            x = jax.lax.dynamic_index_in_dim(x, next(it), step[1], keepdims=False)
        elif step[0] == "slice":
            _, dim, length, st = step
            start = next(it)
            span = (length - 1) * st + 1 if length else 0
            x = jax.lax.dynamic_slice_in_dim(x, start, span, dim)
            if st != 1:
                x = jax.lax.slice_in_dim(x, 0, span, st, dim)
        else:
            x = _apply_step(x, step, None)
    return x


@functools.lru_cache(maxsize=4096)
def _compiled_template(template):
    return eager_jit(lambda base, offsets: apply_template(base, template, offsets))


def read_through(storage, view):
    """The value read through `view` from `storage` now (a laid-out storage's through its
    layout's step: from its value, no memory-order copy)."""
    steps = view.steps
    if type(storage) is LaidOutStorage and steps[:1] == storage._layout[1:]:
        return read_view(storage.array, steps[1:]) if len(steps) > 1 else storage.array
    return read_view(storage.data, steps)


def read_view(base, steps):
    template, offsets = split_steps(steps)
    if isinstance(base, jax.core.Tracer):
        return apply_template(base, template, offsets)
    return _compiled_template(template)(base, offsets)


def extend(view, step):
    """The view obtained by applying one more step to `view`."""
    size, stride, offset = _META[step[0]](view.size, view.stride, view.offset, *step[1:])
    steps = view.steps
    if step[0] == "as_strided":   # its offset and strides are the storage's (a dtype view's
        bits = view.bits()            # after its bytes); the conj and neg bits stay
        steps = (steps[:1] if steps and steps[0][0] == "dtype" else ()) + \
            ((("conj",),) if bits & CONJ else ()) + ((("neg",),) if bits & NEG else ())
    return View(steps + (step,), size, stride, offset)


def write_view(base, view, value):
    """The new base array after writing `value` (view-shaped) into the view's elements."""
    if not view.steps:
        return value
    first = view.steps[0]
    if first[0] == "dtype" and (base.dtype != first[1] or base.shape != first[2]):
        # a dtype view written from its base's array: write its bytes, convert back
        inner = write_view(_reinterpret(base, first[1], first[2], None),
                           View(view.steps[1:], view.size, view.stride, view.offset), value)
        return _reinterpret(inner, base.dtype, base.shape, base)
    bits = view.bits()
    if bits:   # the base holds the value read through the view unconjugated / unnegated
        value = apply_bits(value, bits)
        if all(step[0] in ("conj", "neg") for step in view.steps):
            return value   # (the whole base, element for element)
    return _scatter_flat(base, view.index_map().reshape(-1), value)


@eager_jit
def _scatter_flat(base, idx, value):
    # jitted: an eager scatter costs ~1 ms of tracing per in-place write through a view
    return base.reshape(-1).at[idx].set(value.reshape(-1)).reshape(base.shape)


def view_strides(old_size, old_stride, new_size):
    """PyTorch's `computeStride`: strides viewing `old` as `new_size`, or None if impossible."""
    if not old_size:
        return contiguous_strides(new_size)
    if math.prod(old_size) == 0:
        return contiguous_strides(new_size) if tuple(old_size) != tuple(new_size) \
            else tuple(old_stride)
    new_stride = [0] * len(new_size)
    view_d = len(new_size) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_size) - 1, -1, -1):
        tensor_numel *= old_size[tensor_d]
        if tensor_d == 0 or (old_size[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_size[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_size[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)
