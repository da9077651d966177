"""`torch.cond` and `torch.while_loop`: control flow on tensor values that `torchish.compile`
can trace. Eagerly they run the branch (or loop) that the values pick; inside a trace, where
the predicate is a JAX tracer, they become `jax.lax.cond` / `jax.lax.while_loop` over the
functions, so one compiled step holds both branches (PyTorch's compile does the same).

A tensor predicate records the branch as one node, CondAutogradOpBackward (PyTorch's name),
whose backward is the branch's `jax.vjp`. A Python predicate just calls the branch, as
PyTorch does."""
import jax

from . import autograd
from ._ops.call_jax import call_jax
from ._tensor import Tensor


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


def cond(pred, true_fn, false_fn, operands=()):
    if not isinstance(pred, Tensor):
        return (true_fn if pred else false_fn)(*operands)
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    operands = tuple(operands)
    if not all(isinstance(t, Tensor) for t in operands):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           "that only consists of tensor leaves, but got " +
                           ", ".join(type(t).__name__ for t in operands) + ".")
    device = pred.device
    structure = []
    on_true, on_false = _as_jax(true_fn, device, structure), _as_jax(false_fn, device, structure)
    value = pred._data.reshape(())
    if isinstance(value, jax.core.Tracer):
        def fn(p, *arrays):
            return jax.lax.cond(p.astype(bool), on_true, on_false, *arrays)
        outs = call_jax("CondAutogradOpBackward", fn, (pred.detach(),) + operands)
    else:
        chosen = on_true if bool(value) else on_false
        outs = call_jax("CondAutogradOpBackward", lambda *arrays: chosen(*arrays), operands)
    return jax.tree_util.tree_unflatten(structure[0], list(outs))


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
