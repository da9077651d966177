"""Fusing a view node's backward into its producer's (a step of the backward engine in graph.py).

`w.t()` in `x @ w.t()` records TBackward0 whose backward only transposes the gradient that
AddmmBackward0 produced. When a view node's only producer is the node about to run, both
backwards run as one compiled function, so XLA writes the gradient in its final layout
instead of materialising it twice. The view node still runs in its turn (hooks, order and
accumulation are unchanged); it just finds its result ready.
"""
import jax

from .._eager_jit import EagerJit, eager_jit
from . import saved_storage

JIT_TYPES = (type(jax.jit(lambda x: x)), EagerJit)   # node backwards that can be fused
_FUSED_VJPS = {}


def fusable_views(node, deps, buffers, needed, capture):
    """Positions of `node`'s edges leading to view nodes that can run fused with it."""
    if node._hooks or not isinstance(node._vjp, JIT_TYPES) or node._packed is not None:
        return ()
    if node._storage_refs is not None:   # (a written saved result: apply_arrays reads it)
        node._check_saved()
        if saved_storage.written_result(node) is not None:
            return ()
    out = []
    for i, e in enumerate(node._edges):
        if e is None:
            continue
        v = e[0]
        if (getattr(v, "_is_view", False) and deps.get(v) == 1 and v not in buffers
                and v._leaves is not None and not v._saved and not v._hooks
                and not v._pre_hooks and not v._tensor_hooks and not v._retain
                and isinstance(v._vjp, JIT_TYPES)
                and (needed is None or id(v) in needed)
                and (capture is None or (v, e[1]) not in capture)):
            out.append(i)
    return tuple(out)


def apply_fused(node, cts, positions, fused):
    node._check_saved()
    views = [node._edges[i][0] for i in positions]
    key = (node._vjp, positions, tuple(v._vjp for v in views),
           tuple(node._edges[i][1] for i in positions), tuple(len(v._out_avals) for v in views))
    fn = _FUSED_VJPS.get(key)
    if fn is None:
        fn = _FUSED_VJPS[key] = eager_jit(_make_fused(*key))
    grads, inner = fn(node._leaf_values(), cts, [v._leaf_values() for v in views])
    for v, g in zip(views, inner):
        fused[v] = g
    return grads


def _make_fused(vjp, positions, view_vjps, out_nrs, n_outs):
    def fused(leaves, cts, view_leaves):
        grads = list(vjp(leaves, cts))
        inner = []
        for i, v_vjp, leaves_v, nr, n in zip(positions, view_vjps, view_leaves, out_nrs, n_outs):
            v_cts = [None] * n
            v_cts[nr] = grads[i]
            grads[i] = None  # handed to the view node, not returned
            inner.append(v_vjp(leaves_v, v_cts))
        return grads, inner
    return fused
