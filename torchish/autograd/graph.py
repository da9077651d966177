"""Graph nodes and the backward engine.

A `Node` is one recorded op: its `grad_fn` name, the edges to the nodes that produced its inputs,
the input values it was called with (`leaves`) and a `vjp(leaves, cotangents)` function - the
op's `jax.vjp` pullback, compiled and cached by the dispatcher. The engine walks the graph
iteratively in PyTorch's order (ready nodes by decreasing sequence number; AccumulateGrad first).
"""
import collections
import heapq
import itertools

import jax
import jax.numpy as jnp

from . import anomaly, fused_backward, fused_views, grad_mode, saved_storage, saved_tensors
from .saved_tensors import (allow_mutation_on_saved_tensors,  # noqa: F401
                           disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks)

_SEQ = itertools.count()
BACKWARD_RUNS = [0]  # how many backward passes ran (compile tells forwards from steps)

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """A recorded operation (the object behind `tensor.grad_fn`)."""
    __slots__ = ("_name", "_edges", "_leaves", "_inputs", "_vjp", "_out_avals", "_saved",
                 "_seq", "_tensor_hooks", "_retain", "_hooks", "_pre_hooks", "_fn",
                 "_in_avals_cache", "_tensor_vjp", "_is_view", "_packed", "_shown",
                 "_storage_refs", "metadata", "__weakref__")

    def __new__(cls, name, *args, **kwargs):
        # PyTorch has one class per grad_fn kind: `type(t.grad_fn).__name__` is "MulBackward0"
        if cls is Node:
            cls = _NODE_CLASSES.get(name) or _node_class(name)
        return object.__new__(cls)

    def __init__(self, name, edges, leaves, inputs, vjp, out_avals, saved=(), fn=None):
        self._name = name
        self._edges = edges          # per leaf: (node, output_nr) or None
        self._leaves = leaves        # the op's input values (arrays / scalars)
        self._inputs = inputs        # the input Tensors (for create_graph), None for scalars
        self._vjp = vjp              # (leaves, cts) -> grads aligned with edges
        self._out_avals = out_avals  # (shape, dtype) per output, to materialise zero cts
        self._saved = saved          # (tensor, version) pairs checked at backward
        self._fn = fn                # the forward as a JAX function of the leaves
        self._seq = next(_SEQ)
        self._tensor_hooks = None    # output_nr -> {handle id: hook} (register_hook on non-leaves)
        self._retain = None          # output_nr -> weakref to tensor with retain_grad()
        self._hooks = None           # handle id -> hook (an OrderedDict: RemovableHandle
        self._pre_hooks = None       # holds it weakly)
        self._in_avals_cache = None
        self._tensor_vjp = None      # custom Functions: backward written with Tensors
        self._is_view = False        # recorded by a view op (its backward may be fused)
        self._packed = None          # saved-tensor hooks: [(leaf position, packed, unpack)]
        self._storage_refs = None    # saved operands re-read at backward (saved_storage.py)
        # which of `_edges` PyTorch's node has, in its order (None: all; an entry None: an
        # absent optional input); the others belong to operands it has no edge for (indices,
        # masks, Python numbers), kept so `_edges` stays aligned with the pullback's results
        self._shown = None
        self.metadata = {}

    def name(self):
        return self._name

    def __getattr__(self, attr):   # only for names the class does not have
        if attr.startswith(("_saved_", "_raw_saved_")):
            known = _saved_attributes(self._name)   # (PyTorch's node: its class's only)
            if known is None or attr in known:
                if attr.startswith("_saved_"):
                    return saved_tensors.saved_attribute(self, attr[len("_saved_"):])
                return saved_tensors.raw_saved_attribute(self, attr[len("_raw_saved_"):])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):   # with the `_saved_*` attributes PyTorch's node of this name has
        names = set(object.__dir__(self)) - {"_saved"}   # (ours, not PyTorch's)
        return sorted(names | (_saved_attributes(self._name) or set()))

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0)
                     for e in self._public(self._edges))

    def _public(self, per_edge):
        """Of values aligned with `_edges`, those of the edges PyTorch's node has."""
        shown = self._shown
        return per_edge if shown is None else [
            None if i is None else per_edge[i] for i in shown]

    def _internal(self, public):
        """Values given for the node's public edges, aligned with `_edges` again."""
        shown = self._shown
        if shown is None:
            return list(public)
        out = [None] * len(self._edges)
        for i, v in zip(shown, public):
            if i is not None:
                out[i] = v
        return out

    def register_hook(self, fn):
        if self._hooks is None:
            self._hooks = collections.OrderedDict()
        return add_hook(self._hooks, fn)

    def _sequence_nr(self):
        return self._seq

    def register_prehook(self, fn):
        if self._pre_hooks is None:
            self._pre_hooks = collections.OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def __repr__(self):
        module = type(self).__module__
        where = "" if module == "builtins" else module + "."
        return f"<{where}{self._name.rsplit('::', 1)[-1]} object at {hex(id(self))}>"

    def __call__(self, *grads):
        """The node's backward applied to `grads` (PyTorch: one gradient, or a tuple)."""
        from .._tensor import Tensor, _wrap
        if self._tensor_vjp is not None:
            per_edge = self._tensor_vjp(list(grads), False)
        else:
            per_edge = self.apply_arrays([g._data for g in grads])
        out = tuple(g if g is None or isinstance(g, Tensor) else _wrap(g)
                    for g in self._public(per_edge))
        return out[0] if len(out) == 1 else out

    def _check_saved(self):
        if self._leaves is None and self._saved is not None:
            raise RuntimeError(_FREED_MSG)
        for tensor, version, producer in self._saved or ():
            # (version None: packed by a saved-tensor hook, which PyTorch does not check)
            if version is not None and tensor._version != version:
                raise modified_error(tensor, version, producer)
        if self._storage_refs is not None and self._leaves is not None and self._packed is None:
            saved_storage.refresh(self)

    def _leaf_values(self):
        if self._leaves is not None:
            if self._packed is not None:
                return saved_tensors.unpacked_leaves(self._leaves, self._packed)
            return self._leaves
        # Freed, and nothing was saved: the pullback does not depend on the values.
        return [_zeros_like_aval(a) for a in self._in_avals()]

    def _in_avals(self):
        return self._in_avals_cache

    def apply_arrays(self, cts):
        self._check_saved()
        if self._packed is not None and self._leaves is not None:
            outputs = []   # the saved outputs as the unpack hooks give them
            leaves = saved_tensors.unpacked_leaves(self._leaves, self._packed, outputs)
            if outputs:
                from .double_backward import from_unpacked_result
                grads = from_unpacked_result(self, outputs, cts, leaves)
                if grads is not None:
                    return grads
            return self._vjp(leaves, cts)
        if self._storage_refs is not None:
            result = saved_storage.written_result(self)
            if result is not None:
                from .double_backward import from_unpacked_result
                grads = from_unpacked_result(self, [result], cts, self._leaf_values())
                if grads is not None:
                    return grads
        return self._vjp(self._leaf_values(), cts)

    def release(self):
        if self._leaves is None:
            return
        if self._saved is None:  # nothing saved: keep only the shapes
            self._in_avals_cache = [_aval(x) for x in self._leaves]
        self._leaves = None
        self._inputs = None
        self._packed = None
        self._storage_refs = None


_NODE_CLASSES = {}
_SAVED_ATTRIBUTES = {}


def _saved_attributes(name):
    """The `_saved_*` / `_raw_saved_*` attributes of PyTorch's node class `name`, or None
    for a node PyTorch has no class of."""
    found = _SAVED_ATTRIBUTES.get(name, False)
    if found is False:
        from ._saved_names import SAVED
        short = name.rsplit("::", 1)[-1]
        found = None
        if short in SAVED:
            found = set()
            for word in SAVED[short].split():
                found.add("_saved_" + word.rstrip("*"))
                if word.endswith("*"):
                    found.add("_raw_saved_" + word[:-1])
        _SAVED_ATTRIBUTES[name] = found
    return found


def _node_class(name):
    short = name.rsplit("::", 1)[-1]
    # PyTorch's node classes are C++ types without a module: `<class 'MulBackward0'>`
    module = "torch.autograd.function" if short == "CompiledFunctionBackward" else "builtins"
    cls = _NODE_CLASSES[name] = type(short, (Node,), {"__slots__": (), "__module__": module})
    return cls


class _ViewAval(tuple):
    """The aval of a view operand passed as (base, offsets): (base aval, offsets)."""


def torch_grad(x):
    """A cotangent in PyTorch's convention from JAX's, or back (an involution). For complex
    values PyTorch's vjp is conj(J)^T g where JAX's is J^T g: conjugating the cotangent on the
    way into a JAX pullback and the gradients on the way out maps one onto the other.
    A zero imaginary part stays +0 (PyTorch's gradients of real-valued steps print `1.+0.j`;
    a plain conj would turn every such zero into -0)."""
    if x is None or not jnp.iscomplexobj(x):
        return x
    return jax.lax.complex(jnp.real(x), 0 - jnp.imag(x))


def _aval(leaf):
    if isinstance(leaf, tuple):  # a view operand read from its base: (base, offsets)
        return _ViewAval((_aval(leaf[0]), leaf[1]))
    # a number (a Python scalar operand, a slice's start) is kept, as PyTorch keeps the
    # non-tensor arguments of a node: a second backward through `x[2:]` needs it
    return (leaf.shape, leaf.dtype) if hasattr(leaf, "shape") else leaf


def _zeros_like_aval(aval):
    if isinstance(aval, _ViewAval):
        return (_zeros_like_aval(aval[0]), aval[1])
    if not isinstance(aval, tuple):
        return aval
    shape, dtype = aval
    return jnp.zeros(shape, dtype)


def _op_name(node):
    # the saved-tensor error keeps a namespace ("torch::autograd::CopySlices")
    name = node.name()
    return name.rsplit("::", 1)[0] + "::" + _op_name_of(name) if "::" in name \
        else _op_name_of(name)


def _op_name_of(name):
    name = name.rsplit("::", 1)[-1]
    stripped = name.rstrip("0123456789")
    if not stripped.endswith("Backward"):
        return name
    overload = name[len(stripped):]   # PyTorch keeps it but for 0: "Pow1", "Tanh"
    return stripped[:-len("Backward")] + ("" if overload == "0" else overload)


def modified_error(tensor, version, producer=None):
    """PyTorch's error for a saved tensor changed in place since it was saved. `producer`
    names a saved output: (the node that saved it, output_nr); a saved input is named by its
    grad_fn now (after the in-place op), as PyTorch's SavedVariable does."""
    from .._dtype import type_name
    if producer is None and tensor.grad_fn is not None:
        producer = (tensor.grad_fn, tensor._output_nr)
    where = ""
    # (a saved integer output, such as max's indices, has no grad_fn to name)
    if producer is not None and (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        # PyTorch names the op without "Backward0"
        where = f", which is output {producer[1]} of {_op_name(producer[0])},"
    if anomaly._enabled[0]:
        hint = ("the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!")
    else:
        hint = ("enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name(tensor.dtype)} {list(tensor.shape)}]{where} is at "
        f"version {tensor._version}; expected version {version} instead. Hint: {hint}")


def saved_entry(tensor, producer=None):
    """What a node remembers of a tensor it saves: the tensor, its version and, for an output
    of the node, (node, output_nr) (an error names it; an input is named by its grad_fn then)."""
    return (tensor, tensor._version, producer)


class AccumulateGrad:
    """The node of a leaf that requires grad: adds incoming gradients into `variable.grad`."""
    __slots__ = ("variable", "_hooks", "_pre_hooks", "metadata", "__weakref__")
    __module__ = "builtins"  # a C++ type in PyTorch: `<class 'AccumulateGrad'>`
    _seq = float("inf")  # PyTorch runs AccumulateGrad as soon as it is ready

    def __init__(self, variable):
        self.variable = variable
        self._hooks = None
        self._pre_hooks = None
        self.metadata = {}

    def name(self):
        return "torch::autograd::AccumulateGrad"

    next_functions = ()

    def register_hook(self, fn):
        if self._hooks is None:
            self._hooks = collections.OrderedDict()
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn):
        if self._pre_hooks is None:
            self._pre_hooks = collections.OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def __lt__(self, other):
        return id(self) < id(other)


def add_hook(hooks, fn):
    """Register `fn` in the OrderedDict `hooks`; the handle removes it again."""
    from .._hook_handle import RemovableHandle
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


def hooks_in(hooks):
    """The hooks of a (possibly absent) hook dict, as a snapshot: a hook may remove itself."""
    return tuple(hooks.values()) if hooks else ()


def edge_of(tensor):
    """The graph edge a tensor's gradient flows into, or None when it needs none."""
    # (`grad_fn` may regenerate a view's node; only a view has a `_view_vc`)
    fn = tensor._grad_fn if tensor._view_vc is None else tensor.grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    if tensor._requires_grad:
        return (tensor._accumulator(), 0)
    return None


# ---- the engine ----------------------------------------------------------------------------

def _graph_deps(roots):
    """Dependency counts of every node reachable from `roots`, found without recursion."""
    deps = {}
    seen = set()
    stack = list(roots)
    for r in roots:
        seen.add(id(r))
    order = []
    while stack:
        node = stack.pop()
        order.append(node)
        for e in getattr(node, "_edges", ()):
            if e is None:
                continue
            nxt = e[0]
            deps[nxt] = deps.get(nxt, 0) + 1
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    return deps, order


def _needed_nodes(order, targets):
    """Ids of the nodes whose backward must run: those with a path to some target. A target
    itself runs only if it leads to another target (torch does not run the node of an
    `autograd.grad` input)."""
    reach = set()
    changed = True
    target_ids = {id(t) for t in targets}
    # Reverse discovery order approximates a topological order; iterate to a fixed point.
    while changed:
        changed = False
        for node in reversed(order):
            if id(node) in reach:
                continue
            if any(e is not None and (id(e[0]) in reach or id(e[0]) in target_ids)
                   for e in getattr(node, "_edges", ())):
                reach.add(id(node))
                changed = True
    return reach


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if getattr(a, "is_sparse", False) or getattr(b, "is_sparse", False):
        return _sparse_sum(a, b)
    return a + b


def _sparse_sum(old, new):
    """Two gradients for one input, one of them sparse, summed as PyTorch's InputBuffer does:
    the newer first after a sparse one (sparse + sparse is PyTorch's merge of the two entry
    lists); a dense sum stays an array (a sparse gradient never comes with create_graph)."""
    from .._tensor import Tensor, _wrap
    old_t, new_t = (g if isinstance(g, Tensor) else _wrap(g) for g in (old, new))
    out = new_t + old_t if old_t.is_sparse else old_t + new_t
    return out if out.is_sparse else out._data


_CALLBACKS = []   # run when the current backward pass finishes (`queue_callback`)
_CHECKPOINT_VALID = []   # per running (nested) backward pass: does it compute every gradient?


def queue_callback(fn):
    """Run `fn()` once the backward pass now running has finished (PyTorch's
    `Variable._execution_engine.queue_callback`)."""
    _CALLBACKS.append(fn)


def run_backward(roots, retain_graph=False, create_graph=False, capture=None,
                 accumulate=True, only_leaves=None, marks=None):
    """Backpropagate `roots` = [(edge, gradient)].

    Gradients are JAX arrays, or Tensors when `create_graph` (so backward is itself recorded).
    `capture` maps edges (node, output_nr) whose incoming gradient should be returned (for
    `autograd.grad`); `only_leaves` limits accumulation to these AccumulateGrad nodes;
    `marks`: the caller's gradients that are views (`grad_conj.root_marks`).
    """
    outer = _CALLBACKS[:]
    del _CALLBACKS[:]
    _CHECKPOINT_VALID.append(capture is None and only_leaves is None)
    _PASSES.append(None)
    try:
        captured = _run_backward(roots, retain_graph, create_graph, capture, accumulate,
                                 only_leaves, marks)
        while _CALLBACKS:
            _CALLBACKS.pop(0)()
        return captured
    finally:
        _CALLBACKS[:] = outer
        _CHECKPOINT_VALID.pop()
        _PASSES.pop()


_PASSES = []   # per running backward pass: (ids of reachable nodes, ids needed or None)


def will_execute(node):
    """PyTorch's `_will_engine_execute_node`: whether the running pass runs `node`."""
    if not _PASSES or _PASSES[-1] is None:
        return False
    reachable, needed = _PASSES[-1]
    return id(node) in reachable and (needed is None or id(node) in needed)


def _is_checkpoint_valid():
    """False inside a pass that computes only some gradients (`autograd.grad`, `backward(inputs=)`):
    the reentrant checkpoint's inner backward would then accumulate into every leaf."""
    return _CHECKPOINT_VALID[-1] if _CHECKPOINT_VALID else True


def _run_backward(roots, retain_graph, create_graph, capture, accumulate, only_leaves, marks):
    from .._ops.registry import record_backward

    BACKWARD_RUNS[0] += 1
    root_nodes = []
    buffers = {}
    for (node, nr), grad in roots:
        if node not in buffers:
            root_nodes.append(node)
            buffers[node] = {}
        buffers[node][nr] = _add(buffers[node].get(nr), grad)

    deps, order = _graph_deps(root_nodes)
    targets = None
    if capture is not None:
        targets = [e[0] for e in capture]
    elif only_leaves is not None:
        targets = list(only_leaves)
    reachable = {id(n) for n in order}
    _PASSES[-1] = (reachable, None if targets is None else reachable)
    nan_check = anomaly._enabled[0] and anomaly._check_nan[0]
    # (a set of the node types: cheaper per node than a generator's test)
    track = not create_graph and (marks is not None or grad_conj.CONJ_RECORDED[0] and
                                  grad_conj.CONJ_CLS in set(map(type, order)))
    if (targets is None and accumulate and not create_graph and not nan_check
            and fused_backward.try_run(root_nodes, buffers, deps, retain_graph,
                                       marks if track else None, track)):
        return {}
    if track and marks is None:
        marks = {}
    needed = _needed_nodes(order, targets) if targets is not None else None
    if needed is not None:
        _PASSES[-1] = (reachable, needed | {id(t) for t in targets})
    captured = {}
    fused = {}  # view node -> its gradients, already computed with its producer's

    heap = []
    for n in root_nodes:
        if deps.get(n, 0) == 0:
            heapq.heappush(heap, (-n._seq, id(n), n))
    prev_mode = grad_mode.GRAD_ENABLED[0]
    grad_mode.GRAD_ENABLED[0] = bool(create_graph)
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads_in = buffers.pop(node, {})
            if isinstance(node, AccumulateGrad):
                if capture is not None and (node, 0) in capture:
                    # (an input of autograd.grad: its tensor hooks run on what it captures)
                    g = grads_in.get(0)
                    if track and grad_conj.grad_mark(g, marks) & grad_conj.G_CONJ:
                        g = grad_conj.conj_tensor(g, node.variable.device)
                    captured[(node, 0)] = _leaf_hooks(node.variable, g, create_graph)
                if accumulate and (only_leaves is None or node in only_leaves):
                    _accumulate(node, grads_in.get(0), create_graph, marks if track else None)
                continue
            if node._tensor_hooks or node._retain or node._pre_hooks:
                grads_in = _run_tensor_hooks(node, grads_in, create_graph)
            if capture is not None:
                for nr, g in grads_in.items():
                    if (node, nr) in capture:
                        captured[(node, nr)] = grad_conj.conj_tensor(g) if track and \
                            grad_conj.grad_mark(g, marks) & grad_conj.G_CONJ else g
            run = needed is None or id(node) in needed
            if node in fused:  # computed with its producer's backward (see fused_views)
                grads = fused.pop(node)
            elif run and any(g is not None for g in grads_in.values()):
                cts = [grads_in.get(i) for i in range(len(node._out_avals))]
                if node._tensor_vjp is not None:
                    node._check_saved()
                    grads = node._tensor_vjp(cts, create_graph)
                elif create_graph:
                    grads = record_backward(node, cts)
                else:
                    # (a fused view's incoming gradient is never seen: `grad_conj.mark_grads`
                    # needs it)
                    views = () if track else fused_views.fusable_views(node, deps, buffers,
                                                                       needed, capture)
                    if views:
                        grads = fused_views.apply_fused(node, cts, views, fused)
                    else:
                        grads = node.apply_arrays(cts)
                if node._hooks:
                    grads = _run_node_hooks(node, grads, cts, create_graph)
                if nan_check:
                    anomaly.check_nan(node, grads)
            else:
                grads = [None] * len(node._edges)
            if track:
                kind = grad_conj.GRAD_KINDS.get(type(node))
                if kind is not None or marks:
                    grad_conj.mark_grads(kind, node._edges, grads_in.get(0), grads, marks)
            if not retain_graph:
                node.release()
            for e, g in zip(node._edges, grads):
                if e is None:
                    continue
                nxt, nr = e
                if g is not None:
                    slot = buffers.setdefault(nxt, {})
                    slot[nr] = _add(slot.get(nr), g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(heap, (-nxt._seq, id(nxt), nxt))
    finally:
        grad_mode.GRAD_ENABLED[0] = prev_mode
    return captured


def _as_tensor_grad(g):
    from .._tensor import Tensor, _wrap
    return g if isinstance(g, Tensor) else _wrap(g)


def _run_tensor_hooks(node, grads_in, create_graph):
    for nr in list(grads_in):
        for hook in hooks_in((node._tensor_hooks or {}).get(nr)):
            grad = _as_tensor_grad(grads_in[nr])
            res = _checked(hook, hook(grad), grad)
            if res is not None:
                grads_in[nr] = res if create_graph else res._data
        ref = (node._retain or {}).get(nr)
        t = ref() if ref is not None else None
        if t is not None and grads_in[nr] is not None:
            g = _as_tensor_grad(grads_in[nr])
            if t._grad is None:
                t._grad = g if create_graph else g.detach().clone()
            else:
                t._grad = t._grad + g
    for hook in hooks_in(node._pre_hooks):  # torch: hook(grad_outputs) -> new grad_outputs or None
        given = tuple(_maybe_tensor(grads_in.get(i)) for i in range(len(node._out_avals)))
        res = _checked_all(hook, hook(given), given)
        if res is not None:
            grads_in = {i: _unwrap_grad(g, create_graph) for i, g in enumerate(res)}
    return grads_in


def _checked(hook, res, grad):
    """A hook's replacement for `grad` (or None), refused as PyTorch refuses it when it is not a
    tensor or has another size or type."""
    from .._tensor import Tensor
    from .._dtype import type_name
    if res is None or grad is None:
        return res
    name = getattr(hook, "__name__", repr(hook))
    if not isinstance(res, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
    if res.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if res.dtype is not grad.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                           f"{type_name(grad.dtype)} got {type_name(res.dtype)})")
    return res


def _checked_all(hook, res, grads):
    """A node hook's replacement gradients (a sequence like `grads`), checked one by one."""
    if res is None:
        return None
    if not isinstance(res, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(res).__name__}'")
    if len(res) != len(grads):
        name = getattr(hook, "__name__", repr(hook))
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got "
                           f"{len(res)}, but expected {len(grads)})")
    return tuple(_checked(hook, r, g) for r, g in zip(res, grads))


def _maybe_tensor(g):
    return None if g is None else _as_tensor_grad(g)


def _unwrap_grad(g, create_graph):
    return g if g is None or create_graph else g._data


def _run_node_hooks(node, grads, cts, create_graph):
    """torch: hook(grad_inputs, grad_outputs) -> new grad_inputs or None."""
    for hook in hooks_in(node._hooks):
        given = tuple(_maybe_tensor(g) for g in node._public(grads))
        res = _checked_all(hook, hook(given, tuple(_maybe_tensor(c) for c in cts)), given)
        if res is not None:
            grads = node._internal([_unwrap_grad(g, create_graph) for g in res])
    return grads


def _accumulate(node, grad, create_graph, marks=None):
    """PyTorch's AccumulateGrad: its hooks also run for an undefined gradient (None: a custom
    Function's None, a norm of order 0), which leaves `.grad` as it is. `marks`: see
    `grad_conj.mark_grads` (a conj view of PyTorch's is kept as `.grad`, and seen so by the
    hooks)."""
    var = node.variable
    if grad is None and not (var._hooks or node._pre_hooks or var._post_acc_hooks
                             or node._hooks):
        return
    conj = raw = keep = None
    if marks and grad is not None:
        m = grad_conj.grad_mark(grad, marks)
        if m & grad_conj.G_CONJ:
            # PyTorch copies it (the bit resolved) unless it may steal it
            keep = m == grad_conj.G_CONJ and var._grad is None and grad_conj.keeps_conj(var)
            if keep or var._hooks or node._pre_hooks:
                raw, grad = grad, grad_conj.conj_tensor(grad, var.device)
                conj = grad
    grad = _leaf_hooks(var, grad, create_graph)
    for hook in hooks_in(node._pre_hooks):
        given = (_maybe_tensor(grad),)
        res = _checked_all(hook, hook(given), given)
        if res is not None:
            grad = res[0] if res[0] is None or create_graph or res[0].is_sparse else \
                res[0]._data
    if grad is not None:
        if grad is conj:   # (unchanged by the hooks)
            if keep:
                var._grad = conj
            else:
                _store(var, raw, create_graph)
        else:
            _store(var, grad, create_graph)
    for hook in hooks_in(var._post_acc_hooks):
        hook(var)
    for hook in hooks_in(node._hooks):
        hook((_maybe_tensor(grad),), ())


def _store(var, grad, create_graph):
    from .._tensor import Tensor, _wrap
    if getattr(grad, "is_sparse", False) or (var._grad is not None and var._grad.is_sparse):
        _accumulate_sparse(var, grad)
    elif var._grad is None:
        var._grad = _copy_grad(grad) if isinstance(grad, Tensor) else _wrap(grad,
                                                                             device=var.device)
        if var._view is not None:   # as PyTorch, a new .grad is laid out as its dense leaf
            _grad_layout(var, var._grad)
    elif create_graph or isinstance(grad, Tensor):
        var._grad = var._grad + _as_tensor_grad(grad)
    else:
        # PyTorch adds in place into an existing .grad when not building a graph
        var._grad._set_data(var._grad._data + grad)


def _grad_layout(var, grad):
    from .._memory_layout import _non_overlapping_and_dense, lay_out
    size, stride = tuple(var.shape), var.stride()
    if grad._view is None and grad.shape == var.shape and _non_overlapping_and_dense(
            size, stride):
        lay_out(grad, stride)


def _leaf_hooks(var, grad, create_graph):
    """A leaf's gradient through its tensor hooks (`register_hook`)."""
    for hook in hooks_in(var._hooks):
        given = _maybe_tensor(grad)
        res = _checked(hook, hook(given), given)
        if res is not None and res is not grad:   # (its own conj view given back: kept)
            grad = res if create_graph or res.is_sparse else res._data
    return grad


def _accumulate_sparse(var, grad):
    """PyTorch's AccumulateGrad when the new or the held gradient is sparse: sparse into
    sparse adds in place (the same `.grad` object, PyTorch's merge); a dense sum is dense."""
    from .._tensor import _wrap
    old = var._grad
    if not getattr(grad, "is_sparse", False):
        grad = _wrap(grad, device=var.device)
    if old is None:
        var._grad = grad
    elif old.is_sparse and grad.is_sparse:
        old.add_(grad)
    elif old.is_sparse:
        var._grad = grad + old
    else:
        old._set_data((old + grad)._data)


def _copy_grad(grad):
    """What `.grad` holds of a Tensor gradient (create_graph): a copy, as PyTorch's (recorded
    as CopyBackwards), so it never aliases the caller's grad_outputs or another leaf's .grad
    (a pass-through gradient is one Tensor for every input of an add)."""
    from .._ops.registry import call_jax
    from .._tensor import _wrap
    if grad.requires_grad:
        out = call_jax("torch::autograd::CopyBackwards", _identity, [grad],
                       key="CopyBackwards")
        # PyTorch copies into a new tensor: its node's first edge (that tensor) is undefined
        out._grad_fn._shown = (None, 0)
        return out
    return _wrap(grad._data, device=grad.device)


def _identity(x):
    return x


from .graph_hooks import (GradientEdge, _MultiHandle, get_gradient_edge,  # noqa: E402,F401
                          increment_version, register_multi_grad_hook)
from . import grad_conj  # noqa: E402 (registers ConjBackward0's node class)
