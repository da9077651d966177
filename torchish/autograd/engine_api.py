"""`backward()` and `autograd.grad()`: argument checking on top of the engine in graph.py."""
import collections.abc
import warnings

import jax

from . import grad_mode
from .grad_conj import root_marks
from .graph import edge_of, run_backward


def _ones(*args, **kwargs):
    from .._ops.creation import ones
    return ones(*args, **kwargs)


def _zeros(*args, **kwargs):
    from .._ops.creation import zeros
    return zeros(*args, **kwargs)


_IMPLICIT_GRADS = {}


def _implicit_grad(t):
    """The ones that seed `t.backward()`. Eagerly, one array per shape, dtype and device, shared
    by every pass: JAX arrays are immutable, and nothing donates an array referenced from
    elsewhere (see `_storage.held_elsewhere`). Inside a trace (compile) a fresh one, as XLA
    compiles a step whose seed is a baked-in constant less well."""
    if isinstance(t._storage.data, jax.core.Tracer):
        return _ones(t.shape, dtype=t.dtype, device=t.device)._data
    key = (t.shape, t.dtype, t.device)
    g = _IMPLICIT_GRADS.get(key)
    if g is None:
        if len(_IMPLICIT_GRADS) >= 64:
            _IMPLICIT_GRADS.clear()
        g = _IMPLICIT_GRADS[key] = _ones(t.shape, dtype=t.dtype, device=t.device)._data
    return g


def _tensors(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, create_graph, given=None):
    """The gradients seeding a pass; `given` (a list) collects the caller's tensors (None for
    an implicit one)."""
    from .._tensor import Tensor, _wrap
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    out = []
    for t, g in zip(outputs, grad_outputs):
        if g is None:
            if t.requires_grad and t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t.requires_grad and not t.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   f"outputs but got {t.dtype}")
            g = _implicit_grad(t)
            out.append(_wrap(g, t.device) if create_graph else g)
            if given is not None:
                given.append(None)
        else:
            if not isinstance(g, Tensor):
                raise TypeError("gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{g.shape} and output[0] has a shape of {t.shape}.")
            out.append(g if create_graph else g._data)
            if given is not None:
                given.append(g)
    return out


def _roots(outputs, grads):
    roots = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        e = edge_of(t) if t.requires_grad else None
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        roots.append((e, g))
    return roots


_CYCLE_WARNED = [False]
_CYCLE_MSG = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    if grad_mode.FUNC_LEVELS:
        raise RuntimeError("backward() called inside a functorch transform. This is not "
                           "supported, please use functorch.grad or functorch.vjp instead or "
                           "call backward() outside of functorch transforms.")
    outputs = _tensors(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    given = []
    grads = _make_grads(outputs, grad_tensors, create_graph, given)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _CYCLE_WARNED[0]:   # once per process, as PyTorch
        _CYCLE_WARNED[0] = True
        from .._warnings import user_stacklevel
        warnings.warn(_CYCLE_MSG, UserWarning, stacklevel=user_stacklevel())
    only = None
    if inputs is not None:
        inputs = _tensors(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        only = set()
        for t in inputs:
            if t.grad_fn is not None:
                t.retain_grad()
                only.add(t.grad_fn)
            else:
                only.add(t._accumulator())
    run_backward(_roots(outputs, grads), retain_graph, create_graph, only_leaves=only,
                 marks=None if create_graph else root_marks(grads, given))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """`inputs` may be a dict: the gradients come back as a dict with its keys."""
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), grad(
            outputs, tuple(inputs.values()), grad_outputs, retain_graph, create_graph,
            only_inputs, allow_unused, is_grads_batched, materialize_grads)))
    if isinstance(inputs, collections.abc.Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    from .._tensor import Tensor, _wrap
    from .graph_hooks import GradientEdge
    outputs = _tensors(outputs)
    inputs = (inputs,) if isinstance(inputs, GradientEdge) else _tensors(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        from .._warnings import user_stacklevel
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=user_stacklevel())
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads"
                         "=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    given = []
    grads = _make_grads(outputs, grad_outputs, create_graph, given)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs, grads)   # (the outputs' errors come first, as in the engine)
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):   # the gradient flowing into a graph edge
            edges.append(tuple(t))
            continue
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(edge_of(t))
    # (a view made under no_grad requires grad without an edge: nothing flows to it)
    captured = run_backward(roots, retain_graph, create_graph,
                            capture={e for e in edges if e is not None}, accumulate=False,
                            marks=None if create_graph else root_marks(grads, given))
    result = []
    for i, (t, e) in enumerate(zip(inputs, edges)):
        g = captured.get(e)
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not "
                                   "have been used in the graph. Set allow_unused=True if this "
                                   "is the desired behavior.")
            if materialize_grads:
                g = _zeros(t.shape, dtype=t.dtype, device=t.device)._data
        if g is not None and not isinstance(g, Tensor):
            g = _wrap(g, None if isinstance(t, GradientEdge) else t.device)
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """`grad(..., is_grads_batched=True)`: the first dim of every grad_output is a batch of
    vectors. PyTorch vmaps the backward pass; here it runs once per vector (the graph kept
    for all but the last) and the gradients are stacked, the same values."""
    from .._ops.shape_copies import stack
    from .._tensor import Tensor
    if isinstance(grad_outputs, Tensor) or grad_outputs is None:
        grad_outputs = [grad_outputs] * (1 if grad_outputs is not None else len(outputs))
    grad_outputs = list(grad_outputs)
    batch = None
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if t.requires_grad and t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            # PyTorch's implicit grad is a 0-d tensor, which vmap cannot map over
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some "
                             "input, but that input is a Tensor of dimensionality 0 so "
                             "expected in_dim to satisfy 0 <= in_dim < 0.")
        if tuple(g.shape[1:]) != tuple(t.shape):
            # (PyTorch's message shows the grad_output's shape without its first two dims)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions "
                "are expected to match the shape of corresponding output, but a mismatch "
                f"was detected: grad_output[{i}] has a shape of {g.shape[2:]} and "
                f"output[{i}] has a shape of {t.shape}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap.")
        if batch is None:
            batch = g.shape[0]
        elif g.shape[0] != batch:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes [{batch}, {g.shape[0]}] for the mapped "
                             "dimension")
    if batch == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    if retain_graph is None:
        retain_graph = create_graph
    per_vector = [grad(outputs, inputs, [g[b] for g in grad_outputs],
                       retain_graph=retain_graph if b == batch - 1 else True,
                       create_graph=create_graph, allow_unused=allow_unused)
                  for b in range(batch)]
    result = []
    for j, t in enumerate(inputs):
        column = [gs[j] for gs in per_vector]
        if column[0] is None:   # an unused input: materialized unbatched, as PyTorch does
            result.append(_zeros(t.shape, dtype=t.dtype, device=t.device)
                          if materialize_grads else None)
        else:
            result.append(stack(column))
    return tuple(result)
