"""What a node saves for backward, seen from Python: hooks on saved tensors
(`torch.autograd.graph.saved_tensors_hooks`, `save_on_cpu`, `disable_saved_tensors_hooks`) and
the `grad_fn._saved_<name>` attributes.

While a hooks region is active, each tensor an op saves (the operands PyTorch's derivative
formula keeps, and saved outputs) goes through the innermost `pack_hook` when the op records;
the node keeps what it returns, drops its own reference to the operand's value, and its backward
reads `unpack_hook(packed)` in its place. A saved output (`result`, `indices`) is packed and
unpacked too, though our pullbacks recompute it from the operands; an in-place op packs the
`self` it saves as it was before the write (PyTorch's clone of it).
"""
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
        _HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors move to the CPU when recorded and back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.detach().to("cpu", copy=True)

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)
        super().__init__(pack, unpack)


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
    node's own copy, so a hook that moves them elsewhere (save_on_cpu) frees them here."""
    node._packed = pack(entries)
    leaves = list(leaves)
    for position, _, _ in node._packed:
        if position is not None and hasattr(leaves[position], "shape"):
            leaves[position] = _Dropped(leaves[position].shape, leaves[position].dtype)
    node._leaves = leaves


class _Dropped:
    """A leaf whose value the node gave away to a pack hook: its aval, until unpacked."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def unpacked_leaves(leaves, packed):
    """The node's leaves with every packed operand replaced by its unpacked value."""
    leaves = list(leaves)
    for position, value, unpack_hook in packed:
        tensor = unpack_hook(value)
        if position is None:
            continue
        dropped = leaves[position]
        if isinstance(dropped, _Dropped):
            data = getattr(tensor, "_data", None)
            if data is None or tuple(data.shape) != tuple(dropped.shape):
                raise RuntimeError("unpack_hook should return a tensor with the same shape "
                                   "as the packed one")
            leaves[position] = data.astype(dropped.dtype)
    return leaves


def saved_attribute(node, name):
    """`grad_fn._saved_<name>`: a saved operand (`self` is the first; None when this call
    did not need it), a saved output (`result`, `indices`, `result1`: an alias of the output,
    with its grad_fn, or an integer output itself),
    the operand's shape (`<operand>_sym_sizes`), or an argument of the op (`_saved_dim`)."""
    from .._ops.registry import (Plan, in_overload, saved_output_positions, saved_positions,
                                 saves_of, value_of)
    from .._tensor import _alias
    plan = getattr(node._fn, "__self__", None)
    if not isinstance(plan, Plan):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_saved_{name}'")
    at = saved_output_positions(plan.op, plan.kinds, [d.is_floating_point or d.is_complex
                                                      for _, d in node._out_avals], only=name)
    outs = [t for t, _, producer in node._saved or ()
            if producer and producer[0] is node and producer[1] in at]
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
    sizes = name.endswith("_sym_sizes")
    param = name[:-len("_sym_sizes")] if sizes else name
    param = plan.op.saved_as.get(param, param)
    if param is None:   # a body's name PyTorch's node does not have
        raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                             f"'_saved_{name}'")
    if callable(param):   # a value the body derives (selu's alpha and scale)
        return param(**{k: value_of(v) for k, v in plan.statics.items()})
    param = plan.op.tensors[0] if param == "self" else param
    if param in plan.op.tensors:
        where = _positions(plan, param)
        if sizes:
            return tuple(node._out_avals[0][0]) if not where else _shape_at(node, where[0])
        if where and isinstance(plan.kinds[plan.op.tensors.index(param)], type):
            # a Python number operand: a Scalar argument, or a wrapped tensor (mul's `other`)
            # the node holds only when it saves that operand
            if not plan.op.scalars_as_tensors:
                return _scalar_at(node, plan, param, where[0])
            if _mentions(saves_of(plan.op, plan.kinds), param):
                return _wrapped_number(_scalar_at(node, plan, param, where[0]))
            raise AttributeError(f"'{type(node).__name__}' object has no attribute "
                                 f"'_saved_{name}'")
        mask = tuple(e is not None for e in node._edges)
        at = saved_positions(plan.op, plan.kinds, mask, param)
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


# Arguments PyTorch declares as int lists (`int[1]? dim`): saved as a tuple even when one int
# was passed.
_INT_LIST_ARGS = {("sum", "dim"), ("mean", "dim"), ("nansum", "dim"), ("std", "dim"),
                  ("var", "dim"), ("amax", "dim"), ("amin", "dim"), ("logsumexp", "dim"),
                  ("flip", "dims"), ("permute", "dims")}


def _as_saved(op_name, param, statics):
    """A static argument as PyTorch's node reads it back: int lists as tuples, the default
    `correction` of std/var as 1, and negative ints as their unsigned 64-bit pattern (the
    saved int64 is read as uint64, so dim=-1 reads 18446744073709551615)."""
    value = statics[param]
    if value is None and statics.get("dim_args"):   # flip(-1): the dims came positionally
        value = tuple(statics["dim_args"])
    if param == "correction" and value is None:
        return 0 if statics.get("unbiased") is False else 1
    if (op_name, param) in _INT_LIST_ARGS and isinstance(value, int):
        value = (value,)
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
    if i or any(t is tensor for t, _, _ in node._saved or ()):
        return tensor
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
    return tuple(tensor.shape) if tensor is not None else ()


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
