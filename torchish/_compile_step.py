"""`torchish.compile`'s compiled call: look up (or trace and compile) a signature, run it.

`_Compiled.__call__` binds the plan (guards, per-call inputs), finds the signature's `_Entry`,
donates what it may and runs the executable; `_build` traces a new signature (with
`_compile_trace.trace_step`) into one XLA computation, compiles it and records how its outputs
map back onto the objects (see `_compile.py`).
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
from .autograd import grad_mode
from .compiler import STANCE as _STANCE, _IN_BROKEN
from ._compile_capture import CompileError, _GuardOnData, symbolic_numbers
from ._compile_plan import _Plan
from ._compile_writeback import write_back
from ._compile_trace import (_TRACING, _GradsWritten, _HookedGraph, _StateCreated, _ViewWritten,
                             trace_step)

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


# ---- one compiled signature ----------------------------------------------------------------

_EAGER = object()   # the cache entry of a signature run eagerly (past the recompile limit)
# ... and of one whose trace hit a graph break (or a number PyTorch traces symbolically): it
# runs eagerly, with `is_compiling()` True as in PyTorch's graphs around the break
_BROKEN = object()
_ALL_COMPILED = weakref.WeakSet()   # for `torch.compiler.reset()`


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
        pure = functools.partial(trace_step, self, _Entry(), plan, storages, holders, args, kwargs)
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
        pure = functools.partial(trace_step, self, entry, plan, storages, holders, args, kwargs)
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
