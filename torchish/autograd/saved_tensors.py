"""What a node saves for backward, seen from Python: hooks on saved tensors
(`torch.autograd.graph.saved_tensors_hooks`, `save_on_cpu`, `disable_saved_tensors_hooks`,
`allow_mutation_on_saved_tensors`) and the `grad_fn._saved_<name>` attributes.

While a hooks region is active, each tensor an op saves (the operands PyTorch's derivative
formula keeps, and saved outputs) goes through the innermost `pack_hook` when the op records;
the node keeps what it returns, drops its own reference to the operand's value, and its backward
reads `unpack_hook(packed)` in its place. A saved output (`result`, `indices`) is packed and
unpacked too; the gradient reads it for the ops whose derivative PyTorch writes with their
result (`double_backward.FROM_RESULT`), other pullbacks recompute it from the operands; an
in-place op packs the `self` it saves as it was before the write (PyTorch's clone of it).
"""
import contextlib
import math
import weakref

import jax.numpy as jnp

_HOOKS = []          # (pack_hook, unpack_hook) of the active regions, innermost last
_DISABLED = [None]   # the error message while disable_saved_tensors_hooks is active


class saved_tensors_hooks:
    """Context manager: pack/unpack hooks for the tensors saved by ops recorded inside it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _DISABLED[0] is not None:
            raise RuntimeError(_DISABLED[0])
        _HOOKS.append((self.pack_hook, self.unpack_hook))   # (`with ... as h`: h is None)

    def __exit__(self, *exc):
        _HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors move to the CPU when recorded and back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):   # (as PyTorch: a CPU tensor is kept as it is, unless pinning)
            if not pin_memory:
                return tensor.device, tensor.cpu()
            return tensor.device, tensor.detach().to("cpu", copy=True)

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)
        super().__init__(pack, unpack)


class _AllowMutationOnSavedContext:
    """What `allow_mutation_on_saved_tensors()` yields: the tensors saved in its region, by
    identity, until an in-place op writes to them."""

    def __init__(self):
        self.saved = {}   # id(tensor) -> the packed records of it not yet cloned

    def before_write(self, tensor):
        records = self.saved.pop(id(tensor), None)
        if records:
            from .._tensor import _wrap
            clone = _wrap(tensor._data, tensor.device)
            for record in records:
                record.clone = clone


class _SavedRecord:
    __slots__ = ("tensor", "clone")

    def __init__(self, tensor):
        self.tensor = tensor
        self.clone = None


# the active allow_mutation_on_saved_tensors region (`_ops.inplace.check_inplace` calls its
# `before_write` before every in-place write)
MUTATION_WATCH = []


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward inside may be modified in place: a saved tensor is cloned
    just before an in-place op writes to it (that tensor itself, as PyTorch's: writing to its
    base does not), and backward reads the clone. A JAX array never changes, so the clone is
    the array the tensor holds then, for free. Backward must run inside the same region."""
    if MUTATION_WATCH:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    context = _AllowMutationOnSavedContext()

    def pack(tensor):
        record = _SavedRecord(tensor)
        context.saved.setdefault(id(tensor), []).append(record)
        return context, record

    def unpack(packed):
        owner, record = packed
        if not MUTATION_WATCH or owner is not MUTATION_WATCH[0]:
            # (PyTorch's text, its missing space included)
            raise AssertionError("Trying to backward outside of the "
                                 "'allow_mutation_on_saved_tensors' contextin which the graph "
                                 "was originally recorded.")
        return record.tensor if record.clone is None else record.clone

    MUTATION_WATCH.append(context)
    try:
        with saved_tensors_hooks(pack, unpack):
            yield context
    finally:
        MUTATION_WATCH.clear()


class disable_saved_tensors_hooks:
    """Context manager (and decorator): entering a hooks region inside raises `error_message`."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if _HOOKS:   # (as PyTorch: not inside a hooks region)
            raise RuntimeError(self.error_message)
        self._previous = _DISABLED[0]
        _DISABLED[0] = self.error_message

    def __exit__(self, *exc):
        _DISABLED[0] = self._previous

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run


def active():
    return bool(_HOOKS)


def pack(entries):
    """[(leaf position or None, tensor)] -> [(position, packed, unpack_hook)]."""
    pack_hook, unpack_hook = _HOOKS[-1]
    return [(position, pack_hook(tensor), unpack_hook) for position, tensor in entries]


def pack_into(node, leaves, entries):
    """Pack `entries` for `node`; the leaves the packed values stand for are dropped from the
    node's own copy, so a hook that moves them elsewhere (save_on_cpu) frees them here. As in
    PyTorch, a packed tensor's version is not checked at backward (what unpack returns is
    used)."""
    node._packed = pack(entries)
    packed = {id(t) for _, t in entries}
    if node._saved:
        node._saved = [(t, None if id(t) in packed else v, p) for t, v, p in node._saved]
    node._leaves = dropped(leaves, entries)


def dropped(leaves, entries):
    """`leaves` with the operands at the entries' positions given away."""
    leaves = list(leaves)
    for position, tensor in entries:
        if position is None:
            continue
        leaf = leaves[position]
        if type(leaf) is tuple:   # a view the op's kernel reads from its base
            leaves[position] = _Dropped(tensor.shape, leaf[0].dtype,
                                        (leaf[0].shape, tensor._view, leaf[1]))
        elif hasattr(leaf, "shape"):
            leaves[position] = _Dropped(leaf.shape, leaf.dtype)
    return leaves


class _Dropped:
    """A leaf whose value the node gave away to a pack hook: its aval, until unpacked (and,
    for a view read from its base, the base's shape, the view and its offsets)."""
    __slots__ = ("shape", "dtype", "view")

    def __init__(self, shape, dtype, view=None):
        self.shape, self.dtype, self.view = shape, dtype, view


def unpacked_leaves(leaves, packed, outputs=None):
    """The node's leaves with every packed operand replaced by its unpacked value (the
    unpacked saved outputs are appended to `outputs`)."""
    from .._views import write_view
    from .._tensor import Tensor
    leaves = list(leaves)
    for position, value, unpack_hook in packed:
        tensor = unpack_hook(value)
        if not isinstance(tensor, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                            f"got result of type {type(tensor).__name__}")
        if position is None:
            if outputs is not None:
                outputs.append(tensor)
            continue
        dropped = leaves[position]
        if isinstance(dropped, _Dropped):
            data = tensor._data
            if tuple(data.shape) != tuple(dropped.shape):
                raise RuntimeError("unpack_hook should return a tensor with the same shape "
                                   "as the packed one")
            data = data.astype(dropped.dtype)
            if dropped.view is not None:   # written into a base the view template reads
                base_shape, view, offsets = dropped.view
                data = (write_view(jnp.zeros(base_shape, dropped.dtype), view, data), offsets)
            leaves[position] = data
    return leaves


def _plan_of(node, name, prefix="_saved_"):
    from .._ops.registry import Plan
    plan = getattr(node._fn, "__self__", None)
    if not isinstance(plan, Plan):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'{prefix}{name}'")
    return plan


def _saved_outputs_named(node, plan, name):
    """The saved outputs `name` reads (through `saved_as`: linalg.inv's `inverse` is its
    `result`)."""
    from .._ops.registry import saved_output_positions
    alias = plan.op.saved_as.get(name, name)
    name = alias if isinstance(alias, str) else name
    at = saved_output_positions(plan.op, plan.kinds, [d.is_floating_point or d.is_complex
                                                      for _, d in node._out_avals], only=name)
    return [t for t, _, producer in node._saved or ()
            if producer and producer[0] is node and producer[1] in at]


def _saved_operand_positions(node, plan, param):
    from .._ops.registry import saved_positions
    mask = tuple(e is not None for e in node._edges)
    return saved_positions(plan.op, plan.kinds, mask, param)


def saved_attribute(node, name):
    """`grad_fn._saved_<name>`: a saved operand (`self` is the first; None when this call
    did not need it), a saved output (`result`, `indices`, `result1`: an alias of the output,
    with its grad_fn, or an integer output itself),
    the operand's shape (`<operand>_sym_sizes`), or an argument of the op (`_saved_dim`).
    A tensor whose hooks were registered through `_raw_saved_<name>` reads as unpack gives it."""
    from .._ops.registry import in_overload, saves_of, value_of
    from .._tensor import _alias
    plan = _plan_of(node, name)
    raw = _RAW.get(node, {}).get(name)
    if raw is not None and raw._hooks is not None:
        _check_not_freed(node)
        return raw._unpacked()
    outs = _saved_outputs_named(node, plan, name)
    if outs:
        _check_not_freed(node)
        found = []
        for out in outs:
            if out._grad_fn is None:   # an integer output (indices): the tensor itself
                found.append(out)
                continue
            alias = _alias(out)
            alias._grad_fn, alias._output_nr = out._grad_fn, out._output_nr
            found.append(alias)
        return found[0] if len(found) == 1 else tuple(found)
    strides = name.endswith("_sym_strides")   # (an operand's strides: as its sizes below)
    numel = name.endswith("_sym_numel")
    opt = name.endswith("_sym_sizes_opt")   # (an optional operand's: (0,) when absent)
    sizes = strides or numel or opt or name.endswith("_sym_sizes")
    param = name[:name.rindex("_sym_")] if sizes else name
    if numel and name not in plan.op.saved_as:   # (only the nodes that declare it have one)
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_saved_{name}'")
    param = plan.op.saved_as.get(param, param)
    if param is None:   # a body's name PyTorch's node does not have
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_saved_{name}'")
    if callable(param):   # a value the body derives (selu's alpha and scale, a slice's end)
        value = param(**_arguments(node, plan))
        if value is ABSENT:
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'_saved_{name}'")
        return value
    param = plan.op.tensors[0] if param == "self" else param
    if param in plan.op.tensors:
        where = _positions(plan, param)
        if strides:
            tensor = node._inputs[where[0]] if where and node._inputs is not None else None
            if tensor is None:
                raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                     f"'_saved_{name}'")
            return tuple(tensor.stride())
        if opt and not where:
            return (0,)
        if sizes:
            shape = tuple(node._out_avals[0][0]) if not where else _shape_at(node, where[0])
            return math.prod(shape) if numel else shape
        if where and isinstance(plan.kinds[plan.op.tensors.index(param)], type):
            # a Python number operand: a Scalar argument, or a wrapped tensor (mul's `other`)
            # the node holds only when it saves that operand
            if not plan.op.scalars_as_tensors:
                return _scalar_at(node, plan, param, where[0])
            if _mentions(saves_of(plan.op, plan.kinds), param):
                return _wrapped_number(_scalar_at(node, plan, param, where[0]))
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'_saved_{name}'")
        at = _saved_operand_positions(node, plan, param)
        if at:
            _check_not_freed(node)
            found = [_saved_operand(node, i) for i in at]
            return found[0] if len(found) == 1 else found
        if _mentions(saves_of(plan.op, plan.kinds), param):
            return None   # saved only for gradients this call does not compute
    elif param in plan.statics and not sizes and in_overload(plan.op, plan.statics, param):
        values = {k: value_of(v) for k, v in plan.statics.items()}
        return _as_saved(plan.op.name, param, values)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{name}'")


# what a `saved_as` callable returns for a field this call's node does not have
ABSENT = object()


def _arguments(node, plan):
    """The op's static arguments and its operands' values (arrays, numbers, lists of
    numbers; None for an absent one), by name. Freed by backward, a node that saved nothing
    still has its numbers (graph.Node.release keeps them), as PyTorch's its int fields."""
    from .._ops.registry import value_of
    values = {k: value_of(v) for k, v in plan.statics.items()}
    freed = node._leaves is None
    if freed and node._in_avals_cache is None:
        return values
    leaves = None
    for param, kind in zip(plan.op.tensors, plan.kinds):
        if freed and not _numbers(kind):
            continue   # (a freed array: the callable's default None)
        if leaves is None:
            leaves = node._in_avals_cache if freed else plan.materialize(node._leaves)
        found = [leaves[i] for i in _positions(plan, param)]
        if kind is None or not found or isinstance(found[0], _Dropped):
            values[param] = None
        else:
            values[param] = found if isinstance(kind, tuple) and kind[0] == "L" else found[0]
    return values


def _numbers(kind):
    """Whether an operand of this kind is a Python number or a list of them."""
    return isinstance(kind, type) or (isinstance(kind, tuple) and len(kind) == 2
                                      and kind[0] == "L" and all(isinstance(k, type)
                                                                 for k in kind[1]))


_RAW = weakref.WeakKeyDictionary()   # node -> {name: SavedTensor} (one object per name)


def raw_saved_attribute(node, name):
    """`grad_fn._raw_saved_<name>`: the `SavedTensor` of one tensor the node saved (an
    operand or an output; PyTorch has none for sizes and arguments)."""
    raws = _RAW.setdefault(node, {})
    raw = raws.get(name)
    if raw is None:
        missing = AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'_raw_saved_{name}'")
        plan = _plan_of(node, name, "_raw_saved_")
        outs = _saved_outputs_named(node, plan, name)
        if len(outs) == 1:
            raw = SavedTensor(node, None, outs[0])
        else:
            param = plan.op.saved_as.get(name, name)
            if not isinstance(param, str) or outs:
                raise missing
            param = plan.op.tensors[0] if param == "self" else param
            at = _saved_operand_positions(node, plan, param) \
                if param in plan.op.tensors else None
            if not at or len(at) != 1:
                raise missing
            raw = SavedTensor(node, at[0], None)
        raws[name] = raw
    return raw


class SavedTensor:
    """A tensor a node saved, as `grad_fn._raw_saved_<name>` gives it: `register_hooks(pack,
    unpack)` packs it at once and has the backward (and `_saved_<name>`) read what unpack
    returns, as a `saved_tensors_hooks` region does for every saved tensor."""
    __module__ = "torch._C._autograd"

    def __init__(self, node, position, output):
        self._node = node
        self._position = position   # the operand's leaf position; None for an output
        self._output = output
        self._hooks = None

    def register_hooks(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument "
                "types are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
                f"Invoked with: {self!r}, {pack_hook!r}, {unpack_hook!r}")
        node = self._node
        if node._leaves is None:
            raise RuntimeError(_FREED_RAW)
        if self._hooks is not None or self._packed_by_region():
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at "
                               "a time.")
        tensor = self._output if self._position is None else node._inputs[self._position]
        packed = pack_hook(tensor.detach())
        entry = (self._position, packed, unpack_hook)
        self._hooks = entry
        node._leaves = dropped(node._leaves, [(self._position, tensor)])
        node._packed = (node._packed or []) + [entry]
        if node._saved:
            node._saved = [(t, None if t is tensor else v, p) for t, v, p in node._saved]

    def _packed_by_region(self):
        """Whether a saved_tensors_hooks region packed this tensor when the op recorded."""
        mine = {id(st._hooks) for st in _RAW.get(self._node, {}).values()
                if st._hooks is not None}
        return any(id(entry) not in mine and entry[0] == self._position
                   for entry in self._node._packed or ())

    def _unpacked(self):
        """What unpack returns, with the saved tensor's history (as PyTorch's unpacking)."""
        from .._tensor import Tensor, _alias
        _, packed, unpack_hook = self._hooks
        value = unpack_hook(packed)
        saved = self._output if self._position is None else self._node._inputs[self._position]
        if not isinstance(value, Tensor) or value.requires_grad or not saved.requires_grad:
            return value
        out = _alias(value)
        if saved._grad_fn is not None:
            out._grad_fn, out._output_nr = saved._grad_fn, saved._output_nr
        else:
            out.requires_grad_(True)
        return out


_FREED_RAW = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward.")


# Arguments PyTorch declares as int lists (`int[1]? dim`): saved as a tuple even when one int
# was passed.
_INT_LIST_ARGS = {("sum", "dim"), ("mean", "dim"), ("nansum", "dim"), ("std", "dim"),
                  ("var", "dim"), ("amax", "dim"), ("amin", "dim"), ("logsumexp", "dim"),
                  ("flip", "dims"), ("permute", "dims")}


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
_WINDOW_ARGS = ("kernel_size", "stride", "padding", "dilation", "output_padding")


def _spatial_dims(op_name):
    """How many spatial dims a convolution's or pooling's int-list arguments have."""
    for n in (1, 2, 3):
        if f"{n}d" in op_name:
            return n
    return 2 if op_name in ("_unfold", "_fold") else None


def _as_saved(op_name, param, statics):
    """A static argument as PyTorch's node reads it back: int lists as tuples, the default
    `correction` of std/var as 1 (None when neither dim nor unbiased was given), and negative
    ints as their unsigned 64-bit pattern (the saved int64 is read as uint64, so dim=-1 reads
    18446744073709551615)."""
    value = statics[param]
    if value is None and statics.get("dim_args"):   # flip(-1): the dims came positionally
        value = tuple(statics["dim_args"])
    if param == "correction" and value is None:
        if statics.get("unbiased") is None and statics.get("dim") is None:
            return None   # (PyTorch's `var(input)` picks the overload with `correction=None`)
        return 0 if statics.get("unbiased") is False else 1
    if param == "reduction" and value in _REDUCTIONS:   # saved as ATen's enum
        return _REDUCTIONS[value]
    if (op_name, param) in _INT_LIST_ARGS and isinstance(value, int):
        value = (value,)
    if param == "stride" and value is None and _spatial_dims(op_name):
        return ()   # (a pooling's default stride, its kernel size, is saved empty)
    if param in _WINDOW_ARGS and type(value) is int and _spatial_dims(op_name):
        value = (value,) * _spatial_dims(op_name)   # (`int[2] padding`: one int per dim)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value % 2 ** 64
    if isinstance(value, (tuple, list)) and all(type(v) is int for v in value):
        return tuple(v % 2 ** 64 for v in value)
    return value


def _saved_operand(node, i):
    """Operand `i` as the node saved it. An in-place node's `self` was overwritten (so it is
    not among the version-checked `_saved`): PyTorch saved a clone of it before the write,
    whose CloneBackward0 leads to its history then."""
    tensor = node._inputs[i]
    if i or any(t is tensor and not (p and p[0] is node) for t, _, p in node._saved or ()):
        return tensor   # (not overwritten: saved as an operand, not only as the output)
    from .._ops.call_jax import call_jax_record
    from .._tensor import _wrap
    old = node._leaves[0]
    if isinstance(old, _Dropped):   # packed by a hook: what its unpack gives
        old = unpacked_leaves(node._leaves, [p for p in node._packed if p[0] == 0])[0]
    clone = _wrap(old, tensor.device)
    edge = node._edges[0]
    if edge is not None:
        clone._grad_fn = call_jax_record("CloneBackward0", lambda a: a, [old], [None], [edge],
                                         [(tensor.shape, tensor.dtype)], key=("clone",))
        clone._output_nr = 0
    return clone


def _check_not_freed(node):
    if node._inputs is None:
        from .graph import _FREED_MSG
        raise RuntimeError(_FREED_MSG)


def _positions(plan, param):
    """Leaf positions of one operand (a list operand has one per element)."""
    pos = 0
    for pname, kind in zip(plan.op.tensors, plan.kinds):
        count = 0 if kind is None else (len(kind[1]) if isinstance(kind, tuple) and kind
                                        and kind[0] == "L" else 1)
        if pname == param:
            return list(range(pos, pos + count))
        pos += count
    return []


def _shape_at(node, position):
    leaf = (node._leaves or [None] * (position + 1))[position]
    if hasattr(leaf, "shape"):
        return tuple(leaf.shape)
    tensor = node._inputs[position] if node._inputs is not None else None
    if tensor is not None:
        return tuple(tensor.shape)
    kept = node._in_avals_cache   # (freed: the shapes of a node that saved nothing)
    aval = kept[position] if kept is not None else None
    from .graph import _ViewAval
    if isinstance(aval, tuple) and not isinstance(aval, _ViewAval):
        return tuple(aval[0])
    return ()


def _scalar_at(node, plan, param, position):
    _check_not_freed(node)
    value = node._leaves[position]
    return plan.kinds[plan.op.tensors.index(param)](value)


def _wrapped_number(value):
    """PyTorch's wrapped 0-d tensor for a Python number (2.5 is a float64 one)."""
    import torchish
    dtype = {bool: torchish.bool, int: torchish.int64, float: torchish.float64,
             complex: torchish.complex128}[type(value)]
    return torchish.tensor(value, dtype=dtype)


def _mentions(saves, param):
    if saves == "inputs":
        return True
    if isinstance(saves, dict):
        return param in saves or any(param in v for v in saves.values())
    return isinstance(saves, tuple) and param in saves
