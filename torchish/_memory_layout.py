"""The memory layout of copies (clone, contiguous, `*_like`, results of ops): which strides
PyTorch gives a new tensor (`layout_strides`, the dim order `memory_order`) and how a fresh
tensor gets a storage laid out with them (`lay_out`: a permuting view of a storage in that
memory order, see `_storage.LaidOutStorage`)."""
import functools

import numpy as np

from ._storage import Storage, _transpose, lay_out_storage
from ._tensor import channels_last, channels_last_3d, contiguous_format, preserve_format
from ._views import base_view, contiguous_strides, extend


def _non_overlapping_and_dense(size, stride):
    """Whether the elements fill a block of memory exactly once, in some order of the dims."""
    dims = sorted((d for d in range(len(size)) if size[d] >= 2), key=lambda d: stride[d])
    expected = 1
    for d in dims:
        if stride[d] != expected:
            return False
        expected *= size[d]
    return True


def memory_order(size, *strides):
    """The dims from the innermost to the outermost in memory, as PyTorch orders them (its
    preserve_format rule, the order its fill kernels walk a tensor in and, for several
    operands' `strides`, TensorIterator's reorder_dimensions)."""
    n = len(size)
    # order[0] is the innermost dim; start from the row-major order and insertion-sort by
    # stride. A zero stride (broadcast dim) is no evidence either way, so it stays where it is;
    # equal strides put the larger dim outside.

    def outer(a, b):  # 1: a belongs outside b, -1: inside, 0: no opinion
        for stride in strides:
            sa, sb = stride[a], stride[b]
            if sa == 0 or sb == 0:
                continue
            if sa != sb:
                return 1 if sa > sb else -1
            if size[a] > size[b]:
                return 1
        return 0

    order = list(range(n - 1, -1, -1))
    for i in range(1, n):
        j = i
        for k in range(i - 1, -1, -1):
            c = outer(order[k], order[j])
            if c > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif c < 0:
                break
    return order


def _dense_strides_like(size, stride):
    """Dense strides whose dim order follows `stride` (PyTorch's preserve_format rule for an
    input with gaps or overlaps, e.g. a strided slice of a transposed tensor)."""
    out, acc = [0] * len(size), 1
    for d in memory_order(size, stride):
        out[d] = acc
        acc *= max(size[d], 1)
    return tuple(out)


def _channels_last_strides(size, rank, name):
    if len(size) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    # N, C, *spatial: C is innermost, then the spatial dims from the last one outwards
    order = [1] + list(range(rank - 1, 1, -1)) + [0]
    out, acc = [0] * rank, 1
    for d in order:
        out[d] = acc
        acc *= size[d]
    return tuple(out)


def layout_strides(t, memory_format=None):
    """The strides PyTorch gives a copy of `t` made with `memory_format` (None: preserve)."""
    size = tuple(t.shape)
    if memory_format is None or memory_format is preserve_format:
        if t._view is None:
            return contiguous_strides(size)
        return preserved_strides(size, tuple(t._view.stride))
    if memory_format is contiguous_format:
        return contiguous_strides(size)
    if memory_format is channels_last:
        return _channels_last_strides(size, 4, "channels_last")
    if memory_format is channels_last_3d:
        return _channels_last_strides(size, 5, "channels_last_3d")
    raise TypeError(f"memory_format must be torch.memory_format, not "
                    f"{type(memory_format).__name__}")


def preserved_strides(size, stride):
    """The strides of a preserve_format copy of elements laid out with `stride` (also what
    `torch.tensor(ndarray)` gives, after the array's strides)."""
    if 0 in size or _non_overlapping_and_dense(size, stride):  # (empty counts as dense)
        return stride
    return _dense_strides_like(size, stride)


def lay_out(t, stride):
    """Give `t`, a tensor just made (owning a row-major array, aliased by nothing), a storage
    laid out with `stride`: `t` becomes a permuting view of a storage in that memory order, so
    `stride()`, `is_contiguous()`, `view()` and `as_strided` over the copy behave as
    PyTorch's. The storage keeps `t`'s value; its array in memory order is made only when
    something reads it (see `_storage.LaidOutStorage`). Returns `t`."""
    if t._view is not None:
        return t
    value = t._storage.data
    plan = _layout_plan(tuple(value.shape), tuple(stride))
    if plan is None:
        return t
    perm, view = plan
    t._view = view
    t._cache = t._cache_base = value
    storage = t._storage
    if type(storage) is Storage:   # the memory-order array made when something needs it
        lay_out_storage(storage, perm, view.steps[0])
    else:   # (meta, inference tensors: laid out now)
        storage.data = t._cache_base = value.transpose(perm) if storage.device.type == \
            "meta" else _transpose(perm)(value)
    return t


@functools.lru_cache(maxsize=4096)
def _layout_plan(size, stride):
    """(the permutation storing a tensor of `size` in the memory order of `stride`, the view
    reading it back), or None for row-major strides."""
    if stride == contiguous_strides(size):
        return None
    n = len(size)
    # outermost dim first; among equal strides a size-1 dim goes inside
    perm = tuple(sorted(range(n), key=lambda d: (-stride[d], size[d] == 1, d)))
    physical = tuple(size[d] for d in perm)
    inverse = tuple(int(i) for i in np.argsort(perm))
    view = extend(base_view(physical), ("permute", inverse))
    if view.stride != stride:
        # a size-1 dim with a stride no dim order gives (it is never used to address memory)
        view = extend(base_view(physical), ("as_strided", size, stride, 0))
    return perm, view


def like_layout(out, src, memory_format=None):
    """`out` (a fresh copy or a new tensor shaped like `src`) laid out as PyTorch lays out a
    copy of `src` made with `memory_format`."""
    return lay_out(out, layout_strides(src, memory_format))
