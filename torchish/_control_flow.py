"""`torch.cond` and `torch.while_loop`: control flow on tensor values that `torchish.compile`
can trace. Eagerly they run the branch (or loop) that the values pick. Inside a trace, where
the predicate is a JAX tracer, cond runs both branches on the tape and selects each output
with `where` (so tensors the branches reach through closures, a module's parameters, get
their gradients, zeros from the branch not taken, as PyTorch's), and while_loop becomes
`jax.lax.while_loop`.

A tensor predicate gives the outputs one CondAutogradOpBackward node (PyTorch's name) over
the branch's own graph. A Python predicate just calls the branch, as PyTorch does."""
import jax

from . import autograd
from ._ops.call_jax import call_jax
from ._tensor import Tensor


def where(condition, a, b):
    from ._ops.indexing import where as _where
    return _where(condition, a, b)


def _flatten(tree):
    leaves, treedef = jax.tree_util.tree_flatten(tree, is_leaf=lambda v: isinstance(v, Tensor))
    return leaves, treedef


def _as_jax(fn, device, structure):
    """`fn` over Tensors as a function over JAX arrays (no autograd recorded inside); the
    output's tree structure goes into the list `structure`."""
    from ._ops.creation import from_jax

    def run(*arrays):
        with autograd.no_grad():
            out = fn(*[from_jax(a).to(device) for a in arrays])
        leaves, treedef = _flatten(out)
        if any(not isinstance(v, Tensor) for v in leaves):
            raise RuntimeError("Expect outputs of true_fn and false_fn to only contain tensors "
                               "or None. Got types " +
                               ", ".join(type(v).__name__ for v in leaves) + ".")
        structure[:] = [treedef]
        return tuple(v._data for v in leaves)
    return run


def _on_leaves(fn, tree):
    """`fn` over the operands' flat tensors (the branches take the nested operands)."""
    return lambda *leaves: fn(*jax.tree_util.tree_unflatten(tree, list(leaves)))


def cond(pred, true_fn, false_fn, operands=()):
    if isinstance(pred, (bool, int, float)):
        return (true_fn if pred else false_fn)(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    leaves, tree = jax.tree_util.tree_flatten(   # (None is a leaf to PyTorch's pytree here)
        operands, is_leaf=lambda v: v is None or isinstance(v, Tensor)) \
        if isinstance(operands, (tuple, list)) else ([None], None)
    if not all(isinstance(t, Tensor) for t in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    true_fn, false_fn = _on_leaves(true_fn, tree), _on_leaves(false_fn, tree)
    operands = tuple(leaves)
    from ._compile import patch_torch
    patch_torch()
    value = pred._data.reshape(())
    if isinstance(value, jax.core.Tracer):
        taken, other = _outputs(true_fn, operands), _outputs(false_fn, operands)
        if taken[1] != other[1] or len(taken[0]) != len(other[0]):
            raise RuntimeError("Expect true_fn and false_fn to return the same structure of "
                               f"outputs, got {taken[1]} and {other[1]}.")
        flag = pred.reshape(()).bool()
        outs = [where(flag, a, b) for a, b in zip(taken[0], other[0])]
        structure = taken[1]
    else:
        outs, structure = _outputs(true_fn if bool(value) else false_fn, operands)
    if outs and autograd.grad_mode.is_grad_enabled() and any(o.requires_grad for o in outs):
        outs = call_jax("CondAutogradOpBackward", lambda *a: a, outs, key=("cond", len(outs)))
    return jax.tree_util.tree_unflatten(structure, list(outs))


def _outputs(branch, operands):
    """(the branch's output tensors, their tree structure), checked as PyTorch's."""
    leaves, treedef = _flatten(branch(*operands))
    if any(not isinstance(v, Tensor) for v in leaves):
        raise RuntimeError("Expect outputs of true_fn and false_fn to only contain tensors or "
                           "None. Got types " + ", ".join(type(v).__name__ for v in leaves) +
                           ".")
    return leaves, treedef


def while_loop(cond_fn, body_fn, carried_inputs):
    """`carried = body_fn(*carried)` while `cond_fn(*carried)`; not differentiable (as
    PyTorch's)."""
    carried = tuple(carried_inputs)
    first = cond_fn(*carried)
    if not (isinstance(first, Tensor) and isinstance(first._data, jax.core.Tracer)):
        while bool(first):
            carried = tuple(body_fn(*carried))
            first = cond_fn(*carried)
        return carried
    device = first.device
    on_cond = _as_jax(cond_fn, device, [])
    on_body = _as_jax(lambda *c: tuple(body_fn(*c)), device, [])
    leaves, treedef = _flatten(carried)
    result = jax.lax.while_loop(lambda arrays: on_cond(*arrays)[0].reshape(()).astype(bool),
                                lambda arrays: on_body(*arrays),
                                tuple(t.detach()._data for t in leaves))
    from ._ops.creation import from_jax
    return tuple(jax.tree_util.tree_unflatten(treedef, [from_jax(a).to(device)
                                                        for a in result]))
