"""`torchish.compile`'s compiled call: look up (or trace and compile) a signature, run it.

`_Compiled.__call__` binds the plan (guards, per-call inputs), finds the signature's `_Entry`,
donates what it may and runs the executable; `_build`/`_pure` trace a new signature into one
XLA computation and record how its outputs map back onto the objects (see `_compile.py`).
"""
import functools
import logging
import operator
import sys
import traceback
import weakref

import jax
import jax.numpy as jnp
from jax.extend.core import jaxpr_as_fun

from ._tensor import Tensor, _wrap
from ._storage import held_elsewhere
from . import _random_trace
from .autograd import grad_mode, graph
from .compiler import STANCE as _STANCE, _IN_BROKEN
from ._compile_capture import CompileError, _GuardOnData, _SilentBreak, call_user, \
    symbolic_numbers, LAST_BACKWARD
from ._compile_plan import _Plan, _MISSING, _LEAF, _VIEW
from ._compile_writeback import write_back, replayable

_GET_LR = operator.itemgetter("lr")


def _getter(slots):
    """seq -> tuple of seq[i] for i in slots (itemgetter returns a bare item for one)."""
    if len(slots) == 1:
        return lambda seq, _i=slots[0]: (seq[_i],)
    return operator.itemgetter(*slots) if slots else None


def _donated_refs():
    """What `max(map(sys.getrefcount, entry.donated(arrays)))` in `_Compiled.__call__` counts
    for an array that only its Storage and the `arrays` list hold."""
    from ._storage import Storage
    storages = [Storage(object(), None), Storage(object(), None)]
    arrays = [st.data for st in storages]
    return max(map(sys.getrefcount, _getter((0, 1))(arrays)))


_DONATED_REFS = _donated_refs()


def _aval_key(a):
    if isinstance(a, Tensor):
        a = a._data
    if isinstance(a, jax.Array):
        return (a.shape, a.dtype, a.weak_type, a.sharding)
    return type(a)


_LOG = logging.getLogger("torchish._dynamo")


def _describe(fn):
    """A compiled function as PyTorch's recompile message names it."""
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__name__", type(fn).__name__)
    return f"'{name}' ({code.co_filename}:{code.co_firstlineno})" if code else f"'{name}'"


def _log_item_break(user_stack):
    """PyTorch's log record (once per process) at a graph break on `Tensor.item()`."""
    if _ITEM_LOGGED:
        return
    _ITEM_LOGGED.append(True)
    _LOG.warning("Graph break from `Tensor.item()`, consider setting:\n"
                 "    torch._dynamo.config.capture_scalar_outputs = True\nor:\n"
                 "    env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1\n"
                 "to include these operations in the captured graph.\n\n"
                 "Graph break: from user code at:\n" + "".join(
                     traceback.format_list(list(user_stack))))


_ITEM_LOGGED = []


class _HookedGraph(_SilentBreak):
    """The traced results' graph has a tensor hook (or `retain_grad()`, or a custom Function)
    on a tensor made inside the step: the compiled backward (one `jax.vjp`, see `_compile_writeback._attach_grad`)
    would skip it, so the signature runs eagerly."""


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


# ---- one compiled signature ----------------------------------------------------------------

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


_EAGER = object()   # the cache entry of a signature run eagerly (past the recompile limit)
# ... and of one whose trace hit a graph break (or a number PyTorch traces symbolically): it
# runs eagerly, with `is_compiling()` True as in PyTorch's graphs around the break
_BROKEN = object()
_ALL_COMPILED = weakref.WeakSet()   # for `torch.compiler.reset()`
_TRACING = [0]   # how many compiled functions are being traced (a nested one is inlined)


class _Entry:
    """A compiled signature: the executable and how its outputs map back onto the objects."""
    _compile_bookkeeping = True

    def __init__(self):
        self.executable = None   # the AOT-compiled XLA computation (with donation)
        self.fun = None          # the same computation as a JAX function (for backward)
        self.uses_rng = None
        self.vjp = {}
        self.live = {}           # picked outputs -> which inputs they differentiably reach
        self.prints = []         # print() calls of the traced Python, replayed on every call
        self.gm = None           # the GraphModule a custom backend got (runs its callable)
        self.jaxpr = None        # the traced computation (explain, GraphModule)
        self.scalars = []        # `.item()` results made while tracing (see `_captured_item`)
        self.pending = None      # those of them to fill in after the first run
        # results that still had a graph when a step that ran backward returned them (a loss)
        self.spent_results = ()
        self.attr_outs = ()      # (module, attribute, output, device) of tensors it binds


class _Compiled:
    """One compiled function: its plan (guards), its signatures' entries, and the call."""
    _compile_bookkeeping = True

    def __init__(self, fn, roots_fn, forward_only=False, fullgraph=False, backend=None,
                 dynamic=None, recompile_limit=None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.backend = backend    # a custom backend: (callable, its keyword arguments)
        self.dynamic = dynamic
        self.recompile_limit = recompile_limit
        self.settings = dict(fullgraph=fullgraph, backend=backend, dynamic=dynamic,
                             recompile_limit=recompile_limit)
        self.roots_fn = roots_fn
        self.forward_only = forward_only
        self.cache = {}
        self.plan = None
        self._retrying = False
        self.view_slots = True   # view arguments read per call (see `_Plan._unshare_views`)
        self.init_state = True   # optimizer state not there yet is created before tracing
        self.grads = not forward_only   # `.grad`s carried in and out (see `_GradsWritten`)
        self.breaks = None   # an explain trace's `_Breaks` (see `_dynamo.backends.explain`)
        _ALL_COMPILED.add(self)

    def reset(self):
        self.cache.clear()
        self.plan = None

    def __call__(self, *args, **kwargs):
        if _TRACING[0] or any(isinstance(a, Tensor) and isinstance(a._storage.data, jax.core.Tracer)
                              for a in args) or _STANCE[0] == "force_eager":
            # called inside a compiled step or a torch.func transform: part of that trace
            # (or `set_stance("force_eager")`: plain Python)
            return self.fn(*args, **kwargs)
        values = args + tuple(kwargs.values()) if kwargs else args
        plan = self.plan
        bound = None
        if plan is not None and plan.kwnames == tuple(kwargs) and len(plan.kinds) == len(values):
            bound = plan.bind(values)
        if bound is None:
            plan = self.plan = _Plan(self.roots_fn(), values, tuple(kwargs),
                                     view_slots=self.view_slots, grads=self.grads)
            bound = plan.bind(values)
            if bound is None:   # (view arguments sharing storage only as bound: see `bind`)
                plan = self.plan = _Plan(self.roots_fn(), values, tuple(kwargs),
                                         view_slots=False, grads=self.grads)
                bound = plan.bind(values)
        storages, owners, holders, dyn, sole = bound
        arrays = [st.data for st in storages]
        lrs = [lr._data if isinstance(lr, Tensor) else lr for lr in map(_GET_LR, plan.groups)]
        entry = plan.fast.get(dyn)
        if entry is None:
            key = (plan.key, dyn, tuple(map(_aval_key, arrays)), tuple(map(_aval_key, lrs)))
            entry = self.cache.get(key)
            if entry is None:
                if _STANCE[0] != "default" and self._stance_refuses():
                    return self.fn(*args, **kwargs)
                try:
                    entry = self.cache[key] = self._new_entry(
                        plan, storages, owners, holders, arrays, lrs, args, kwargs)
                except _StateCreated as exc:
                    # PyTorch creates an optimizer's state before tracing its step, so the
                    # step compiles once: create it eagerly, as the step would, and trace
                    # again
                    self.init_state = False
                    with grad_mode.no_grad():
                        for o, group, p in exc.args[0]:
                            o._prepare(group, p)
                    self.plan = None
                    return self(*args, **kwargs)
                except (_ViewWritten, _GradsWritten) as exc:
                    # the step writes into a view argument: read its storage instead, so
                    # the write reaches the base (the view's identity guarded again); or a
                    # forward sets `.grad`s: carry them
                    if isinstance(exc, _ViewWritten):
                        self.view_slots = False
                    else:
                        self.grads = True
                    self.plan = None
                    return self(*args, **kwargs)
            plan.fast[dyn] = entry
        if entry is _EAGER:
            return self.fn(*args, **kwargs)
        if entry is _BROKEN:
            _IN_BROKEN[0] += 1
            try:
                return self.fn(*args, **kwargs)
            finally:
                _IN_BROKEN[0] -= 1
        for a, kw in entry.prints:
            print(*a, **kw)
        rng_key = _random_trace.next_key(entry.uses_rng)
        if entry.donate and (max(map(sys.getrefcount, entry.donated(arrays))) > _DONATED_REFS
                             or not entry.dropped_grads <= sole):
            for i in entry.donate:   # someone else holds some: copy those
                if held_elsewhere(storages[i], known=1) or (   # (`arrays` is known)
                        i in entry.dropped_grads and i not in sole):
                    arrays[i] = jnp.copy(arrays[i])
        try:
            if entry.gm is None:
                outs = entry.unpermute(entry.executable(*arrays, *lrs, rng_key))
            else:
                outs = entry.gm.run_backend(arrays, lrs, rng_key)
        except TypeError:
            # An array changed shape, dtype or device under an unchanged object (checked by
            # the executable before anything runs): rediscover and retrace.
            if self._retrying:
                raise
            self.plan = None
            self._retrying = True
            try:
                return self(*args, **kwargs)
            finally:
                self._retrying = False
        return write_back(entry, plan, storages, holders, owners, arrays, lrs, rng_key, outs,
                          values)

    # ---- tracing a new signature ---------------------------------------------------------
    def _stance_refuses(self):
        """Whether `torch.compiler.set_stance` says not to compile a new signature now (run
        it eagerly), or raises."""
        if _STANCE[0] == "fail_on_recompile":
            code = getattr(self.fn, "__code__", None) or getattr(
                getattr(self.fn, "forward", None), "__code__", None)
            where = (f"filename: '{code.co_filename}', function name: '{code.co_name}', "
                     f"line number: {code.co_firstlineno}") if code else repr(self.fn)
            raise RuntimeError("Detected recompile when torch.compile stance is "
                               f"'fail_on_recompile'. {where}")
        return _STANCE[0] == "eager_on_recompile" and bool(self.cache)

    def _new_entry(self, plan, storages, owners, holders, arrays, lrs, args, kwargs):
        """The cache entry of a new signature: compiled, or `_BROKEN` where PyTorch would break
        the graph (or give up compiling)."""
        from ._dynamo import config
        from ._dynamo.exc import Unsupported
        limit = self.recompile_limit
        limit = config.recompile_limit if limit is None else limit
        if self.dynamic is False and len(self.cache) >= limit:
            if self.fullgraph:
                from ._dynamo.exc import FailOnRecompileLimitHit
                raise FailOnRecompileLimitHit("Hard failure due to fullgraph=True")
            if _EAGER not in self.cache.values():   # (PyTorch logs it once)
                _LOG.warning(f"torch._dynamo hit config.recompile_limit ({limit})\n"
                             f"   function: {_describe(self.fn)}\n"
                             "   last reason: a new signature (argument shapes or dtypes, "
                             "or a value the trace bakes in)\n"
                             'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
                             "To diagnose recompilation issues, see https://docs.pytorch.org/"
                             "docs/main/user_guide/torch_compiler/compile/programming_model."
                             "recompilation.html")
            return _EAGER
        from ._dynamo.utils import counters
        try:
            entry = self._build(plan, storages, owners, holders, arrays, lrs, args, kwargs)
            counters["stats"]["unique_graphs"] += 1
            # (PyTorch counts its graph's calls; here each op traced is one call, and a
            # step's backward and optimizer update are in the same graph)
            counters["stats"]["calls_captured"] += len(entry.jaxpr.jaxpr.eqns)
            return entry
        except (_ViewWritten, _GradsWritten, _StateCreated):
            raise
        except _HookedGraph:
            return _BROKEN   # (as PyTorch's results, with fullgraph=True as well)
        except CompileError as exc:
            if self.fullgraph:
                # PyTorch compiles `float(t)`/`int(t)` then (a symbolic number); torchish
                # cannot trace them: eager, unless Python branches on that number
                if exc.of_item and self.breaks is None:
                    guard = self._guard_on_number(exc, plan, storages, holders, arrays, lrs,
                                                  args, kwargs)
                    if guard is None:
                        return _BROKEN
                    exc = guard
                if isinstance(exc, Unsupported):
                    raise
                from ._dynamo.exc import UserError
                err = (UserError if isinstance(exc, _GuardOnData) else Unsupported)(str(exc))
                err.user_stack = exc.user_stack
                raise err from None
            # PyTorch breaks the graph there, silently but for a log record the first time
            # at a `.item()`; torchish runs this signature eagerly (the failed trace left
            # every object as it was)
            counters["graph_break"][str(exc)] += 1
            if exc.of_item:
                _log_item_break(exc.user_stack)
            _LOG.debug(f"graph break: {exc}; running {_describe(self.fn)} eagerly")
            return _BROKEN
        except Exception as exc:
            # a custom backend's failure (or ours): `suppress_errors` runs it eagerly
            if not config.suppress_errors or isinstance(exc, Unsupported):
                raise
            _LOG.warning(f"torchish.compile: compiling {_describe(self.fn)} failed "
                         f"({type(exc).__name__}: {exc}); running it eagerly instead.")
            return _EAGER

    def _guard_on_number(self, exc, plan, storages, holders, arrays, lrs, args, kwargs):
        """Trace again with `float(t)`/`int(t)` giving symbolic stand-ins in the compiled
        function's module and the one of the line that failed: the `_GuardOnData` where
        Python compares one or takes its truth value (PyTorch's `UserError` with
        `fullgraph=True`), else None. The trace is thrown away."""
        spaces = {}
        fn = getattr(self.fn, "forward", self.fn)
        for g in (getattr(fn, "__globals__", None),
                  *(vars(m) for m in list(sys.modules.values())
                    if exc.user_stack and getattr(m, "__file__", None)
                    == exc.user_stack[-1].filename)):
            if isinstance(g, dict):
                spaces[id(g)] = g
        pure = functools.partial(self._pure, _Entry(), plan, storages, holders, args, kwargs)
        try:
            with symbolic_numbers(spaces.values()):
                jax.make_jaxpr(pure)(*arrays, *lrs, _random_trace.next_key(False))
        except _GuardOnData as guard:
            return guard
        except Exception:
            return None
        return None

    def _build(self, plan, storages, owners, holders, arrays, lrs, args, kwargs):
        entry = _Entry()
        trace_key = _random_trace.next_key(False)   # only its shape and dtype matter here
        flat = arrays + lrs + [trace_key]
        pure = functools.partial(self._pure, entry, plan, storages, holders, args, kwargs)
        closed = entry.jaxpr = jax.make_jaxpr(pure)(*flat)
        entry.fun = jaxpr_as_fun(closed)
        entry.attach = (grad_mode.is_grad_enabled() and not entry.ran_backward
                        and any(t.requires_grad for t in owners))
        n_out = entry.n_out_res
        outs = closed.out_avals[n_out:n_out + len(entry.written)]
        ins = closed.in_avals
        # (a custom backend's callable may keep the tensors it is given: nothing is donated)
        keep = entry.attach or self.backend is not None
        entry.donate = () if keep else tuple(
            i for i, a in zip(entry.written, outs)
            if (a.shape, a.dtype) == (ins[i].shape, ins[i].dtype))
        entry.dropped_grads = () if keep else self._donatable_grads(
            entry, ins, closed.out_avals)
        entry.donate += entry.dropped_grads
        entry.donated = _getter(entry.donate)
        entry.dropped_grads = frozenset(entry.dropped_grads)
        # keep_unused: a dropped `.grad` is an input the step never reads, yet its donated
        # buffer is where the new gradient goes
        # JAX pairs each output with the first unpaired donated input of its shape and dtype,
        # in output order: the results (a loss) first would take an optimizer step counter's
        # buffer and shift every later pair by one, which XLA mends with copies. So the
        # executable returns the written state first, in input order, and the results last.
        n_res, n_all = entry.n_out_res, len(closed.out_avals)
        order = list(range(n_res, n_all)) + list(range(n_res))
        entry.unpermute = _getter(sorted(range(n_all), key=order.__getitem__)) if n_all \
            else (lambda outs: ())   # a step that returns and writes no tensor
        fun = entry.fun

        def reordered(*a):
            outs = fun(*a)    # once: a call per output would trace the whole step n times
            return [outs[i] for i in order]

        entry.executable = jax.jit(reordered, donate_argnums=entry.donate,
                                   keep_unused=True).lower(*flat).compile()
        if self.backend is not None and closed.jaxpr.eqns:   # (no ops: no graph to give)
            self._call_backend(entry, arrays, lrs, trace_key)
        return entry

    def _call_backend(self, entry, arrays, lrs, key):
        """Give the custom backend the traced step; what it returns runs every call."""
        from ._dynamo.exc import BackendCompilerFailed
        backend, kwargs = self.backend
        from ._dynamo.backends import GraphModule
        gm = GraphModule(entry)
        gm._call_args = (lrs, key)
        example_inputs = [_wrap(a) for a in arrays]
        try:
            compiled = backend(gm, example_inputs, **kwargs)
            if not callable(compiled):
                raise AssertionError("compiler_fn did not return callable")
        except Exception as exc:
            raise BackendCompilerFailed(backend, exc) from exc
        gm.compiled = compiled
        entry.gm = gm

    @staticmethod
    def _donatable_grads(entry, ins, out_avals):
        """Slots of dropped `.grad`s whose buffer a new output of their shape can take (one
        donated buffer per such output: XLA warns about donations it cannot use)."""
        free = {}
        for a in out_avals[entry.n_out_res + len(entry.written):]:
            free[(a.shape, a.dtype)] = free.get((a.shape, a.dtype), 0) + 1
        slots = []
        for i in entry.dropped:
            key = (ins[i].shape, ins[i].dtype)
            if free.get(key):
                free[key] -= 1
                slots.append(i)
        return tuple(slots)

    def _pure(self, entry, plan, storages, holders, args, kwargs, *flat):
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
            untaped = self.forward_only and not (grad_mode.is_grad_enabled() and any(
                t.requires_grad for t in holders))
            _TRACING[0] += 1
            try:
                with _random_trace.traced_key(key, record=lambda used: setattr(
                        entry, "uses_rng", used)):
                    call = (entry, self.fn, self.fullgraph, args, kwargs, self.breaks)
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
            if self.init_state and self.breaks is None and not entry.grad_actions:
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
