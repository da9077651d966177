"""`torchish.compile`: after a compiled call, its outputs written back onto the Python objects.

Storages, `.grad`s and optimizer state get the arrays the step produced, version counters move
as eager execution moves them, and results get the autograd node PyTorch gives them: a
differentiable `CompiledFunctionBackward` for a compiled forward, a spent one for a loss whose
backward ran inside the step.
"""
import itertools

import jax
import jax.numpy as jnp

from ._views import _apply_steps, base_view, extend
from ._tensor import _wrap, _alias
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
    for mi, k, j, device in entry.attr_outs:
        plan.modules[mi].__dict__[k] = _wrap(outs[j], device)
    if entry.single:
        result = _wrap(outs[0], entry.res_kinds[0][2])
        tensors, picks = [result], [0]
    else:
        flat, tensors, picks = [], [], []   # (picks: each tensor's output of the step)
        for kind in entry.res_kinds:
            if kind[0] == "T":
                t = _wrap(outs[kind[1]], kind[2])
                tensors.append(t)
                picks.append(kind[1])
                flat.append(t)
            elif kind[0] == "S":   # a captured `.item()`: a number, as in PyTorch
                t = _wrap(outs[kind[1]], kind[2])
                tensors.append(t)
                picks.append(kind[1])
                flat.append(t.item())
            elif kind[0] == "R" and owners[kind[3]]._view is None:
                flat.append(_replay(owners[kind[3]], kind[4], kind[5]))
            elif kind[0] == "N":
                flat.append(_wrap(outs[kind[1]], kind[2]))
            elif kind[0] == "R":   # (its input is itself a view: a result of its own)
                t = _wrap(outs[kind[1]], kind[2])
                tensors.append(t)
                picks.append(kind[1])
                flat.append(t)
            elif kind[0] == "I":
                flat.append(values[kind[1]])
            elif kind[0] == "P":
                flat.append(plan.tensors[kind[1]])
            elif kind[0] == "V":
                t = _input_view(owners[kind[1]], kind[2])
                if kind[3] and t._base is not None:
                    t._base = t._base.detach()   # (so it does not require grad by its base)
                flat.append(t)
            elif kind[0] == "W":
                src = values[kind[2]] if kind[1] else plan.spread[kind[2]]
                flat.append(_view_of(src, kind[3]))
            elif kind[0] == "A":
                flat.append(outs[kind[1]])
            else:
                flat.append(kind[1])
        result = jax.tree_util.tree_unflatten(entry.treedef, flat)
    if entry.attach:
        # a forward: let gradients flow from its outputs back to params and inputs; an
        # input with a history that the step wrote in place takes its new value by a
        # `copy_` of a differentiable output (CopyBackwards), as PyTorch's runtime does
        rebase = []
        for k, i in enumerate(entry.written):
            own = owners[i]
            if own._grad_fn is not None and own._view is None and own._storage is storages[i]:
                rebase.append((own, len(tensors)))
                tensors.append(_wrap(outs[entry.n_out_res + k], own.device))
                picks.append(entry.n_out_res + k)
        _attach_grad(entry, plan, storages, owners, tensors, tuple(picks), arrays, lrs,
                     rng_key)
        for own, j in rebase:
            version = own._vc[0]
            with grad_mode.enable_grad():
                own.copy_(tensors[j])
            own._vc[0] = version
    elif entry.spent_results and grad_mode.is_grad_enabled():
        _attach_spent(entry, plan, owners, dict(zip(picks, tensors)))
    return result


_DATA = itertools.repeat("data")


def _input_view(owner, view):
    """A result that views an input's storage (`view`: its absolute view, None for the whole
    storage), as a tensor sharing that storage and version counter."""
    t = _alias(owner)
    t._view, t._cache, t._cache_base = view, None, None
    t._base = None if view is None else owner if owner._base is None else owner._base
    return t


_REPLAY = {
    "select": lambda t, dim, index: t.select(dim, index),
    "slice": lambda t, dim, start, stop, step: t[(slice(None),) * dim
                                                 + (slice(start, stop, step),)],
    "permute": lambda t, perm: t.permute(perm),
    "unsqueeze": lambda t, dim: t.unsqueeze(dim),
    "squeeze": lambda t, dims: t.squeeze(dims) if dims else t,
    "expand": lambda t, shape: t.expand(shape),
    "diagonal": lambda t, offset, dim1, dim2: t.diagonal(offset, dim1, dim2),
    "reshape": lambda t, shape: t.view(shape),
    "unfold": lambda t, dim, size, step: t.unfold(dim, size, step),
    "conj": lambda t: t.conj(),   # (a conj of a conj view clears the bit, as the steps cancel)
    "neg": lambda t: t._neg_view(),
}


def replayable(steps):
    return all(step[0] in _REPLAY for step in steps)


# a step replayed by the op whose node the traced function recorded for it
_NAMED_REPLAY = {
    ("permute", "TBackward0"): lambda t, perm: t.t(),
    ("permute", "TransposeBackward0"): lambda t, perm: _transpose(t, perm),
    ("squeeze", "SqueezeBackward0"): lambda t, dims: t.squeeze(),
    ("squeeze", "SqueezeBackward1"): lambda t, dims: t.squeeze(dims[0]),
}


def _transpose(t, perm):
    swapped = [d for d, p in enumerate(perm) if d != p]
    return t.transpose(*swapped) if len(swapped) == 2 else t.permute(perm)


def _replay(src, steps, names=None):
    """A result viewing an input that needs grad, made again by the view ops on that input
    (its `_base`, its view node), as PyTorch's compiled graphs regenerate such outputs;
    `names`: the view nodes the trace recorded, one per step (None: unknown)."""
    for i, (kind, *args) in enumerate(steps):
        replay = _NAMED_REPLAY.get((kind, names[i])) if names else None
        src = (replay or _REPLAY[kind])(src, *args)
    return src


def _view_of(src, steps):
    """A result that is `src` read through `steps` (relative to `src`), sharing its storage."""
    view = src._view if src._view is not None else base_view(src._storage.data.shape)
    for step in steps:
        view = extend(view, step)
    t = _alias(src, view)
    t._cache, t._cache_base = None, None
    return t


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

def _attach_grad(entry, plan, storages, owners, tensors, picks, arrays, lrs, rng_key):
    """Make a compiled forward differentiable: one node over the inputs needing grads, whose
    outputs are `tensors` (the step's outputs `picks`)."""
    diff, edges = owner_edges(plan, owners)
    if not diff or not tensors:
        return
    live = entry.live.get(picks)
    if live is None:
        live = entry.live[picks] = _differentiable_inputs(entry.jaxpr, picks)
    if not all(live[i] for i in diff):
        # an input the results reach only through no_grad or detached values gets no edge,
        # so its `.grad` stays None, as PyTorch's graph never reaches it
        kept = [k for k, i in enumerate(diff) if live[i]]
        diff, edges = tuple(diff[k] for k in kept), [edges[k] for k in kept]
    vjp = entry.vjp.get((diff, picks))
    if vjp is None:
        fun = jax.jit(entry.fun)
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
            outs = fun(*full, *lrs_, key_)
            return [outs[i] for i in picks]

        @jax.jit
        def vjp(leaves, cts):
            diff_arrays, all_arrays, lrs_, key_ = leaves
            outs, pull = jax.vjp(lambda d: results_of(d, all_arrays, lrs_, key_),
                                 diff_arrays)
            cts = [jnp.zeros_like(o) if c is None else graph.torch_grad(c)
                   for o, c in zip(outs, cts)]
            return [graph.torch_grad(_apply_steps(g, v)) for g, v in zip(pull(cts)[0], views)]
        entry.vjp[diff, picks] = vjp
    node = Node("CompiledFunctionBackward", edges,
                ([arrays[i] for i in diff], arrays, lrs, rng_key),
                None, lambda leaves, cts, _v=vjp: list(_v(leaves, cts)),
                [(t.shape, t.dtype) for t in tensors], None)
    for j, t in enumerate(tensors):
        if t.dtype.is_floating_point or t.dtype.is_complex:
            t._grad_fn = node
            t._output_nr = j


_CONSTANT_PRIMITIVES = frozenset({"stop_gradient", "torchish_reverse_constant"})


def _differentiable_inputs(jaxpr, picks):
    """Per input of the traced step: whether an output in `picks` depends on it other than
    through a reverse-mode constant (a value made under no_grad, a detached one) or an integer
    value (an index: PyTorch's graph has no edge through it)."""
    from ._jaxpr_deps import _inner
    jaxpr = jaxpr.jaxpr
    picked = set(picks)
    needed = {id(v) for j, v in enumerate(jaxpr.outvars) if j in picked}

    def walk(jx, needed):
        for eqn in reversed(jx.eqns):
            flags = [id(v) in needed and _inexact(v) for v in eqn.outvars]
            if not any(flags) or eqn.primitive.name in _CONSTANT_PRIMITIVES:
                continue
            sub = _inner(eqn)
            if sub is not None:
                inner = walk(sub, {id(v) for v, f in zip(sub.outvars, flags) if f})
                needed.update(id(v) for v, u in zip(eqn.invars, sub.invars) if id(u) in inner)
            else:
                needed.update(id(v) for v in eqn.invars)
        return needed

    needed = walk(jaxpr, needed)
    return [id(v) in needed for v in jaxpr.invars]


def _inexact(var):
    return jnp.issubdtype(var.aval.dtype, jnp.inexact)


def _attach_spent(entry, plan, owners, tensors):
    """A loss returned by a step that ran its backward: in PyTorch the forward up to
    `loss.backward()` is one compiled graph, so the loss keeps a CompiledFunctionBackward node
    whose buffers that backward freed (a second backward through it raises). `tensors`: the
    result tensors by their output of the step."""
    results = list(tensors.values())
    node = Node("CompiledFunctionBackward", owner_edges(plan, owners)[1], None, None, None,
                [(t.shape, t.dtype) for t in results], saved=())
    for j in entry.spent_results:
        t = tensors[j]
        t._grad_fn = node
        t._output_nr = results.index(t)
