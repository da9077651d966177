"""Ad-hoc JAX functions with autograd, for code outside the registry: `call_jax` applies one
to tensors and records its node, `call_jax_record` records a node for a value already computed,
`record_not_implemented` one whose backward raises, and `record_backward` runs a backward
recorded itself (create_graph)."""
from .._eager_jit import eager_jit
from .._tensor import Tensor, _wrap
from ..autograd import grad_mode
from ..autograd.graph import Node, edge_of
from .recording import _make_vjp


_FN_VJP = {}


def call_jax_record(name, fn, leaves, inputs, edges, out_avals, key=None):
    """Record a node for `fn(*leaves)` (already computed by the caller)."""
    mask = tuple(e is not None for e in edges)
    diff_out = tuple(True for _ in out_avals)
    vjp = None
    if key is not None:
        vjp = _FN_VJP.get((key, mask))
    if vjp is None:
        vjp = eager_jit(_make_vjp(fn, mask, diff_out)) if key is not None else \
            _make_vjp(fn, mask, diff_out)
        if key is not None:
            _FN_VJP[(key, mask)] = vjp
    return Node(name, edges, leaves, inputs, vjp, out_avals, None, fn)


def record_not_implemented(name, error, inputs, outputs):
    """For an op PyTorch records but cannot differentiate (`unique`: Unique2Backward0): when
    an input requires grad and grad mode is on, the floating `outputs` get a node `name` whose
    backward raises `error` (an exception instance)."""
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    if not (grad_mode.GRAD_ENABLED[0] and any(t.requires_grad for t in tensors)):
        return
    outs = [o for o in outputs if o.dtype.is_floating_point or o.dtype.is_complex]

    def refuse(leaves, cts):
        raise error

    edges = [edge_of(t) for t in tensors]
    node = Node(name, edges, [t._data for t in tensors], tensors, refuse,
                [(tuple(o.shape), o.dtype) for o in outs], None)
    for i, o in enumerate(outs):
        o._grad_fn, o._output_nr = node, i


def call_jax(name, fn, inputs, key=None):
    """Apply a JAX function to tensors (and constants), recording it for autograd.

    For code outside the registry that needs a one-off differentiable computation: device
    moves, `create_graph` backward passes. `key` (hashable) enables caching of the backward.
    """
    leaves = [t._data if isinstance(t, Tensor) else t for t in inputs]
    out = fn(*leaves)
    multi = isinstance(out, (tuple, list))
    outs_raw = list(out) if multi else [out]
    tensors = [t if isinstance(t, Tensor) else None for t in inputs]
    device = next((t.device for t in tensors if t is not None), None)
    outs = [None if o is None else _wrap(o, device) for o in outs_raw]
    if grad_mode.GRAD_ENABLED[0] and any(t is not None and t.requires_grad for t in tensors):
        live = [i for i, o in enumerate(outs) if o is not None and
                (o.dtype.is_floating_point or o.dtype.is_complex)]
        if live:
            def live_fn(*a):
                r = fn(*a)
                r = list(r) if multi else [r]
                return [r[i] for i in live]
            edges = [edge_of(t) if t is not None else None for t in tensors]
            node = call_jax_record(name, live_fn, leaves, tensors, edges,
                                   [(outs[i].shape, outs[i].dtype) for i in live],
                                   key=None if key is None else (key, tuple(live)))
            if None in tensors:   # constants and index arrays get no edge, as in PyTorch
                node._shown = [i for i, t in enumerate(tensors) if t is not None]
            for j, i in enumerate(live):
                outs[i]._grad_fn = node
                outs[i]._output_nr = j
    return outs if multi else outs[0]


def record_backward(node, cts):
    """Run `node`'s backward on Tensors, itself recorded (for create_graph=True)."""
    from ..autograd.double_backward import record_backward as record
    return record(node, cts)
