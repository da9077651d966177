"""The tape around a `torchish.func` transform: the node(s) a transform's outputs get when
its inputs, or tensors its function captures, require grad, with PyTorch's grad_fn names.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import jaxpr_as_fun

from .._tensor import Tensor, _wrap
from .._jaxpr_deps import _inner
from ..autograd import grad_mode
from ..autograd.graph import Node, edge_of, torch_grad


def _is_t(x):
    return isinstance(x, Tensor)


def _to_arrays(tree):
    return jax.tree_util.tree_map(lambda x: x._data if _is_t(x) else x, tree, is_leaf=_is_t)


def _to_tensors(tree):
    return jax.tree_util.tree_map(
        lambda x: _wrap(x) if isinstance(x, (jax.Array, jax.core.Tracer)) else x, tree)


# ---- PyTorch's grad_fn names at the outer level -------------------------------------------
# PyTorch records a transform's inner ops at the outer level too, so an output's grad_fn is the
# node the same computation records eagerly: for a value, the inner output's own node (the
# reverse-mode transforms record at the inner level here as well); for a gradient, the last
# node of the backward formula, which torchish's create_graph backward records under PyTorch's
# names. The inner graph is read once, while the transform traces (`_Traced.namer`).

def _node_name(t):
    return t.grad_fn.name() if _is_t(t) and t.grad_fn is not None else None


def _leaves(tree):
    return jax.tree_util.tree_leaves(tree, is_leaf=_is_t)


def _grad_names(outputs, inputs):
    """The grad_fn name of each of `inputs`' gradients, as `autograd.grad` with create_graph
    records them (cotangents of ones: the names do not depend on their values)."""
    from ..autograd import grad as autograd_grad
    outputs = [o for o in _leaves(outputs) if _is_t(o) and o.requires_grad]
    if _hooked(outputs, inputs):
        return [None] * len(inputs)
    gs = autograd_grad(outputs, inputs, [o.new_ones(o.shape) for o in outputs],
                       create_graph=True, allow_unused=True)
    return [_node_name(g) for g in gs]


def _hooked(outputs, inputs):
    """Whether the inner graph holds hooks (or retain_grad), which a backward pass only for
    names must not run: the user's function would see an extra call."""
    if any(getattr(t, "_hooks", None) for t in inputs):
        return True
    seen, stack = set(), [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if any(getattr(node, a, None) for a in ("_hooks", "_pre_hooks", "_tensor_hooks",
                                                  "_retain")) \
                or (var is not None and getattr(var, "_hooks", None)):
            return True
        stack += [e[0] for e in getattr(node, "_edges", None) or () if e is not None]
    return False


class _Names:
    """What `_apply` asks for the names of its outputs: `layout(shape, probe)` spreads what the
    transform's namer found over the flat outputs (`shape`: their tree, from the trace)."""

    def __init__(self, traced, layout):
        self.traced, self.layout = traced, layout

    def want(self):
        self.traced.want_names = True

    def flat(self, shape):
        probe = self.traced.probe
        return None if probe is None else self.layout(shape, probe)


_PROBES = {}   # what a transform's namer found, per function and inputs (see `_probe_key`)


def _probe_key(tag, func, args, kwargs, *extra):
    """What the grad_fn names found for `func` depend on: the inputs' structure, shapes, dtypes
    and requires_grad (so that the backward pass reading them runs once, not per call)."""
    leaves, treedef = jax.tree_util.tree_flatten(args, is_leaf=_is_t)
    sig = tuple((tuple(x.shape), x.dtype, x.requires_grad) if _is_t(x) else type(x)
                for x in leaves)
    code = getattr(func, "__code__", None)
    if code is not None:   # (a lambda made afresh in every loop iteration still hits)
        cells = getattr(func, "__closure__", None) or ()
        func = (code, tuple(type(c.cell_contents) for c in cells if _filled(c)))
    key = (tag, func, treedef, sig, tuple(sorted(kwargs))) + extra
    try:
        hash(key)
    except TypeError:   # (an unhashable callable: read the names every call)
        return None
    if len(_PROBES) > 512:
        _PROBES.clear()
    return key


def _filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:   # (a cell not assigned yet)
        return False


def _remember(key, traced):
    if key is not None and traced.probe is not None:
        _PROBES[key] = traced.probe


def _count(tree):
    return len(jax.tree_util.tree_leaves(tree))


# ---- the tape around a transform ------------------------------------------------------------

def _captured(func, leaves):
    """Tensors requiring grad that `func` reaches without taking them as arguments (closure
    cells, globals, a bound Module's parameters): in PyTorch the tape records through them."""
    from .._compile import _Plan
    passed = {id(x._storage) for x in leaves if _is_t(x)}
    found, seen = [], set()
    for t in _Plan([func], (), ()).tensors:
        st = t._storage
        if (t.requires_grad and t._view is None and id(st) not in passed and id(st) not in seen
                and (t.dtype.is_floating_point or t.dtype.is_complex)):
            seen.add(id(st))
            found.append(t)
    return found


def _input_masks(jaxpr, in_masks):
    """Per output of `jaxpr`: a bit mask of the inputs it depends on (`in_masks`: the masks of
    its inputs), call-like equations looked into (each eager op is one)."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    env = {id(v): m for v, m in zip(jaxpr.invars, in_masks)}
    for eqn in jaxpr.eqns:
        masks = [env.get(id(v), 0) for v in eqn.invars]   # (literals: no input)
        sub = _inner(eqn)
        if sub is not None:
            outs = _input_masks(sub, masks)
        else:
            m = functools.reduce(int.__or__, masks, 0)
            outs = [m] * len(eqn.outvars)
        for v, m in zip(eqn.outvars, outs):
            env[id(v)] = m
    return [env.get(id(v), 0) for v in jaxpr.outvars]


def _live(closed):
    """`closed` without the equations no output reads (what a transform computed only to
    learn PyTorch's grad_fn names would otherwise run again in every eager call)."""
    try:
        from jax._src.interpreters import partial_eval as pe   # (no public DCE)
        jaxpr, _ = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars),
                                instantiate=True)
        return closed.replace(jaxpr=jaxpr)
    except Exception:   # (an older/newer JAX: running the dead code is only slower)
        return closed


def _apply(pure, args, name, func=None, names=None, dense=False, once=False):
    """`pure(*arg_arrays)` as Tensors, recorded on the tape when an argument, or a tensor
    `func` captures, requires grad. As PyTorch's graph: an output that does not depend on
    them gets no grad_fn; the others get a node per grad_fn name, with edges to what they
    depend on. `names` (a `_Names`): PyTorch's grad_fn name per output leaf, read while
    `pure` traces (None: `name`). `dense`: every output on the tape of every input.
    `once`: `pure` runs once, on the values (an eager vmap, whose random ops read their
    batched parameters then: see `_random_trace.Host`), differentiated as it runs; what
    depends on what is read off its pullback instead of a prior trace."""
    leaves, treedef = jax.tree_util.tree_flatten(args, is_leaf=_is_t)
    arrays = [x._data if _is_t(x) else x for x in leaves]
    levels = grad_mode.FUNC_LEVELS
    if not grad_mode.is_grad_enabled() or (levels and isinstance(levels[-1],
                                                                  grad_mode.ForwardLevel)):
        # (inside vmap/jvp the transform around differentiates this one as well)
        return _to_tensors(pure(*treedef.unflatten(arrays)))
    diff = [i for i, x in enumerate(leaves)
            if _is_t(x) and x.requires_grad and (x.dtype.is_floating_point or x.dtype.is_complex)]
    captured = _captured(func, leaves) if func is not None else []
    if not diff and not captured:
        return _to_tensors(pure(*treedef.unflatten(arrays)))
    storages = [t._storage for t in captured]

    def of_diff(diff_arrays, captured_arrays):
        full = list(arrays)
        for i, a in zip(diff, diff_arrays):
            full[i] = a
        held = [st.data for st in storages]
        try:   # the captured tensors read the traced values while `pure` runs
            for st, a in zip(storages, captured_arrays):
                st.data = a
            return pure(*treedef.unflatten(full))
        finally:
            for st, a in zip(storages, held):
                st.data = a
    inputs = [leaves[i] for i in diff] + captured
    flat_in = [arrays[i] for i in diff] + [st.data for st in storages]
    if names is not None:
        names.want()
    if once:
        return _apply_once(of_diff, len(diff), flat_in, inputs, name)
    closed, shape = jax.make_jaxpr(of_diff, return_shape=True)(flat_in[:len(diff)],
                                                                flat_in[len(diff):])
    closed = _live(closed)
    out_def = jax.tree_util.tree_structure(shape)
    masks = _input_masks(closed, [1 << k for k in range(len(flat_in))])
    if dense:   # (every output reads every input, whatever the trace says)
        masks = [(1 << len(flat_in)) - 1] * len(masks)
    run = jaxpr_as_fun(closed)
    every = functools.reduce(int.__or__, masks, 0)
    used = [k for k in range(len(flat_in)) if every >> k & 1]
    if not used:
        return _to_tensors(out_def.unflatten(run(*flat_in)))

    def of_used(*u):
        full = list(flat_in)
        for k, a in zip(used, u):
            full[k] = a
        return run(*full)
    out_leaves, pull = jax.vjp(of_used, *[flat_in[k] for k in used])
    tensors = [_wrap(o) for o in out_leaves]
    flat_names = names.flat(shape) if names is not None else None
    if not flat_names or len(flat_names) != len(tensors):
        flat_names = [None] * len(tensors)
    groups = {}
    for j, t in enumerate(tensors):
        if masks[j] and (t.dtype.is_floating_point or t.dtype.is_complex):
            groups.setdefault(flat_names[j] or name, []).append(j)
    for node_name, outs in groups.items():
        mask = functools.reduce(int.__or__, (masks[j] for j in outs), 0)
        ins = [p for p, k in enumerate(used) if mask >> k & 1]
        _pullback_node(node_name, pull, out_leaves, tensors, outs, ins,
                       [edge_of(inputs[used[p]]) for p in ins])
    return out_def.unflatten(tensors)


def _pullback_node(name, pull, out_leaves, tensors, outs, ins, edges):
    """Record one node `name` for the outputs `outs` (indices into `tensors`, the wrapped
    `out_leaves`) whose backward is `pull` (a `jax.vjp` pullback over every output), giving
    the gradients of its inputs `ins` along `edges`."""
    def backward(leaves, cts):
        # leaves: [the pullback], dropped when the graph is freed
        filled = [None] * len(out_leaves)
        for j, c in zip(outs, cts):
            filled[j] = c
        for j, (o, c) in enumerate(zip(out_leaves, filled)):
            if not jnp.issubdtype(o.dtype, jnp.inexact):
                c = np.zeros(o.shape, jax.dtypes.float0)
            elif c is None:
                c = jnp.zeros_like(o)
            filled[j] = torch_grad(c)
        g = leaves[0](filled)
        return [torch_grad(g[p]) for p in ins]
    node = Node(name, edges, [pull], None, backward,
                [(tensors[j].shape, tensors[j].dtype) for j in outs])
    for nr, j in enumerate(outs):
        tensors[j]._grad_fn = node
        tensors[j]._output_nr = nr


def _apply_once(of_diff, n_diff, flat_in, inputs, name):
    """`_apply` for `once`: `of_diff` differentiated as it runs (`jax.vjp`), one node for the
    floating outputs that depend on the inputs, by the pullback's own jaxpr."""
    tree = []

    def flat(*a):
        out = of_diff(list(a[:n_diff]), list(a[n_diff:]))
        leaves, treedef = jax.tree_util.tree_flatten(out)
        tree.append(treedef)
        return leaves
    out_leaves, pull = jax.vjp(flat, *flat_in)
    tensors = [_wrap(o) for o in out_leaves]
    masks = _pullback_masks(pull, out_leaves, len(flat_in))
    outs = [j for j, t in enumerate(tensors)
            if masks[j] and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if outs:
        mask = functools.reduce(int.__or__, (masks[j] for j in outs), 0)
        ins = [k for k in range(len(flat_in)) if mask >> k & 1]
        _pullback_node(name, pull, out_leaves, tensors, outs, ins,
                       [edge_of(inputs[k]) for k in ins])
    return tree[0].unflatten(tensors)


def _pullback_masks(pull, outs, n_in):
    """Per output: the bit mask of the inputs whose gradient its cotangent reaches in the
    pullback's jaxpr (every input where that jaxpr cannot be read)."""
    cts = [jnp.zeros(o.shape, o.dtype) if jnp.issubdtype(o.dtype, jnp.inexact)
           else np.zeros(o.shape, jax.dtypes.float0) for o in outs]
    full = (1 << n_in) - 1
    try:
        closed = jax.make_jaxpr(pull)(cts)
    except Exception:   # (conservative: every output on the tape of every input)
        return [full] * len(outs)
    if len(closed.jaxpr.invars) != len(outs):
        return [full] * len(outs)
    reached = _input_masks(closed, [1 << j for j in range(len(outs))])
    return [functools.reduce(int.__or__, (1 << k for k, m in enumerate(reached)
                                          if m >> j & 1), 0) for j in range(len(outs))]
