"""`torchish.compile`: after a compiled call, its outputs written back onto the Python objects.

Storages, `.grad`s and optimizer state get the arrays the step produced, version counters move
as eager execution moves them, and results get the autograd node PyTorch gives them: a
differentiable `CompiledFunctionBackward` for a compiled forward, a spent one for a loss whose
backward ran inside the step.
"""
import itertools

import jax
import jax.numpy as jnp

from ._storage import _apply_steps
from ._tensor import _wrap
from .autograd import grad_mode, graph
from .autograd.graph import Node, edge_of


def write_back(entry, plan, storages, holders, owners, arrays, lrs, rng_key, outs, values):
    """After a call: the step's outputs into the storages, `.grad`s and optimizer state they
    replace (as eager execution leaves them), and the function's result."""
    if entry.pending:
        for t, a in zip(entry.pending, outs[entry.scalar_base:]):
            t._storage.data = a
        entry.pending = None
    n = entry.n_out_res
    # (setattr, not the slot: a NumPy-shared storage's `data` is a property)
    any(map(setattr, map(storages.__getitem__, entry.written), _DATA,
            outs[n:n + len(entry.written)]))
    for j, d in entry.vc:
        holders[j]._vc[0] += d
    for k, action, j in entry.grad_actions:
        p = plan.params[k]
        if action == "new":   # a tensor the step created: a new one, as in eager
            g = p._grad = _wrap(outs[j[0]], p.device)
            g._vc[0] = j[1]
        elif action == "none":
            p._grad = None
        else:
            p._grad = plan.tensors[j]
    for j, i, version in entry.leaf_grads:
        t = values[j]
        g = t._grad = _wrap(outs[i], t.device)
        g._vc[0] = version
    for oi, i, k, action, v in entry.opt_actions:
        p = plan.orders[oi][i]
        st = plan.optimizers[oi].state[p]
        if action == "new":
            t = st[k] = _wrap(outs[v[0]], p.device)
            t._vc[0] = v[1]
        elif action == "obj":
            st[k] = plan.tensors[v]
        elif action == "arr":
            st[k] = outs[v]
        else:
            st[k] = v
    if entry.single:
        result = _wrap(outs[0], entry.res_kinds[0][2])
        tensors = [result]
    else:
        flat, tensors = [], []
        for kind in entry.res_kinds:
            if kind[0] == "T":
                t = _wrap(outs[kind[1]], kind[2])
                tensors.append(t)
                flat.append(t)
            elif kind[0] == "S":   # a captured `.item()`: a number, as in PyTorch
                t = _wrap(outs[kind[1]], kind[2])
                tensors.append(t)
                flat.append(t.item())
            elif kind[0] == "A":
                flat.append(outs[kind[1]])
            else:
                flat.append(kind[1])
        result = jax.tree_util.tree_unflatten(entry.treedef, flat)
    if entry.attach:
        # a forward: let gradients flow from its outputs back to params and inputs
        _attach_grad(entry, plan, storages, owners, tensors, arrays, lrs, rng_key)
    elif entry.spent_results and grad_mode.is_grad_enabled():
        _attach_spent(entry, plan, owners, tensors)
    return result


_DATA = itertools.repeat("data")


def owner_edges(plan, owners):
    """The input slots whose owner needs grad, and the graph edges of those owners. The plan's
    own part is computed once while all its owners needing grad are leaves: their
    `requires_grad` and `grad_fn` are guarded, and a leaf's edge is its lasting accumulator."""
    n = plan.n_storages
    fixed = plan.edges
    if fixed is None:
        mine = [i for i, t in enumerate(owners[:n]) if t.requires_grad]
        fixed = (tuple(mine), [edge_of(owners[i]) for i in mine])
        if all(owners[i]._grad_fn is None for i in mine):
            plan.edges = fixed
    diff, edges = fixed[0], fixed[1].copy()
    extra = tuple(i for i in range(n, len(owners)) if owners[i].requires_grad)
    if extra:
        diff += extra
        edges += [edge_of(owners[i]) for i in extra]
    return diff, edges

def _attach_grad(entry, plan, storages, owners, tensors, arrays, lrs, rng_key):
    """Make a compiled forward differentiable: one node over the inputs needing grads."""
    diff, edges = owner_edges(plan, owners)
    if not diff or not tensors:
        return
    vjp = entry.vjp.get(diff)
    if vjp is None:
        fun = jax.jit(entry.fun)
        n_t = entry.n_tensors
        # the step differentiates storages; an input that views its storage (a leaf made by
        # `.view()`, a slice) gets the gradient of the elements it reads (the owners' views
        # are part of the plan's guards, so they are fixed for this entry)
        # (a slot of `_Plan.spread` holds its owner's view values: no steps)
        views = [() if owners[i]._view is None or owners[i]._storage is not storages[i]
                 else owners[i]._view.steps for i in diff]

        def results_of(diff_arrays, all_arrays, lrs_, key_):
            full = list(all_arrays)
            for i, a in zip(diff, diff_arrays):
                full[i] = a
            return list(fun(*full, *lrs_, key_)[:n_t])

        @jax.jit
        def vjp(leaves, cts):
            diff_arrays, all_arrays, lrs_, key_ = leaves
            outs, pull = jax.vjp(lambda d: results_of(d, all_arrays, lrs_, key_),
                                 diff_arrays)
            cts = [jnp.zeros_like(o) if c is None else graph.torch_grad(c)
                   for o, c in zip(outs, cts)]
            return [graph.torch_grad(_apply_steps(g, v)) for g, v in zip(pull(cts)[0], views)]
        entry.vjp[diff] = vjp
    node = Node("CompiledFunctionBackward", edges,
                ([arrays[i] for i in diff], arrays, lrs, rng_key),
                None, lambda leaves, cts, _v=vjp: list(_v(leaves, cts)),
                [(t.shape, t.dtype) for t in tensors], None)
    for j, t in enumerate(tensors):
        if t.dtype.is_floating_point or t.dtype.is_complex:
            t._grad_fn = node
            t._output_nr = j


def _attach_spent(entry, plan, owners, tensors):
    """A loss returned by a step that ran its backward: in PyTorch the forward up to
    `loss.backward()` is one compiled graph, so the loss keeps a CompiledFunctionBackward node
    whose buffers that backward freed (a second backward through it raises)."""
    node = Node("CompiledFunctionBackward", owner_edges(plan, owners)[1], None, None, None,
                [(t.shape, t.dtype) for t in tensors], saved=())
    for j in entry.spent_results:
        tensors[j]._grad_fn = node
        tensors[j]._output_nr = j
