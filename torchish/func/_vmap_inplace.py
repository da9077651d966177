"""PyTorch's refusal of an in-place op inside `vmap` that writes a tensor unbatched at a vmap
level with an operand batched there (`zeros(4).mul_(x)` with `x` batched): the values of the
batch cannot fit in `self`. JAX's vmap would silently batch `self`, so the in-place dispatcher
asks `check` first, whenever a transform is active.

Which words PyTorch uses depends on how its batching rule for the op is written, so the ops
are sorted here by the rule PyTorch gives them (found by running each op under live PyTorch):
- the binary in-place rule: "inplace arithmetic";
- a rule of its own: the op's name ("index_add_");
- no check in the rule (`add_`, the bitwise ops): the kernel's shape error on the physical
  tensors, the batch sizes included;
- the boxed fallback (no rule): "aten::op_", naming the failing level's number.
"""
import jax
import numpy as np

from ..autograd import grad_mode

PREFIX = "torchish.vmap"   # (the axis names `vmap` gives its levels: prefix + depth)
CHUNKS = {}   # depth: the chunk_size of the vmap there (None: one chunk)

_ARITHMETIC = frozenset(("sub", "mul", "div", "logical_and", "logical_or", "logical_xor",
                         "clamp_min", "clamp_max", "copy"))
_UNCHECKED = frozenset(("add", "atan2", "copysign", "bitwise_and", "bitwise_or", "bitwise_xor",
                        "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"))
_OWN_RULE = {"index_add": "index_add_", "index_fill": "index_fill_",
             "scatter_add": "scatter_add_", "scatter_reduce": "scatter_reduce_",
             "_index_put": "index_put_", "_mask_put": "index_put_", "_fill": "fill_"}


def _levels_of(array):
    """{vmap depth: batch size} for the torchish vmap levels `array` is batched at, looking
    through the differentiation tracers nested with them."""
    from jax._src.interpreters import batching   # (no public name for its tracer)
    found = {}
    while isinstance(array, jax.core.Tracer):
        if isinstance(array, batching.BatchTracer):
            name = array._trace.axis_data.name
            if isinstance(array.batch_dim, int) and isinstance(name, str) \
                    and name.startswith(PREFIX):
                depth = int(name[len(PREFIX):])
                size = array.val.shape[array.batch_dim]
                found[depth] = min(size, CHUNKS.get(depth) or size)
            array = array.val
        elif hasattr(array, "primal"):   # (JVP and linearize tracers)
            array = array.primal
        else:
            return found
    return found


_DYNAMIC = ("vmap: We do not support batching operators that can support dynamic shape. "
            "Attempting to batch over indexing with a boolean mask.")


def _pytorch_level(depth):
    """PyTorch's number for the vmap at `depth`: its place among all transform levels."""
    seen, number = -1, 0
    for level in grad_mode.FUNC_LEVELS:
        if level is False:   # (internal_no_grad's marker, not a level)
            continue
        number += 1
        if isinstance(level, grad_mode.ForwardLevel) and not level.jvp:
            seen += 1
            if seen == depth:
                return number
    return depth + 1


def _message(name, where):
    return (f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`. This happened due to "
            f"`other` being vmapped over but `self` not being vmapped over {where}. Please try "
            f"to use out-of-place operators instead of {name}. If said operator is being "
            "called inside the PyTorch framework, please file a bug report instead.")


def check(definition, targs, tensors, leaves):
    """Raise PyTorch's error when `self` (the first operand) is not batched at a vmap level
    where another tensor operand is."""
    if not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
        return
    operands = [(t, _levels_of(leaf)) for t, leaf in zip(tensors, leaves) if t is not None]
    mine = operands[0][1]
    bad = {d for _, levels in operands[1:] for d in levels if d not in mine}
    if not bad:
        if definition.name == "_mask_put" and operands[1][1]:
            raise RuntimeError(_DYNAMIC)   # (a batched boolean mask: a shape per example)
        return
    name = definition.name
    if name in _UNCHECKED:
        raise RuntimeError(_shape_error(operands))
    if name in _ARITHMETIC or (name == "masked_fill" and not _is_tensor(targs[2])):
        raise RuntimeError(_message("inplace arithmetic", "in a vmap"))
    if name in _OWN_RULE:
        raise RuntimeError(_message(_OWN_RULE[name], "in a vmap"))
    depth = max(bad)   # (the innermost level's rule runs first)
    raise RuntimeError(_message(f"aten::{name.lstrip('_')}_",
                                f"at level {_pytorch_level(depth)}"))


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _shape_error(operands):
    """The shape error of PyTorch's kernel on the physical tensors: each level's rule, inner
    first, puts its batch dim in front of the operands batched there, padding them to the
    operands' largest rank."""
    shapes = [list(t.shape) for t, _ in operands]
    for depth in sorted({d for _, levels in operands for d in levels}, reverse=True):
        rank = max(len(s) for s in shapes)
        for i, (_, levels) in enumerate(operands):
            if depth in levels:
                shapes[i] = [levels[depth]] + [1] * (rank - len(shapes[i])) + shapes[i]
    try:
        full = list(np.broadcast_shapes(*map(tuple, shapes)))
    except ValueError:   # (not reached by operands the op itself accepted)
        full = max(shapes, key=len)
    return f"output with shape {shapes[0]} doesn't match the broadcast shape {full}"
