"""`torchish.compile`: run a PyTorch-style function or Module as one compiled XLA computation.

The function runs once per *signature* (argument shapes/dtypes, the structure of the state it
touches) with every tensor's storage holding a JAX tracer, so the forward, `loss.backward()`
and `optimizer.step()` all become one XLA computation. The state a step reads and writes is
found by walking what the function can reach (its arguments, bound `self`, closure cells and
the globals it names): Modules (parameters, buffers, `.grad`), Optimizers (their state and
each group's `lr`), and tensors. Before a call their current values go in as inputs; after it,
the outputs are written back so the Python objects hold exactly what eager execution would.

Per-call cost. The walk runs once per call site and leaves a `_Plan`: the tensors it found and
guards, i.e. the identity of every object the walk read (each Module's attribute, parameter,
buffer and child dicts, each optimizer's groups and state dicts, closure cells and globals) and
of each tensor's storage/view. The plan holds those objects, so an unchanged identity means an
unchanged object. While the guards hold, a call only reads each storage's array, looks up the
compiled executable by the few things that vary per call (argument shapes, which `.grad`s
exist, grad mode) and writes back the arrays the step produced. A failed guard rebuilds the
plan; a changed shape retraces. Scalars the trace bakes in (closure cells, globals, Module
attributes such as `training` or `p` of Dropout, optimizer hyperparameters other than `lr`)
are part of the signature, so changing one retraces; `lr` is an input. Not seen: hooks
registered after the first call, attributes first added to a submodule later, rebinding a
builtin name, and scalars inside lists/dicts the function reads.

Donation. A storage the step overwrites (parameters, optimizer state, buffers, in-place
updated arguments) is donated to XLA, as hand-written JAX steps do, so the new values reuse
the old buffers. Tensor aliases share the `Storage` object (`.detach()`, views, `state_dict()`
entries), so they see the new values and are unaffected. What donation would break is another
holder of the *old JAX array* itself: a user's `t.jax()` result, another Storage wrapping the
same array (`from_jax`), a saved value of an eager autograd graph. So an array is donated only
when its reference count says the Storage is its only holder; otherwise it is copied first.
(A storage shared with a NumPy array, `t.numpy()`, hands out a fresh copy on every read and
copies what is written back into the array: nothing of the user's is donated; reading it
while tracing happens at compile time, or the trace would record the read and leave a tracer
in the storage.) Entries whose outputs get a `grad_fn` keep their inputs for backward: no
donation. The `.grad` a step drops (`zero_grad()` sets it to None, backward makes a new one)
is donated too, so the new gradient is written into its buffer: a fresh output buffer per
gradient costs a hand-written step that returns its gradients 15-20% on a CPU. Only when
nothing but its parameter holds that old gradient tensor, its storage and its array; else a
copy is donated.

Limits (documented in the README): Python side effects other than on that state happen only
while tracing; data-dependent Python control flow on tensor values (`if loss.item() > 0`)
cannot be traced: where PyTorch would break the graph, that signature runs eagerly with a
warning naming the line (`fullgraph=True`: `CompileError` instead, as PyTorch raises); random
ops use JAX's PRNG keyed from the generator.

Scalars. PyTorch 2.13 captures `.item()` (and `.tolist()` of an integer tensor) in the graph
with `fullgraph=True` or `torch._dynamo.config.capture_scalar_outputs`, else breaks the graph
there. So do we: captured, `.item()` gives a 0-d tensor of the traced value (see
`_captured_item`) that later tensor math uses; returned from the function it is a Python
number again. `float(t)`, `int(t)` and `bool(t)` must return real Python numbers, so they
cannot be traced (nor can `if`/`range` on a captured scalar): `Unsupported`, or eager.

Backends. Every backend name PyTorch ships compiles with XLA. A custom backend (a callable,
or a name from `torch._dynamo.register_backend`) is called once per traced signature, as
PyTorch calls it once per graph, with a `GraphModule` stand-in and example input tensors; the
callable it returns (typically `gm.forward`) runs every call of that signature. torchish has
no FX graph, so `gm.graph`/`gm.code` raise NotImplementedError; `gm.jaxpr` is the traced
program. A backend that raises gives `BackendCompilerFailed` (with
`torch._dynamo.config.suppress_errors`: eager instead); nothing is donated to its callable.
"""
import builtins
import dis
import functools
import itertools
import logging
import operator
import os
import sys
import traceback
import types
import warnings
import weakref

import jax
import jax.numpy as jnp
from jax.extend.core import jaxpr_as_fun

from ._tensor import Tensor, Size, _wrap
from ._storage import held_elsewhere
from ._dtype import dtype as _dtype_cls
from ._device import device as _device_cls
from . import _random_trace
from .autograd import grad_mode, graph
from .autograd.graph import Node, edge_of
from .compiler import STANCE as _STANCE

__all__ = ["compile", "CompileError"]


class CompileError(RuntimeError):
    user_stack = ()   # [traceback.FrameSummary] of the user's line that could not be traced


class _SilentBreak(CompileError):
    """Where PyTorch breaks the graph without a warning (eager fallback, no warning)."""


class _PrintOfTensor(_SilentBreak):
    """print() of a tensor while tracing."""


_LOG = logging.getLogger("torchish._dynamo")


def _describe(fn):
    """A compiled function as PyTorch's recompile message names it."""
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__name__", type(fn).__name__)
    return f"'{name}' ({code.co_filename}:{code.co_firstlineno})" if code else f"'{name}'"


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """PyTorch's `torch.compile` signature. `fullgraph=True` makes untraceable code an error
    (`torch._dynamo.exc.Unsupported`, as PyTorch raises) rather than an eager fallback. `mode`,
    `options` (inductor's setting names and types) and `backend` are checked as PyTorch checks
    them; every shipped backend name compiles with XLA, and a custom backend callable is
    called once per traced signature (see `GraphModule`). `dynamic` is accepted: torchish
    traces one executable per shape, and `dynamic=False` makes `recompile_limit` (else
    `torch._dynamo.config.recompile_limit`) bound how many signatures one function compiles
    (past it: eager, or `FailOnRecompileLimitHit` with `fullgraph=True`)."""
    if backend is None:
        from .compiler import get_default_backend
        backend = get_default_backend()
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, name=name,
                                 disable=disable, recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if isinstance(options, dict):   # (PyTorch takes these two out before the check)
        options = {k: v for k, v in options.items() if k not in ("guard_filter_fn", "use_aoti")}
    custom = None
    if isinstance(backend, str) and backend == "inductor":
        if mode is not None and mode != "default" and mode not in _MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                               f"{', '.join(_MODES)}")
        from ._dynamo.backends import check_inductor_options
        check_inductor_options(options)
    else:
        from ._dynamo.backends import lookup_backend, is_builtin
        fn = lookup_backend(backend)   # InvalidBackend for an unknown name
        if not is_builtin(backend):
            kwargs = {}
            if mode and mode != "default":
                kwargs["mode"] = mode
            if options:
                kwargs["options"] = options
            custom = (fn, kwargs)
    if dynamic is not None and not isinstance(dynamic, bool):
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    settings = dict(fullgraph=fullgraph, backend=custom, dynamic=dynamic,
                    recompile_limit=recompile_limit)
    from .nn import Module
    if isinstance(model, Module):
        return CompiledModule(model, **settings)
    return CompiledFunction(model, **settings)


_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


# ---- small helpers ---------------------------------------------------------------------------

_MISSING = object()
_CELL_CONTENTS = operator.attrgetter("cell_contents")
_TENSOR_META = operator.attrgetter("_storage", "_view", "_requires_grad", "_grad_fn")
_GET_LR = operator.itemgetter("lr")
_CONST_TYPES = (type(None), bool, int, float, complex, str, bytes)
_STATIC_TYPES = frozenset(_CONST_TYPES + (_dtype_cls, _device_cls))
_STATIC = object()     # an argument slot holding a static (hashed) value
_CALL = getattr(operator, "call", lambda f: f())
_CHAIN = itertools.chain.from_iterable


def _reference_counts():
    """What `sys.getrefcount` says in `_sole_grad` of a tensor only one attribute holds (passed
    in from the caller's local) and of its storage, which only that tensor holds."""
    class Holder:
        __slots__ = ("x",)
    held = Holder()
    held.x = Holder()
    held.x.x = object()
    tensor = held.x
    return _probe(tensor)


def _probe(tensor):
    return sys.getrefcount(tensor), sys.getrefcount(tensor.x)


_TENSOR_REFS, _STORAGE_REFS = _reference_counts()


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


def _sole_grad(g):
    """Whether a parameter's `.grad` `g` (a local of the caller) and its storage are held by
    nothing but that parameter and `g` itself (a plain tensor: no view, no alias, no saved
    value of a graph)."""
    return (g._view is None and g._base is None and sys.getrefcount(g) <= _TENSOR_REFS
            and sys.getrefcount(g._storage) <= _STORAGE_REFS)


def _is_static(a):
    t = type(a)
    if t in _STATIC_TYPES:
        return True
    return (t is tuple or t is Size) and all(type(x) in _STATIC_TYPES for x in a)


def _static_key(obj):
    """A hashable stand-in for a non-tensor argument (its value, or its identity)."""
    try:
        hash(obj)
        return ("v", type(obj), obj)
    except TypeError:
        return ("id", id(obj))


def _view_key(t):
    v = t._view
    return None if v is None else v.steps


def _aval_key(a):
    if isinstance(a, Tensor):
        a = a._data
    if isinstance(a, jax.Array):
        return (a.shape, a.dtype, a.weak_type, a.sharding)
    return type(a)


def _is_optimizer(obj):
    from . import optim
    return isinstance(obj, getattr(optim, "Optimizer", ()))


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return _MISSING


def _global_names(code):
    """The global names `code` (and the functions nested in it) reads. `co_names` would also
    list attribute names (`opt.step` names `step`), and a loop variable of that name at module
    level must not count as state."""
    names = {ins.argval for ins in dis.get_instructions(code)
             if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


# ---- the state a call site touches, and the guards that say it is unchanged -------------------

class _Plan:
    """What the walk found from a call site's roots, and how to re-check it cheaply.

    `tensors` are the state tensors (parameters, buffers, optimizer state, tensors in closures
    or arguments that need grads), `storages` their distinct storages (one input slot each),
    `params` the tensors whose `.grad` is carried. `.grad`s and plain tensor arguments (batches)
    are read per call (`bind`); everything else is guarded by identity.
    """

    def __init__(self, roots, values, kwnames, depth=3):
        from .nn import Module
        self.kwnames = kwnames
        self.tensors, self.storages, self.owners, self.index = [], [], [], {}
        self._tids = set()
        self.params, self.modules, self.optimizers = [], [], []
        self.sources = []     # callables returning the objects the walk read
        consts = []           # scalars the trace may bake in (module attributes, closures)
        self.kinds = []       # per argument: None (plain tensor), _STATIC or the object itself
        arg_roots = []
        for a in values:
            if isinstance(a, Tensor) and not (a._requires_grad or a._grad_fn is not None
                                              or a._grad is not None):
                self.kinds.append(None)
            elif not isinstance(a, Tensor) and _is_static(a):
                self.kinds.append(_STATIC)
            else:
                self.kinds.append(a)
                arg_roots.append(a)
        seen = set()
        stack = [(r, 0) for r in list(roots) + arg_roots][::-1]
        while stack:
            obj, d = stack.pop()
            if id(obj) in seen or d > depth:
                continue
            seen.add(id(obj))
            if isinstance(obj, Tensor):
                self._add_tensor(obj)
                if obj.is_leaf and obj.requires_grad:
                    self.params.append(obj)
            elif isinstance(obj, Module):
                for m in obj.modules():
                    if id(m) not in seen or m is obj:
                        self.modules.append(m)
                        seen.add(id(m))
                        md = m.__dict__
                        self.sources.append(md.values if m is obj else _attributes(md))
                        for name in ("_parameters", "_buffers", "_modules"):
                            if isinstance(md.get(name), dict):
                                self.sources.append(md[name].values)
                        consts.extend((k, type(v), v) for k, v in md.items()
                                      if type(v) in _CONST_TYPES)
                stack.extend((p, 0) for p in obj.parameters())
                stack.extend((b, 0) for b in obj.buffers())
                stack.extend((v, d + 1) for v in vars(obj).values()
                             if not isinstance(v, (Tensor, dict)))
            elif _is_optimizer(obj):
                self.optimizers.append(obj)
                self.sources += [obj.__dict__.values, obj.param_groups.copy]
                for g in obj.param_groups:
                    self.sources += [_group_values(g), g["params"].copy]
                    stack.extend((p, 0) for p in g["params"])
                    # hyperparameters: scalars the update bakes in, Tensors it reads
                    hyper = [(k, v) for k, v in g.items() if k not in ("params", "lr")]
                    consts.append(tuple((k, "T" if isinstance(v, Tensor) else _static_key(v))
                                        for k, v in hyper))
                    stack.extend((v, d + 1) for _, v in hyper)
            elif isinstance(obj, (list, set)):
                # (scalars in containers are not part of the signature: a list the function
                # appends to while tracing must not cause a retrace)
                self.sources.append(obj.copy)
                stack.extend((v, d + 1) for v in obj if type(v) not in _CONST_TYPES)
            elif isinstance(obj, (tuple, frozenset)):
                stack.extend((v, d + 1) for v in obj if type(v) not in _CONST_TYPES)
            elif isinstance(obj, dict):
                self.sources.append(obj.values)
                stack.extend((v, d + 1) for v in obj.values() if type(v) not in _CONST_TYPES)
            elif isinstance(obj, types.MethodType):
                stack.append((obj.__self__, d))
                stack.append((obj.__func__, d))
            elif isinstance(obj, types.FunctionType):
                cells = obj.__closure__ or ()
                names = sorted(_global_names(obj.__code__))
                glb = obj.__globals__
                if cells:
                    self.sources.append(functools.partial(map, _CELL_CONTENTS, cells))
                present = [n for n in names if n in glb]
                if present:   # (names not there now are builtins; rebinding them is not seen)
                    self.sources.append(_values_of(glb, present))
                stack.extend((c.cell_contents, d + 1) for c in cells
                             if _cell_value(c) is not _MISSING)
                stack.extend((glb[n], d + 1) for n in names if n in glb)
            elif type(obj) in _CONST_TYPES:
                consts.append((type(obj), obj))
            elif isinstance(obj, (CompiledFunction, _Compiled, _Plan, _Entry)):
                continue   # compile's own bookkeeping (`Module.compile()` keeps it on the
                # module): its cache changes on every new signature, and is no user state
            elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)):
                self.sources.append(obj.__dict__.values)
                stack.extend((v, d + 1) for v in vars(obj).values())
        self.groups = [g for o in self.optimizers for g in o.param_groups]
        self.orders = [[p for g in o.param_groups for p in g["params"]]
                       for o in self.optimizers]
        layouts = []
        for o, order in zip(self.optimizers, self.orders):
            self.sources.append(o.state.values)
            layout = []
            for i, p in enumerate(order):
                st = o.state.get(p)
                if not st:
                    continue
                self.sources.append(st.values)
                entry = []
                for k in sorted(st):
                    v = st[k]
                    if isinstance(v, Tensor):
                        self._add_tensor(v)
                        entry.append((k, "T", self.index[id(v._storage)]))
                    else:
                        entry.append((k, "v", _static_key(v)))
                layout.append((i, tuple(entry)))
            layouts.append(tuple(layout))
            # The eager optimizer remembers the arrays it last wrote, to donate them on its next
            # step. Compiled steps replace those arrays; a stale record would keep the old ones
            # alive (and stop our donation). Without a record it copies before donating.
            owned = vars(o).get("_owned_state_arrays")
            if owned:
                owned.clear()
        # Tensors that are not parameters but hold a .grad (retain_grad) carry it too.
        pids = {id(p) for p in self.params}
        self.params += [t for t in self.tensors if t._grad is not None and id(t) not in pids]
        self.tindex = {id(t): i for i, t in enumerate(self.tensors)}
        self.keep = [v for src in self.sources for v in src()]   # held: identities stay unique
        self.meta = list(map(_TENSOR_META, self.tensors))
        self.key = (
            tuple((self.index[id(t._storage)], _view_key(t), t._requires_grad,
                   t._grad_fn is None) for t in self.tensors),
            tuple(self.tindex[id(p)] for p in self.params),
            tuple(m.training for m in self.modules),
            tuple(consts),
            tuple(layouts),
            tuple(len(o.param_groups) for o in self.optimizers),
            tuple(k if k is None or k is _STATIC else _static_key(k) for k in self.kinds),
            kwnames,
        )
        self.fast = {}

    def _add_tensor(self, t):
        st = t._storage
        if id(st) not in self.index:
            self.index[id(st)] = len(self.storages)
            self.storages.append(st)
            self.owners.append(t)
        if id(t) not in self._tids:
            self._tids.add(id(t))
            self.tensors.append(t)

    def bind(self, values):
        """This call's inputs, or None when the guards say the plan no longer fits."""
        try:
            found = list(_CHAIN(map(_CALL, self.sources)))
        except (KeyError, ValueError):   # a guarded attribute, global or cell was deleted
            return None
        # identity, compared in C (`is`, not `==`: a Tensor's __eq__ is elementwise)
        if len(found) != len(self.keep) or not all(map(operator.is_, found, self.keep)):
            return None
        if not all(map(operator.eq, map(_TENSOR_META, self.tensors), self.meta)):
            return None
        storages = self.storages.copy()
        owners = self.owners.copy()
        index = self.index
        local = {}
        dyn = []       # tensors read per call (grads, batches): their versions follow eager
        sig = []

        def slot(t):
            """The input slot of `t`'s storage: the plan's, or a new one for this call."""
            key = id(t._storage)
            i = index.get(key)
            if i is None:
                i = local.get(key)
                if i is None:
                    i = local[key] = len(storages)
                    storages.append(t._storage)
                    owners.append(t)
            return i

        sole = set()   # slots of `.grad`s only their parameter holds (see `_sole_grad`)
        for p in self.params:
            g = p._grad
            if g is None:
                sig.append(None)
                continue
            alone = _sole_grad(g)
            i = slot(g)
            if alone:
                sole.add(i)
            v = g._view
            sig.append((i, None if v is None else v.steps, g._requires_grad))
            dyn.append(g)
        for a, kind in zip(values, self.kinds):
            if kind is None:
                if not isinstance(a, Tensor) or a._requires_grad or a._grad_fn is not None \
                        or a._grad is not None:
                    return None
                i = slot(a)
                data = a._storage.data
                v = a._view
                sig.append((i, data.shape, data.dtype, None if v is None else v.steps))
                dyn.append(a)
            elif kind is _STATIC:
                if isinstance(a, Tensor) or not _is_static(a):
                    return None
                sig.append(_static_key(a))
            elif a is not kind:
                return None
        return (storages, owners, self.tensors + dyn, (tuple(sig), grad_mode.is_grad_enabled()),
                sole)


def _attributes(md):
    """A guard source for a submodule's attributes: all but the hook dicts (which the walk
    does not read), as one C-level lookup."""
    return _values_of(md, [k for k, v in md.items() if not isinstance(v, dict)
                           or k in ("_parameters", "_buffers", "_modules")])


def _values_of(mapping, keys):
    """A guard source: the values of `keys` in `mapping`, looked up in C (KeyError if one
    is gone)."""
    if not keys:
        return tuple
    # itemgetter returns a bare value for one key; repeating it keeps the result a tuple
    return functools.partial(operator.itemgetter(*keys, keys[0]), mapping)


def _group_values(g):
    """A guard source for a param group: every value but lr, which is a traced input (a
    scheduler changing it must not fail the guard)."""
    return _values_of(g, [k for k in g if k != "lr"])


# ---- one compiled signature ----------------------------------------------------------------

_EAGER = object()  # the cache entry of a signature whose trace hit data-dependent code
_ALL_COMPILED = weakref.WeakSet()   # for `torch.compiler.reset()`
_TRACING = [0]   # how many compiled functions are being traced (a nested one is inlined)


class _Entry:
    """A compiled signature: the executable and how its outputs map back onto the objects."""

    def __init__(self):
        self.executable = None   # the AOT-compiled XLA computation (with donation)
        self.fun = None          # the same computation as a JAX function (for backward)
        self.uses_rng = None
        self.vjp = {}
        self.prints = []         # print() calls of the traced Python, replayed on every call
        self.gm = None           # the GraphModule a custom backend got (runs its callable)
        self.jaxpr = None        # the traced computation (explain, GraphModule)
        self.scalars = []        # `.item()` results made while tracing (see `_captured_item`)
        self.pending = None      # those of them to fill in after the first run
        # results that still had a graph when a step that ran backward returned them (a loss)
        self.spent_results = ()


class _Compiled:
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
            plan = self.plan = _Plan(self.roots_fn(), values, tuple(kwargs))
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
                entry = self.cache[key] = self._new_entry(
                    plan, storages, owners, holders, arrays, lrs, args, kwargs)
            plan.fast[dyn] = entry
        if entry is _EAGER:
            return self.fn(*args, **kwargs)
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
        return self._write_back(entry, plan, storages, holders, owners, arrays, lrs, rng_key,
                                outs)

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
        """The cache entry of a new signature: compiled, or `_EAGER` where PyTorch would break
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
                             "or a value the trace bakes in)")
            return _EAGER
        try:
            return self._build(plan, storages, owners, holders, arrays, lrs, args, kwargs)
        except CompileError as exc:
            if self.fullgraph:
                if isinstance(exc, Unsupported):
                    raise
                err = Unsupported(str(exc))
                err.user_stack = exc.user_stack
                raise err from None
            # PyTorch breaks the graph there; torchish runs this signature eagerly
            # (the failed trace left every object as it was)
            if not isinstance(exc, _SilentBreak):   # (no warning in PyTorch)
                warnings.warn(f"{exc} Running it eagerly instead.", stacklevel=4)
            return _EAGER
        except Exception as exc:
            # a custom backend's failure (or ours): `suppress_errors` runs it eagerly
            if not config.suppress_errors or isinstance(exc, Unsupported):
                raise
            _LOG.warning(f"torchish.compile: compiling {_describe(self.fn)} failed "
                         f"({type(exc).__name__}: {exc}); running it eagerly instead.")
            return _EAGER

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
        saved_lrs = [g["lr"] for g in plan.groups]
        saved_opt = [(o.state, {p: (s, dict(s)) for p, s in o.state.items()})
                     for o in plan.optimizers]
        vcs, seen_vc = [], set()
        for j, t in enumerate(holders):
            if id(t._vc) not in seen_vc:
                seen_vc.add(id(t._vc))
                vcs.append((j, t._vc, t._vc[0]))
        try:
            for st, a in zip(storages, ins):
                st.data = a
            for g, lr in zip(plan.groups, lr_in):
                g["lr"] = lr
            runs_before = graph.BACKWARD_RUNS[0]
            _TRACING[0] += 1
            try:
                with _random_trace.traced_key(key, record=lambda used: setattr(
                        entry, "uses_rng", used)):
                    if self.forward_only:
                        with grad_mode.no_grad():
                            result = self._call_user(entry, args, kwargs)
                    else:
                        result = self._call_user(entry, args, kwargs)
            finally:
                _TRACING[0] -= 1
            entry.ran_backward = graph.BACKWARD_RUNS[0] != runs_before
            leaves, entry.treedef = jax.tree_util.tree_flatten(
                result, is_leaf=lambda x: isinstance(x, Tensor))
            tensors = [x for x in leaves if isinstance(x, Tensor)]
            raw = [x for x in leaves if not isinstance(x, Tensor)
                   and isinstance(x, (jax.Array, jax.core.Tracer))]
            out = [t._data for t in tensors] + raw
            entry.n_tensors = len(tensors)
            if entry.ran_backward:
                entry.spent_results = tuple(j for j, t in enumerate(tensors)
                                            if t._grad_fn is not None)
            kinds, it_t, it_a = [], iter(range(len(tensors))), iter(range(len(tensors), len(out)))
            scalar_ids = set(map(id, entry.scalars))
            for x in leaves:
                if isinstance(x, Tensor):
                    kinds.append(("S" if id(x) in scalar_ids else "T", next(it_t), x.device))
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

    def _call_user(self, entry, args, kwargs):
        real_print = builtins.print

        def recorded_print(*a, **kw):
            if any(isinstance(v, (Tensor, jax.core.Tracer)) for v in a + tuple(kw.values())):
                raise _PrintOfTensor("torchish.compile: print() of a tensor inside compiled "
                                     "code needs its value.")
            entry.prints.append((a, kw))
        builtins.print = recorded_print   # printing constants replays; a tensor breaks
        from ._dynamo import config
        capture = self.fullgraph or config.capture_scalar_outputs
        if capture:
            methods = Tensor.item, Tensor.tolist
            Tensor.item = _captured_item(entry, methods[0])
            Tensor.tolist = _captured_tolist(entry, methods[1])
        try:
            return self.fn(*args, **kwargs)
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                jax.errors.TracerIntegerConversionError,
                jax.errors.TracerArrayConversionError) as exc:
            frames = _user_frames(exc.__traceback__)
            err = CompileError(_data_dependent_message(frames))
            err.user_stack = frames[-1:]
            raise err from None
        except CompileError as exc:
            if not exc.user_stack:
                exc.user_stack = _user_frames(exc.__traceback__)[-1:]
            raise
        finally:
            builtins.print = real_print
            if capture:
                Tensor.item, Tensor.tolist = methods

    # ---- after a call ------------------------------------------------------------------------
    def _write_back(self, entry, plan, storages, holders, owners, arrays, lrs, rng_key, outs):
        if entry.pending:
            for t, a in zip(entry.pending, outs[entry.scalar_base:]):
                t._storage.data = a
            entry.pending = None
        n = entry.n_out_res
        for i, a in zip(entry.written, outs[n:n + len(entry.written)]):
            storages[i].data = a
        for j, d in entry.vc:
            holders[j]._vc[0] += d
        for k, action, j in entry.grad_actions:
            p = plan.params[k]
            if action == "new":   # a tensor the step created: a new one, as in eager
                g = p._grad = _wrap(outs[j[0]], p.device)
                g._vc[0] = j[1]
            elif action == "none":
                p._grad = None
            else:
                p._grad = plan.tensors[j]
        for oi, i, k, action, v in entry.opt_actions:
            p = plan.orders[oi][i]
            st = plan.optimizers[oi].state[p]
            if action == "new":
                t = st[k] = _wrap(outs[v[0]], p.device)
                t._vc[0] = v[1]
            elif action == "obj":
                st[k] = plan.tensors[v]
            elif action == "arr":
                st[k] = outs[v]
            else:
                st[k] = v
        if entry.single:
            result = _wrap(outs[0], entry.res_kinds[0][2])
            tensors = [result]
        else:
            flat, tensors = [], []
            for kind in entry.res_kinds:
                if kind[0] == "T":
                    t = _wrap(outs[kind[1]], kind[2])
                    tensors.append(t)
                    flat.append(t)
                elif kind[0] == "S":   # a captured `.item()`: a number, as in PyTorch
                    t = _wrap(outs[kind[1]], kind[2])
                    tensors.append(t)
                    flat.append(t.item())
                elif kind[0] == "A":
                    flat.append(outs[kind[1]])
                else:
                    flat.append(kind[1])
            result = jax.tree_util.tree_unflatten(entry.treedef, flat)
        if entry.attach:
            # a forward: let gradients flow from its outputs back to params and inputs
            self._attach_grad(entry, owners, tensors, arrays, lrs, rng_key)
        elif entry.spent_results and grad_mode.is_grad_enabled():
            _attach_spent(entry, owners, tensors)
        return result

    def _attach_grad(self, entry, owners, tensors, arrays, lrs, rng_key):
        """Make a compiled forward differentiable: one node over the inputs needing grads."""
        diff = tuple(i for i, t in enumerate(owners) if t.requires_grad)
        if not diff or not tensors:
            return
        vjp = entry.vjp.get(diff)
        if vjp is None:
            fun = jax.jit(entry.fun)
            n_t = entry.n_tensors

            def results_of(diff_arrays, all_arrays, lrs_, key_):
                full = list(all_arrays)
                for i, a in zip(diff, diff_arrays):
                    full[i] = a
                return list(fun(*full, *lrs_, key_)[:n_t])

            @jax.jit
            def vjp(leaves, cts):
                diff_arrays, all_arrays, lrs_, key_ = leaves
                outs, pull = jax.vjp(lambda d: results_of(d, all_arrays, lrs_, key_),
                                     diff_arrays)
                cts = [jnp.zeros_like(o) if c is None else graph.torch_grad(c)
                       for o, c in zip(outs, cts)]
                return [graph.torch_grad(g) for g in pull(cts)[0]]
            entry.vjp[diff] = vjp
        edges = [edge_of(owners[i]) for i in diff]
        node = Node("CompiledFunctionBackward", edges,
                    ([arrays[i] for i in diff], arrays, lrs, rng_key),
                    None, lambda leaves, cts, _v=vjp: list(_v(leaves, cts)),
                    [(t.shape, t.dtype) for t in tensors], None)
        for j, t in enumerate(tensors):
            if t.dtype.is_floating_point or t.dtype.is_complex:
                t._grad_fn = node
                t._output_nr = j


# ---- scalars out of traced tensors (PyTorch's captured scalar outputs) ----------------------

def _traced_by_us(t):
    """Whether `t` holds a value of the trace being recorded (not a vmap/grad transform's),
    and the caller is user code (torchish's own `.item()` calls want a number or an error)."""
    return (type(t._data).__name__ == "DynamicJaxprTracer"
            and not sys._getframe(2).f_code.co_filename.startswith(_HERE))


def _captured_item(entry, item):
    """`Tensor.item` while tracing with scalar capture (PyTorch 2.13 with `fullgraph=True` or
    `capture_scalar_outputs`): the scalar stays traced, as a 0-d tensor of the dtype the
    Python number stands for in arithmetic (the default float dtype or wider, int64, bool),
    so later tensor math uses it; Python control flow on it still cannot be traced. Returned
    from the compiled function it becomes a Python number again."""
    def captured(self):
        if self.numel() != 1 or not _traced_by_us(self):
            return item(self)
        return _capture_scalar(entry, self)
    return captured


def _captured_tolist(entry, tolist):
    """`Tensor.tolist` while tracing with scalar capture: PyTorch captures integer tensors
    only."""
    def captured(self):
        if not _traced_by_us(self):
            return tolist(self)
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise CompileError("torchish.compile: Tensor.tolist() with non-integer tensor")
        return _nested_scalars(entry, self)
    return captured


def _nested_scalars(entry, t):
    if t.ndim == 0:
        return _capture_scalar(entry, t)
    return [_nested_scalars(entry, r) for r in t.unbind(0)]


def _capture_scalar(entry, t):
    from . import _dtype as dt
    d = t.dtype
    if d.is_floating_point or d.is_complex:
        target = dt.promote_types(d, dt.get_default_dtype())
    else:
        target = d if d is dt.bool else dt.int64
    with grad_mode.no_grad():
        # (detach last: a view of a detached tensor loses its stop-gradient in a trace)
        s = t.reshape(()).detach().to(target).clone()   # (its own storage: see `pending`)
    entry.scalars.append(s)
    return s


def _attach_spent(entry, owners, tensors):
    """A loss returned by a step that ran its backward: in PyTorch the forward up to
    `loss.backward()` is one compiled graph, so the loss keeps a CompiledFunctionBackward node
    whose buffers that backward freed (a second backward through it raises)."""
    edges = [edge_of(t) for t in owners if t.requires_grad]
    node = Node("CompiledFunctionBackward", edges, None, None, None,
                [(t.shape, t.dtype) for t in tensors], saved=())
    for j in entry.spent_results:
        tensors[j]._grad_fn = node
        tensors[j]._output_nr = j


def _user_frames(tb):
    """The frames of a traceback in the user's code (not torchish's or JAX's)."""
    jax_dir = os.path.dirname(jax.__file__)
    return [f for f in traceback.extract_tb(tb)
            if not f.filename.startswith(_HERE) and not f.filename.startswith(jax_dir)]


_HERE = os.path.dirname(__file__) + os.sep


def _data_dependent_message(frames):
    where = f"{frames[-1].filename}:{frames[-1].lineno} (`{frames[-1].line}`)" if frames \
        else "unknown location"
    return (f"torchish.compile: the compiled code at {where} converts a tensor value to a "
            "Python value (e.g. `if x > 0`, `.item()`, `.tolist()`, `int(x)`), which depends "
            "on data and cannot be traced. Move it out of the compiled function, or use "
            "tensor ops such as torch.where.")


# ---- torch.compiler.reset, torch._dynamo.graph_break ------------------------------------------

def reset():
    """Forget every compiled signature: the next call of each compiled function traces
    (and calls its custom backend) again."""
    for c in list(_ALL_COMPILED):
        c.reset()


def graph_break(msg=""):
    """`torch._dynamo.graph_break()`: inside a trace, PyTorch ends the graph there; torchish
    runs the signature eagerly (no warning), or raises Unsupported with `fullgraph=True`."""
    if _TRACING[0]:
        raise _SilentBreak(f"Call to `torch._dynamo.graph_break()`\n  Explanation: "
                           f"User-inserted graph break. Message: {msg or None}\n  Hint: "
                           "Remove the `torch._dynamo.graph_break()` call.")


class CompiledFunction:
    """`torchish.compile(fn)`: a whole step (forward, backward, optimizer) as one jit."""

    def __init__(self, fn, **settings):
        functools.update_wrapper(self, fn)
        self._torchdynamo_orig_callable = fn   # (PyTorch's name for the original)
        self._compiled = _Compiled(fn, lambda: (fn,), **settings)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


def CompiledModule(module, **settings):
    """`torchish.compile(module)`: PyTorch's `OptimizedModule`, whose forward is compiled."""
    return _optimized_module_class()(module, **settings)


@functools.lru_cache(maxsize=None)
def _optimized_module_class():
    from .nn import Module

    class OptimizedModule(Module):
        """A Module holding the original as its child `_orig_mod` (so `state_dict()` keys start
        with `_orig_mod.`, as PyTorch's); other attributes read and write the original's."""
        _OWN = frozenset({"_orig_mod", "_compiled"})
        __module__ = "torchish._dynamo.eval_frame"   # where PyTorch's lives (and ours is named)
        __qualname__ = "OptimizedModule"

        def __init__(self, mod, **settings):
            super().__init__()
            self._orig_mod = mod
            self._compile_orig(settings)

        def _compile_orig(self, settings):
            mod = self._modules["_orig_mod"]
            object.__setattr__(self, "_compiled", _Compiled(mod, lambda: (mod,),
                                                            forward_only=True, **settings))

        def __getstate__(self):
            # (pickle and deepcopy: the copy compiles its own `_orig_mod` afresh)
            state = super().__getstate__()
            state["_compiled"] = state["_compiled"].settings
            return state

        def __setstate__(self, state):
            state = dict(state)
            settings = state.pop("_compiled", {})
            if not isinstance(settings, dict):   # (pickled by an older torchish)
                settings = {"fullgraph": bool(settings)}
            super().__setstate__(state)
            self._compile_orig(settings)

        def forward(self, *args, **kwargs):
            return self._compiled(*args, **kwargs)

        @property
        def training(self):
            return self._modules["_orig_mod"].training

        @training.setter
        def training(self, mode):
            mods = self.__dict__.get("_modules")
            if mods and "_orig_mod" in mods:   # Module.__init__ sets it before the child exists
                mods["_orig_mod"].training = mode

        def __getattr__(self, name):
            mods = self.__dict__.get("_modules")
            if name == "_orig_mod" or not mods or "_orig_mod" not in mods:
                return super().__getattr__(name)
            return getattr(mods["_orig_mod"], name)

        def __setattr__(self, name, value):
            if name in self._OWN or hasattr(type(self), name):
                super().__setattr__(name, value)
            else:
                setattr(self._orig_mod, name, value)

    return OptimizedModule
