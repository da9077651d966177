"""Backward refusals inside the reverse-mode transforms (`grad`, `vjp`, `jacrev`, `hessian`).

JAX differentiates the traced function, never a recorded node's backward, so a node whose
backward PyTorch refuses (`torch::autograd::NotImplemented`, a complex clamp bound, ...) would
be differentiated silently. The tape inside those transforms still records PyTorch's graph
(the differentiated arguments are leaves requiring grad), so the refusal is read off it: the
one PyTorch's engine would meet first among the nodes on a path from the output to a
differentiated argument."""
from ..autograd.graph import AccumulateGrad, edge_of


def refused_backward(outputs, inputs):
    """The exception PyTorch's backward from `outputs` to `inputs` (Tensors) raises at a
    refusing node, or None."""
    targets = {id(t) for t in inputs}   # (a leaf's AccumulateGrad holds the Tensor)
    roots = [e[0] for e in (edge_of(o) for o in outputs if getattr(o, "requires_grad", False)) if e is not None]
    nodes, seen, stack = [], set(), list(roots)
    while stack:   # (iterative: a graph may be deep)
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nodes.append(node)
        stack.extend(e[0] for e in getattr(node, "_edges", ()) if e is not None)
    # a node's inputs were recorded before it: ascending sequence numbers visit children first
    needed = {id(n) for n in nodes if isinstance(n, AccumulateGrad) and id(n.variable) in targets}
    refusals = []
    for node in sorted((n for n in nodes if not isinstance(n, AccumulateGrad)),
                       key=lambda n: getattr(n, "_seq", 0)):
        if any(e is not None and id(e[0]) in needed for e in getattr(node, "_edges", ())):
            needed.add(id(node))
            refusal = getattr(node._vjp, "refusal", None)
            if refusal is not None:
                refusals.append((getattr(node, "_seq", 0), refusal))
    if not refusals:
        return None
    exc = max(refusals, key=lambda r: r[0])[1]   # (the engine runs the latest node first)
    return type(exc)(*exc.args)
