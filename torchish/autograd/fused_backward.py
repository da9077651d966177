"""Whole-graph backward: a backward pass that repeats runs as one compiled function.

A training loop builds the same graph every step. Run node by node, its backward costs one XLA
dispatch per node plus one per `.grad` accumulation, and XLA cannot fuse across them. Once the
same graph structure (ops, edges, output shapes, which leaves already hold a `.grad`) has been
seen `repeats_needed(nodes)` times (8, more for a large graph), the engine's schedule for it is
traced once - the same per-node pullbacks, called in the same order, summing gradients in the
same order - and compiled with the accumulations into `.grad` as one `jax.jit`.

Only eager passes are fused (a traced one is compiled whole anyway), and only plain ones: no
hooks, `retain_grad`, custom Functions, `create_graph`, `autograd.grad` or `inputs=`. Anything
else, a one-off graph, or a saved tensor modified in place (whose error must come from the node
that finds it) takes the node-by-node engine.
"""
import heapq

import jax

from . import fused_views, grad_conj, graph, saved_storage
from .._eager_jit import eager_jit

# node-by-node runs of a structure before it is compiled whole: compiling costs about as much
# as a hundred or more passes save, so only a graph that repeats like a training loop's is
# worth it; a short script (a few backward passes of one graph) skips the pause (2 made the
# ported programs' suite ~18% slower in CPU time than 8). A larger graph waits longer, one
# pass per `_NODES_PER_REPEAT` nodes, up to `_MAX_REPEATS`: its compile grows with its size
# (~14 ms a node at the tests' XLA level 0) and a script of a dozen steps of a transformer
# paid 2-3 s for a few fused passes; a training loop of hundreds of steps still fuses early.
_MIN_REPEATS = 8
_MAX_REPEATS = 16   # (so benchmarks/autograd.py's 200-op chain, timed over passes 3-23, fuses)
_NODES_PER_REPEAT = 2
_MAX_KEYS = 1024   # structures counted; the counts restart when full
_MAX_COMPILED = 64  # compiled passes kept (each holds an XLA executable); cleared when full
# XLA takes about 8 ms per node to compile a pass on a 2-core CPU (112 nodes: 0.9 s); larger
# graphs (long unrolled loops, deep models) stay node by node rather than pause for seconds.
_MAX_NODES = 400
_SEEN = {}         # structure key -> node-by-node runs so far
_COMPILED = {}     # structure key -> the jitted pass
_CONJ_BITS = {}    # structure key with ConjBackward0 -> per AccumulateGrad: keeps a conj view
FUSED_RUNS = [0]   # fused passes run (tests check the path is taken)


def try_run(root_nodes, buffers, deps, retain_graph, marks=None, track=False):
    """Run the pass rooted at `root_nodes` fused; False (nothing done) when it is not eligible.
    `track`: the graph has a ConjBackward0 node (see graph's `_mark_grads`; `marks`: the
    caller's gradients that are views)."""
    AccumulateGrad = graph.AccumulateGrad
    if len(deps) > _MAX_NODES:
        return False
    roots, root_grads = [], []
    for node in root_nodes:
        for nr, g in buffers[node].items():
            if isinstance(g, jax.core.Tracer):  # already inside a trace (torchish.compile)
                return False
            roots.append((node, nr))
            root_grads.append(g)
    steps = _schedule(root_nodes, deps)
    if steps is None:
        return False
    index = {id(n): i for i, n in enumerate(steps)}
    key, leaves, old_grads = [], [], []
    for node in steps:
        if type(node) is AccumulateGrad:
            grad = node.variable._grad
            key.append(grad is None)
            if grad is not None:
                old_grads.append(grad._data)
        else:
            # gradients handed to a view node the per-node engine runs fused with this one
            # (fused_views) pass no wall: XLA then folds them as that engine's kernel does
            views = () if track else fused_views.fusable_views(node, deps, buffers, None, None)
            key.append((node._vjp, tuple(node._out_avals),
                        tuple(None if e is None else (index[id(e[0])], e[1])
                              for e in node._edges), views))
            leaves.append(node._leaves)
    key = (tuple(key), tuple((index[id(node)], nr) for node, nr in roots))
    if track:   # which gradients PyTorch holds as conj views: fixed by the nodes' kinds
        kinds = grad_conj.GRAD_KINDS
        key += (tuple(kinds.get(type(n)) for n in steps),
                tuple(grad_conj.grad_mark(g, marks) if marks else 0 for g in root_grads))
    fn = _COMPILED.get(key)
    if fn is None:
        seen = _SEEN.get(key, 0)
        if seen < repeats_needed(len(steps)):
            if len(_SEEN) >= _MAX_KEYS:
                _SEEN.clear()
            _SEEN[key] = seen + 1
            return False
        if len(_COMPILED) >= _MAX_COMPILED:
            _COMPILED.clear()
            _CONJ_BITS.clear()
        if track:
            _CONJ_BITS[key] = []
        fn = _COMPILED[key] = eager_jit(_make_pass(key))
        _SEEN.pop(key, None)
    elif fn is False:
        return False
    try:
        # (a Python 0: jit traces it, so XLA cannot fold `_wall`'s test; None elsewhere than
        # on the CPU, where a conditional would wait for its predicate on the host every node)
        devices = getattr(root_grads[0], "devices", None) if root_grads else None
        zero = 0 if devices is not None and devices().pop().platform == "cpu" else None
        new_grads = fn(leaves, root_grads, old_grads, zero)
    except Exception:  # e.g. leaves on different devices: the per-node engine copes (or raises)
        _COMPILED[key] = False
        return False
    _store(steps, new_grads, _CONJ_BITS.get(key) if track else None)
    FUSED_RUNS[0] += 1
    if not retain_graph:
        for node in steps:
            if type(node) is not AccumulateGrad:
                node.release()
    return True


def repeats_needed(nodes):
    """Node-by-node passes a graph of `nodes` nodes (AccumulateGrads included) runs before its
    structure is compiled whole."""
    return max(_MIN_REPEATS, min(_MAX_REPEATS, nodes // _NODES_PER_REPEAT))


def _schedule(root_nodes, deps):
    """The order the engine would run the nodes in, or None if some node needs the engine."""
    AccumulateGrad, Node = graph.AccumulateGrad, graph.Node
    deps = dict(deps)
    heap = [(-n._seq, id(n), n) for n in root_nodes if deps.get(n, 0) == 0]
    heapq.heapify(heap)
    steps = []
    while heap:
        node = heapq.heappop(heap)[2]
        kind = type(node)
        if kind is AccumulateGrad:
            var = node.variable
            if node._hooks or node._pre_hooks or var._hooks or var._post_acc_hooks:
                return None
            steps.append(node)
            continue
        if (not isinstance(node, Node) or node._leaves is None or node._hooks or node._pre_hooks
                or node._tensor_hooks or node._retain or node._tensor_vjp is not None
                or node._packed is not None
                or not isinstance(node._vjp, fused_views.JIT_TYPES) or not _saved_intact(node)):
            return None
        steps.append(node)
        for e in node._edges:
            if e is not None:
                nxt = e[0]
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
    return steps


def _saved_intact(node):
    for t, v, _ in node._saved or ():
        if t._version != v:
            return False
    if node._storage_refs is not None:
        saved_storage.refresh(node)
        return saved_storage.written_result(node) is None   # (its gradient: from the result)
    return True


def _make_pass(key):
    """The engine loop of `run_backward` over a fixed schedule, as a function of arrays.
    With a ConjBackward0 node, tracing it fills `_CONJ_BITS[key]`: per AccumulateGrad whether
    its gradient is one PyTorch would keep as a conj view."""
    _add = graph._add
    plan, roots = key[:2]
    conj_bits = _CONJ_BITS.get(key)
    kinds, root_bits = key[2:] if len(key) > 2 else (None, None)

    def run(leaves, root_grads, old_grads, zero):
        buffers = [{} for _ in plan]
        marks = None
        if kinds is not None:
            del conj_bits[:]
            marks = {id(g): (g, m) for g, m in zip(root_grads, root_bits) if m}
        for (i, nr), g in zip(roots, root_grads):
            buffers[i][nr] = _add(buffers[i].get(nr), g)
        leaves, old_grads = iter(leaves), iter(old_grads)
        new_grads = []
        for i, step in enumerate(plan):
            grads_in, buffers[i] = buffers[i], None
            if isinstance(step, bool):  # AccumulateGrad; the bool: .grad was None
                g = grads_in.get(0)
                old = None if step else next(old_grads)
                new_grads.append(g if g is None or old is None else old + g)
                if marks is not None:
                    conj_bits.append(step and g is not None and
                                     grad_conj.grad_mark(g, marks) == grad_conj.G_CONJ)
                continue
            vjp, out_avals, edges, views = step
            node_leaves = next(leaves)
            if not any(g is not None for g in grads_in.values()):
                continue
            grads = list(vjp(node_leaves, [grads_in.get(k) for k in range(len(out_avals))]))
            walled = [k for k in range(len(grads)) if k not in views]
            for k, g in zip(walled, _wall([grads[k] for k in walled], zero)):
                grads[k] = g
            if marks is not None and (kinds[i] is not None or marks):
                grad_conj.mark_grads(kinds[i], edges, grads_in.get(0), grads, marks)
            for e, g in zip(edges, grads):
                if e is not None and g is not None:
                    slot = buffers[e[0]]
                    slot[e[1]] = _add(slot.get(e[1]), g)
        return new_grads
    return run


def _wall(values, zero):
    """`values` passed through a conditional on a runtime zero: XLA cannot fuse across it
    (an optimization barrier does not stop CPU fusion), so each node's pullback is compiled on
    its own as in a node-by-node pass and rounds the same: a producer fused into the next
    node's reduction sums in another order. Without it a pass gave other last bits once
    compiled whole, and a run resumed from a checkpoint (whose first passes go node by node)
    drifted from the uninterrupted run, which PyTorch repeats exactly."""
    if zero is None or not any(v is not None for v in values):
        return values
    return jax.lax.cond(zero == 0, lambda v: v, lambda v: jax.tree_util.tree_map(
        jax.numpy.zeros_like, v), values)


def _store(steps, new_grads, conj_bits):
    from .._tensor import _wrap
    accs = [n for n in steps if type(n) is graph.AccumulateGrad]
    for j, (node, g) in enumerate(zip(accs, new_grads)):
        if g is None:
            continue
        var = node.variable
        if var._grad is None:
            if conj_bits and conj_bits[j] and grad_conj.keeps_conj(var):
                var._grad = grad_conj.conj_tensor(g, var._storage.device)
            else:
                var._grad = _wrap(g, var._storage.device)
        else:
            var._grad._set_data(g)
