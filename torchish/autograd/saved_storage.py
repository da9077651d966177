"""Saved operands are read at backward, as PyTorch's saved variables are.

PyTorch's node keeps a saved operand itself, not a copy of its values: a write into it that
does not count as an in-place change (one through `.data`, or `x.data = y`) leaves the version
check quiet and is seen by the backward. A node therefore remembers, per saved operand, the
array it was read from; at backward an operand whose storage holds another array by then is
read again (its version was checked first, so only such writes get here).
"""
from .._storage import LaidOutStorage, Storage
from .._views import read_through

# storages whose `array` identifies what they hold (`array`: in the tensor's own order)
_PLAIN = (Storage, LaidOutStorage)


def storage_refs(leaves, tensors, positions):
    """(leaf position, tensor, its view, the array read from) of the saved operands at
    `positions` whose leaf is their storage's current value (None: none)."""
    refs = None
    for i in positions:
        t = tensors[i]
        if t is None:
            continue
        storage = t._storage
        if type(storage) not in _PLAIN or storage.device.type == "meta":
            continue   # (a NumPy-shared or dtype-viewed storage: read at record time)
        root = storage.array
        leaf = leaves[i]
        if type(leaf) is tuple:   # a view the op's kernel reads: (base array, offsets)
            if leaf[0] is not root:
                continue
        elif t._view is None:
            if leaf is not root:
                continue
        elif leaf is not t._cache or t._cache_base is not root:
            continue
        if refs is None:
            refs = []
        refs.append((i, t, t._view, root))
    return refs


def result_ref(out, position=None):
    """The ref of a saved output whose node's gradient formula reads it (see
    `written_result`): its storage (PyTorch saves an output's storage, not the tensor: a
    later `out.data = ...` is not seen). `position`: the node's leaf that is this output (an
    in-place op whose backward reads what it wrote), read again when written; the output's
    view reads it from its storage."""
    return (position, out._storage, out._view, out._storage.array)


def refresh(node):
    """Read again the saved operands whose storage was written since `node` recorded (a
    written saved output is marked: its array then None)."""
    refs = node._storage_refs
    new_refs = None
    for k, (i, t, view, root) in enumerate(refs):
        output = isinstance(t, Storage)   # (a saved output: its storage)
        storage = t if output else t._storage
        data = storage.array
        if data is root or type(storage) not in _PLAIN:
            continue
        if i is None:   # a saved output
            if root is not None:
                new_refs = new_refs or list(refs)
                new_refs[k] = (None, t, view, None)
            continue
        leaf = node._leaves[i]
        if output:   # an in-place op's result, its node's leaf
            new = data if view is None else read_through(storage, view)
            if new.shape != leaf.shape or new.dtype != leaf.dtype:
                continue
        elif type(leaf) is tuple:
            if t._view is not view:   # (given another view of a new storage: kept)
                continue
            new = (data, leaf[1])
        else:
            new = t._data
            if new.shape != leaf.shape or new.dtype != leaf.dtype:
                continue   # (`.data` set to another shape: PyTorch's backward would fail)
        if new_refs is None:
            new_refs = list(refs)
        node._leaves = list(node._leaves)
        node._leaves[i] = new
        new_refs[k] = (i, t, view if output else t._view, data)
    if new_refs is not None:
        node._storage_refs = new_refs


def written_result(node):
    """The saved output of a node whose formula reads it, once written since the node
    recorded (then the gradient is computed from it), else None."""
    for i, storage, view, root in node._storage_refs:
        if i is None and root is None:
            from .._tensor import _wrap
            return _wrap(storage.array if view is None else read_through(storage, view),
                         storage.device)
    return None
