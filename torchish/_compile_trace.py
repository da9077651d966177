"""`torchish.compile`'s trace of a new signature: `trace_step` runs the user's function once on
tracers with every object's state swapped for the traced arrays, records how its results,
written storages, `.grad`s, optimizer state and module attributes map back onto the objects
(`_ResultContext`), and restores them all; the checks that make a signature run eagerly or
trace again (`_HookedGraph`, `_ViewWritten`, `_GradsWritten`, `_StateCreated`) live here too.
`_compile_step` compiles and runs what it traces.
"""
import jax

from ._tensor import Tensor
from . import _random_trace
from .autograd import grad_mode, graph
from ._compile_capture import CompileError, _SilentBreak, call_user, LAST_BACKWARD
from ._compile_plan import _MISSING, _LEAF, _VIEW
from ._compile_writeback import replayable

_TRACING = [0]   # how many compiled functions are being traced (a nested one is inlined)


class _HookedGraph(_SilentBreak):
    """The traced results' graph has a tensor hook (or `retain_grad()`, or a custom Function)
    on a tensor made inside the step: the compiled backward (one `jax.vjp`, see
    `_compile_writeback._attach_grad`) would skip it, so the signature runs eagerly."""


# custom Functions whose backward is the derivative of their forward (JAX's is as good)
_TRACED_FUNCTIONS = frozenset({"CheckpointFunctionBackward"})


def _check_no_hooks(result):
    """Raise `_HookedGraph` if a node of the graph behind `result`'s tensors holds a hook, or
    is a custom Function's (its own backward, which the step's `jax.vjp` would not run)."""
    from .autograd.function import _FunctionNode
    todo = [t._grad_fn for t in jax.tree_util.tree_leaves(
        result, is_leaf=lambda x: isinstance(x, Tensor))
        if isinstance(t, Tensor) and t._grad_fn is not None]
    seen = set()
    while todo:
        node = todo.pop()
        if id(node) in seen or not isinstance(node, graph.Node):
            continue   # (an AccumulateGrad's hooks belong to a leaf the backward reaches)
        seen.add(id(node))
        if node._tensor_hooks or node._retain or node._pre_hooks or node._hooks or (
                isinstance(node, _FunctionNode) and node._name not in _TRACED_FUNCTIONS):
            raise _HookedGraph("torchish.compile: a hook or custom autograd.Function "
                               "backward inside the compiled graph")
        todo += [e[0] for e in node._edges or () if e is not None]


class _ViewWritten(CompileError):
    """The traced step wrote into a view argument's own slot (see `_Plan.bind`)."""


class _GradsWritten(CompileError):
    """A compiled Module's forward, which carries no `.grad`s, set one (a backward inside)."""


class _StateCreated(Exception):
    """The traced step created optimizer state: args[0] lists (optimizer, group, param)."""


def _state_created(plan, saved_opt):
    """Raise `_StateCreated` if the traced step created the state of parameters that had
    none, and their optimizer's own step creates it with `_prepare` (not a user's step)."""
    from .optim.optimizer import Optimizer
    made = []
    for o, (state, before) in zip(plan.optimizers, saved_opt):
        kind = type(o)
        if kind._prepare is Optimizer._prepare or not getattr(
                kind.step, "__module__", "").startswith("torchish.optim"):
            continue
        for group in o.param_groups:   # (`_prepare` makes the whole state where it makes
            # a `step` counter; SGD's momentum buffer is the step's own copy of the gradient)
            made += [(o, group, p) for p in group["params"]
                     if "step" in state.get(p, ()) and p not in before]
    if made:
        raise _StateCreated(made)


def trace_step(compiled, entry, plan, storages, holders, args, kwargs, *flat):
    """The traced step: (storage arrays, lrs, key) -> (results, written arrays, new
    grads, new optimizer state). It runs only while tracing; cache hits never get here."""
    n, m = len(storages), len(plan.groups)
    ins, lr_in, key = flat[:n], flat[n:n + m], flat[n + m]
    # (read and restored at compile time: a NumPy-shared storage's read is a device_put,
    # which inside the trace would make a tracer that the restore leaves behind)
    with jax.ensure_compile_time_eval():
        saved = [st.data for st in storages]
    saved_grads = [p._grad for p in plan.params]
    uncarried = [] if plan.carries_grads else [(t, t._grad) for t in plan.tensors]
    saved_lrs = [g["lr"] for g in plan.groups]
    saved_attrs = [dict(m.__dict__) for m in plan.modules]
    saved_opt = [(o.state, {p: (s, dict(s)) for p, s in o.state.items()})
                 for o in plan.optimizers]
    vcs, seen_vc = [], set()
    for j, t in enumerate(holders):
        if id(t._vc) not in seen_vc:
            seen_vc.add(id(t._vc))
            vcs.append((j, t._vc, t._vc[0]))
    values = args + tuple(kwargs.values()) if kwargs else args
    # tensors read through a slot of their own holding their values (the last slots)
    views = [values[j] for j, k in enumerate(plan.kinds) if k is _VIEW]
    spread = [(t, t._storage, t._view) for t in views + plan.spread]
    n_views = len(views)
    leaf_args = [j for j, k in enumerate(plan.kinds)   # (not state: `plan.params` has those)
                 if (k is _LEAF or k is _VIEW and values[j]._requires_grad
                     and values[j]._grad_fn is None) and id(values[j]) not in plan.tindex]
    fenced = []
    try:
        for st, a in zip(storages, ins):
            st.data = a
        for (t, _, _), st in zip(spread, storages[n - len(spread):]):
            t._storage, t._view = st, None   # (see `_Plan.spread`, `_Plan.bind`)
        for g, lr in zip(plan.groups, lr_in):
            g["lr"] = lr
        fenced[:] = _fence_outer_graphs(values, plan.tensors)
        fences = {id(t): t._grad_fn for t, _ in fenced}
        runs_before = graph.BACKWARD_RUNS[0]
        # a compiled Module's forward records no tape where nothing needs its graph;
        # else it is traced as a step is (what no_grad makes in it stays constant)
        untaped = compiled.forward_only and not (grad_mode.is_grad_enabled() and any(
            t.requires_grad for t in holders))
        _TRACING[0] += 1
        try:
            with _random_trace.traced_key(key, record=lambda used: setattr(
                    entry, "uses_rng", used)):
                call = (entry, compiled.fn, compiled.fullgraph, args, kwargs, compiled.breaks)
                if untaped:
                    with grad_mode.no_grad():
                        result = call_user(*call)
                else:
                    result = call_user(*call, constants=True)
        finally:
            _TRACING[0] -= 1
        entry.ran_backward = graph.BACKWARD_RUNS[0] != runs_before
        if not (entry.ran_backward or untaped) and grad_mode.is_grad_enabled():
            _check_no_hooks(result)
        if any(t._grad is not g for t, g in uncarried):
            raise _GradsWritten("torchish.compile: a forward that sets `.grad`")
        tail = n - len(spread)
        if any(st.data is not a for st, a in zip(storages[tail:tail + n_views],
                                                 ins[tail:tail + n_views])):
            raise _ViewWritten("torchish.compile: an in-place write to a view argument")
        if any(st.data is not a for st, a in zip(storages[tail + n_views:],
                                                 ins[tail + n_views:])):
            raise CompileError("torchish.compile: an in-place write to an expanded tensor")
        leaves, entry.treedef = jax.tree_util.tree_flatten(
            result, is_leaf=lambda x: isinstance(x, Tensor))
        tensors = [x for x in leaves if isinstance(x, Tensor)]
        raw = [x for x in leaves if not isinstance(x, Tensor)
               and isinstance(x, (jax.Array, jax.core.Tracer))]
        out = [t._data for t in tensors] + raw
        if entry.ran_backward:
            if any(getattr(t._grad_fn, "_seq", -1) > LAST_BACKWARD[0] for t in tensors):
                # a result with a graph made after the step's backward: PyTorch runs
                # that part eagerly (it breaks the graph at `backward()`), so it keeps
                # a live graph; the step's results carry only spent ones
                raise _SilentBreak(_BACKWARD_BREAK)
            entry.spent_results = tuple(j for j, t in enumerate(tensors)
                                        if t._grad_fn is not None)
        kinds, it_t, it_a = [], iter(range(len(tensors))), iter(range(len(tensors), len(out)))
        scalar_ids = set(map(id, entry.scalars))
        ctx = _ResultContext(entry, plan, values, storages, ins, holders, fenced, fences,
                             n - len(spread), n_views, not untaped)
        for x in leaves:
            if isinstance(x, Tensor):
                i = next(it_t)
                kinds.append(("S", i, x.device) if id(x) in scalar_ids
                             else ctx.kind(x, i))
            elif isinstance(x, (jax.Array, jax.core.Tracer)):
                kinds.append(("A", next(it_a)))
            else:
                kinds.append(("C", x))
        entry.res_kinds = kinds
        entry.single = (len(kinds) == 1 and kinds[0][0] == "T"
                        and entry.treedef == jax.tree_util.tree_structure(0))
        entry.n_out_res = len(out)
        entry.written = [i for i, (st, a) in enumerate(zip(storages, ins))
                         if st.data is not a]
        out += [storages[i].data for i in entry.written]
        entry.grad_actions = []
        entry.dropped = []   # input slots of the `.grad`s the step replaced or cleared
        slot_of = {id(st): i for i, st in enumerate(storages)}
        written = set(entry.written)
        for k, (p, g0) in enumerate(zip(plan.params, saved_grads)):
            g = p._grad
            if g is g0:
                continue   # same object (or still None): its storage is handled above
            i = None if g0 is None else slot_of.get(id(g0._storage))
            if (i is not None and i >= len(plan.storages) and i not in written
                    and i not in entry.dropped):
                entry.dropped.append(i)   # a per-call slot: no state tensor shares it
            if g is None:
                entry.grad_actions.append((k, "none", None))
            elif id(g) in plan.tindex:
                entry.grad_actions.append((k, "obj", plan.tindex[id(g)]))
            else:
                entry.grad_actions.append((k, "new", (len(out), g._vc[0])))
                out.append(g._data)
        entry.opt_actions = []
        if compiled.init_state and compiled.breaks is None and not entry.grad_actions:
            # (a step that makes `.grad`s traces again on its next call anyway)
            _state_created(plan, saved_opt)
        for oi, (o, (_, before_all)) in enumerate(zip(plan.optimizers, saved_opt)):
            pos = {id(p): i for i, p in enumerate(plan.orders[oi])}
            for p, st in o.state.items():
                if id(p) not in pos:
                    continue
                before = before_all[p][1] if p in before_all else {}
                for k, v in st.items():
                    if before.get(k, _MISSING) is v:
                        continue
                    where = (oi, pos[id(p)], k)
                    if isinstance(v, Tensor):
                        if id(v) in plan.tindex:
                            entry.opt_actions.append(where + ("obj", plan.tindex[id(v)]))
                        else:
                            entry.opt_actions.append(where + ("new", (len(out), v._vc[0])))
                            out.append(v._data)
                    elif isinstance(v, (jax.Array, jax.core.Tracer)):
                        entry.opt_actions.append(where + ("arr", len(out)))
                        out.append(v)
                    else:
                        entry.opt_actions.append(where + ("val", v))
        entry.vc = [(j, vc[0] - v0) for j, vc, v0 in vcs if vc[0] != v0]
        entry.leaf_grads = []   # the `.grad`s of `_LEAF` arguments (read per call)
        for j in leaf_args:
            g = values[j]._grad
            if g is not None:
                entry.leaf_grads.append((j, len(out), g._vc[0]))
                out.append(g._data)
        # tensors the step bound to module attributes (a pruned `weight` its forward
        # pre-hook makes): set after each call, as PyTorch replays such side effects
        entry.attr_outs = []
        for mi, (m, before) in enumerate(zip(plan.modules, saved_attrs)):
            for k, v in m.__dict__.items():
                if isinstance(v, Tensor) and before.get(k, _MISSING) is not v:
                    entry.attr_outs.append((mi, k, len(out), v.device))
                    out.append(v._data)
        # captured scalars the Python code kept (a list it appends to): the first run
        # fills them in (later runs do not repeat Python side effects)
        entry.scalar_base = len(out)
        out += [t._data for t in entry.scalars]
        entry.pending, entry.scalars = entry.scalars, None
        return out
    finally:
        with jax.ensure_compile_time_eval():
            for st, a in zip(storages, saved):
                st.data = a
        for p, g in zip(plan.params, saved_grads):
            p._grad = g
        for t, g in uncarried:
            t._grad = g
        for j in leaf_args:
            values[j]._grad = None
        for m, before in zip(plan.modules, saved_attrs):
            md = m.__dict__
            for k in [k for k, v in md.items()
                      if isinstance(v, Tensor) and before.get(k, _MISSING) is not v]:
                if k in before:
                    md[k] = before[k]
                else:
                    del md[k]
        for g, lr in zip(plan.groups, saved_lrs):
            g["lr"] = lr
        for state, before in saved_opt:
            for p in [p for p in state if p not in before]:
                del state[p]
            for p, (s, contents) in before.items():
                s.clear()
                s.update(contents)
                if state.get(p) is not s:
                    state[p] = s
        for _, vc, v0 in vcs:
            vc[0] = v0
        for t, st, v in spread:
            t._storage, t._view = st, v
        for t, node in fenced:
            t._grad_fn = node


class _ResultContext:
    """How each tensor a traced step returns comes back (see `write_back`): a new tensor
    ("T"), or what PyTorch's compiled graphs give back for it: an argument or state tensor
    returned is that object ("I", "P"), a view of an input shares its storage ("V", "W") or,
    where that input needs grad, is the view op again on it ("R"); a new tensor the function
    made without a graph (under no_grad, or detached) has none ("N")."""

    def __init__(self, entry, plan, values, storages, ins, holders, fenced, fences, n_slots,
                 n_views, recorded):
        self.plan, self.fences = plan, fences
        self.recorded = recorded   # the trace recorded a graph (a module's forward does not)
        self.arg_pos = {id(v): j for j, v in enumerate(values) if isinstance(v, Tensor)}
        self.slot_of = slot_of = {id(st): i for i, st in enumerate(storages[:n_slots])}
        self.spread_of = {id(st): k for k, st in enumerate(storages[n_slots:])}
        self.n_views = n_views
        self.view_args = [j for j, k in enumerate(plan.kinds) if k is _VIEW]
        # gradients flow to the results (the step ran no backward, grad mode is on)
        self.graphs = not entry.ran_backward and grad_mode.is_grad_enabled()
        self.needs_grad = {id(t._storage) for t in holders if t.requires_grad}
        # arguments with a history the step writes in place: `write_back` copies their new
        # value in
        self.rebased = {id(t) for t, _ in fenced if t._view is None and id(t) in self.arg_pos
                        and id(t._storage) in slot_of
                        and t._storage.data is not ins[slot_of[id(t._storage)]]}

    def kind(self, x, i):
        unchanged = x._grad_fn is self.fences.get(id(x))   # (no new history)
        if id(x) in self.arg_pos and (not x.requires_grad or unchanged
                                      or self.graphs and id(x) in self.rebased):
            return ("I", self.arg_pos[id(x)])
        if id(x) in self.plan.tindex and unchanged:
            return ("P", self.plan.tindex[id(x)])
        st = id(x._storage)
        if x._grad_fn is not None:
            if (self.graphs and x._view is not None and st in self.slot_of
                    and replayable(x._view.steps)):
                return ("R", i, x.device, self.slot_of[st], x._view.steps,
                        _view_node_names(x, len(x._view.steps)))
            return ("T", i, x.device)
        if self.graphs and st in self.needs_grad:
            if not self.recorded:   # (a forward traced under no_grad: gets a graph)
                return ("T", i, x.device)
            # PyTorch regenerates a view of an input needing grad made under no_grad by the
            # view ops, with grad (a detached one stays without)
            if (x._view is not None and st in self.slot_of and replayable(x._view.steps)
                    and x._base is not None and x._base.requires_grad):
                return ("R", i, x.device, self.slot_of[st], x._view.steps, None)
        if st in self.slot_of:
            # (made from a detached alias: PyTorch's `_base` is that alias, not the input)
            return ("V", self.slot_of[st], x._view, x._base is not None and not (
                id(x._base) in self.arg_pos or id(x._base) in self.plan.tindex))
        steps = _relative(x._view)
        if st in self.spread_of and steps:
            k = self.spread_of[st]
            return ("W", k < self.n_views,
                    self.view_args[k] if k < self.n_views else k - self.n_views, steps)
        if self.graphs and self.recorded and not x.requires_grad:
            return ("N", i, x.device)   # (made without a graph: no node, as PyTorch's)
        return ("T", i, x.device)


def _view_node_names(x, n):
    """The names of the `n` view nodes that made `x` (one per view step), oldest first, or
    None where its history is not that: the replay of those steps uses the same ops
    (`x.t()` and `x.transpose(0, 1)` are both a permute step)."""
    names, node = [], x._grad_fn
    while getattr(node, "_is_view", False) and len(names) <= n:
        names.append(node._name)
        node = node.next_functions[0][0] if node.next_functions else None
    return tuple(reversed(names)) if len(names) == n else None


def _relative(view):
    """The steps of a view of a slot holding a tensor's values, where they apply to that
    tensor as well (not an `as_strided`, whose offsets are the slot's), else None."""
    if view is None or any(step[0] in ("as_strided", "dtype") for step in view.steps):
        return None
    return view.steps


_BACKWARD_BREAK = ("Unsupported Tensor.backward() call\n  Explanation: Dynamo currently does not "
                   "support tracing `Tensor.backward()` when trace_autograd_ops is off.\n  "
                   "Hint: Set torch._dynamo.trace_autograd_ops=True\n")


def _fence_outer_graphs(values, tensors):
    """While tracing, the eager graph an argument (or a tensor the function reaches) was made
    by ends in a node whose backward breaks the graph: a backward inside the step that
    reaches it runs the step eagerly (PyTorch breaks its graph at every `backward()`), so its
    gradients flow on into that eager graph. Returns (tensor, its node) to restore."""
    fenced, seen = [], set()
    for t in list(values) + list(tensors):
        node = getattr(t, "_grad_fn", None) if isinstance(t, Tensor) else None
        if node is None or id(t) in seen:
            continue
        seen.add(id(t))
        fence = graph.Node("OuterGraph", [], [], None, _break_at_backward, node._out_avals)
        fenced.append((t, node))
        t._grad_fn = fence
    return fenced


def _break_at_backward(leaves, cts):
    raise _SilentBreak(_BACKWARD_BREAK)
