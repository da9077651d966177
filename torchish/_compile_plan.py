"""`torchish.compile`'s plan: the state a call site touches, and the guards on it.

The walk (`_Plan.__init__`) runs once per call site: from the compiled function (its bound
`self`, closure cells, the globals it names) and its arguments it finds Modules, Optimizers and
tensors, and records the identity of every object it read. `_Plan.bind` re-checks those
identities in C on every call and reads the per-call inputs (`.grad`s, batches); a failed guard
rebuilds the plan (see `_compile.py`).
"""
import dis
import functools
import itertools
import operator
import sys
import types
import weakref

import jax
import numpy as np

from ._storage import Storage
from ._views import _apply_steps
from ._tensor import Tensor, Size
from ._dtype import dtype as _dtype_cls
from ._device import device as _device_cls
from .autograd import grad_mode

# ---- small helpers ---------------------------------------------------------------------------

_MISSING = object()
_CELL_CONTENTS = operator.attrgetter("cell_contents")
_TENSOR_META = operator.attrgetter("_storage", "_view", "_requires_grad", "_grad_fn")
_CONST_TYPES = (type(None), bool, int, float, complex, str, bytes)
_STATIC_TYPES = frozenset(_CONST_TYPES + (_dtype_cls, _device_cls))
_STATIC = object()     # an argument slot holding a static (hashed) value
_NON_LEAF = object()   # an argument slot holding a tensor a graph made (see `_is_activation`)
_LEAF = object()       # an argument slot holding a leaf needing grad (see `_is_fresh_leaf`)
_VIEW = object()       # an argument slot holding a view read per call (see `_is_view_input`)
_MARKERS = (_STATIC, _NON_LEAF, _LEAF, _VIEW)
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


def _sole_grad(g, refs):
    """Whether a parameter's `.grad` `g` (a local of the caller) and its storage are held by
    nothing but that parameter and `g` itself (a plain tensor: no view, no alias, no saved
    value of a graph). `refs`: what `_reference_counts` says now (measured per call: a frame
    evaluator installed later, as PyTorch's dynamo installs, holds one more reference to a
    function's arguments)."""
    return (g._view is None and g._base is None and sys.getrefcount(g) <= refs[0]
            and sys.getrefcount(g._storage) <= refs[1])


def _is_activation(a):
    """Whether `a` is a tensor a graph made (an activation), read per call like a batch: no
    `.grad` to carry, no view (those are guarded like state, see `_Plan.spread`)."""
    return (isinstance(a, Tensor) and a._grad_fn is not None and a._grad is None
            and a._view is None and not a._retains_grad)


def _is_fresh_leaf(a):
    """Whether `a` is a leaf needing grad without a `.grad` yet (an input whose gradient is
    wanted), read per call like a batch: a `.grad` the step gives it is written back."""
    return (isinstance(a, Tensor) and a._requires_grad and a._grad_fn is None
            and a._grad is None and a._view is None)


def _is_view_input(a):
    """Whether `a` is a view (a batch sliced from a dataset tensor, a row of a weight, an
    expanded leaf) read per call into a slot of its own holding its values, as PyTorch takes
    any tensor argument as a graph input: a new view each call does not retrace, and its
    gradient flows to the view's own graph node (or its `.grad`, for a leaf view). Not when
    it carries a `.grad` (guarded like state then)."""
    return (isinstance(a, Tensor) and a._view is not None and a._grad is None
            and not a._retains_grad)


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


def _user_methods(cls):
    """The functions a user's Module class (not torchish's own) defines: the walk reads the
    globals and closures they name, as PyTorch traces the code they run."""
    if cls.__module__.startswith("torchish."):
        return ()
    found = []
    for k in cls.__mro__:
        if k.__module__.startswith("torchish.") or k is object:
            break
        for v in vars(k).values():
            v = getattr(v, "__func__", v)   # (staticmethod, classmethod)
            if isinstance(v, property):
                v = v.fget
            if isinstance(v, types.FunctionType):
                found.append(v)
    return found


# ---- the state a call site touches, and the guards that say it is unchanged -------------------

class _Plan:
    """What the walk found from a call site's roots, and how to re-check it cheaply.

    `tensors` are the state tensors (parameters, buffers, optimizer state, tensors in closures
    or arguments that need grads), `storages` their distinct storages (one input slot each),
    `params` the tensors whose `.grad` is carried. `.grad`s, plain tensor arguments (batches),
    activations and fresh leaves (`_is_activation`, `_is_fresh_leaf`) are read per call
    (`bind`); everything else is guarded by identity.
    """
    _compile_bookkeeping = True   # (the walk skips compile's own objects)

    def __init__(self, roots, values, kwnames, depth=3, view_slots=True, grads=True):
        from .nn import Module
        self.kwnames = kwnames
        self.tensors, self.storages, self.owners, self.index = [], [], [], {}
        self._tids = set()
        self.params, self.modules, self.optimizers = [], [], []
        self.sources = []     # callables returning the objects the walk read
        consts = []           # scalars the trace may bake in (module attributes, closures)
        # per argument: None (plain tensor), _NON_LEAF, _LEAF, _STATIC or the object itself
        self.kinds = []
        arg_roots = []
        for a in values:
            if view_slots and _is_view_input(a):
                self.kinds.append(_VIEW)
            elif isinstance(a, Tensor) and not (a._requires_grad or a._grad_fn is not None
                                                or a._grad is not None):
                self.kinds.append(None)
            elif _is_activation(a):
                self.kinds.append(_NON_LEAF)
            elif _is_fresh_leaf(a):
                self.kinds.append(_LEAF)
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
                        # plain tensor attributes (`self.seen = torch.zeros(2)`) are state
                        # too, and the globals the user's own methods name (a counter they
                        # update in place), as PyTorch traces the code that reads them
                        stack.extend((v, d + 1) for v in md.values() if isinstance(v, Tensor))
                        stack.extend((f, d) for f in _user_methods(type(m)))
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
            elif isinstance(obj, weakref.ref):
                # (an LR scheduler's wrapper of `opt.step` holds its optimizer so)
                target = obj()
                if target is not None:
                    stack.append((target, d))
            elif isinstance(obj, functools.partial):
                stack.extend((v, d + 1) for v in (obj.func, *obj.args, *obj.keywords.values())
                             if type(v) not in _CONST_TYPES)
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
            elif getattr(type(obj), "_compile_bookkeeping", False):
                continue   # compile's own bookkeeping (`Module.compile()` keeps it on the
                # module): its cache changes on every new signature, and is no user state
            elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)):
                self.sources.append(obj.__dict__.values)
                stack.extend((v, d + 1) for v in vars(obj).values())
        self._unshare_views(values)
        self.groups = [g for o in self.optimizers for g in o.param_groups]
        self.orders = [[p for g in o.param_groups for p in g["params"]]
                       for o in self.optimizers]
        layouts = []
        for o, order in zip(self.optimizers, self.orders):
            self.sources.append(o.state.values)
            layout = []
            for i, p in enumerate(order):
                st = o.state.get(p)
                if st is None:
                    continue
                self.sources.append(st.values)   # (an empty one too: the step may fill it)
                if not st:
                    continue
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
        self.carries_grads = grads
        if not grads:   # (a compiled Module's forward runs without grad mode: whether the
            self.params = []   # `.grad`s exist is no part of it; see `_Compiled.grads`)
        self.tindex = {id(t): i for i, t in enumerate(self.tensors)}
        # tensors needing grad that view some storage element more than once (`expand`): a
        # slot of their own holding the view's values, so gradients are per viewed element
        self.spread = [t for t in self.tensors if t.requires_grad and _repeats_elements(t)]
        # each tensor's storage, view, requires_grad and grad_fn are guarded the same way
        self.sources.append(functools.partial(_metas, self.tensors))
        self.keep = [v for src in self.sources for v in src()]   # held: identities stay unique
        self.keep.append(_END)
        self.sources.append(_END_SOURCE)
        self.n_storages = len(self.storages)
        self.edges = None     # (see `_compile_writeback.owner_edges`)
        self.key = (
            tuple((self.index[id(t._storage)], _view_key(t), t._requires_grad,
                   t._grad_fn is None) for t in self.tensors),
            tuple(self.tindex[id(p)] for p in self.params),
            tuple(m.training for m in self.modules),
            tuple(consts),
            tuple(layouts),
            tuple(len(o.param_groups) for o in self.optimizers),
            tuple(k if k is None or k in _MARKERS else _static_key(k) for k in self.kinds),
            kwnames,
        )
        self.fast = {}

    def _unshare_views(self, values):
        """A view argument whose storage is state or another tensor argument's keeps reading
        that storage (an in-place write through one must reach the other): its old kind."""
        shared = set(self.index)
        shared.update(id(a._storage) for a, k in zip(values, self.kinds)
                      if isinstance(a, Tensor) and k is not _VIEW)
        for j, (a, k) in enumerate(zip(values, self.kinds)):
            if k is _VIEW and id(a._storage) in shared:
                self.kinds[j] = self._guarded_tensor(a)

    def _guarded_tensor(self, a):
        """The kind of a tensor argument that is not read per call: None for a plain one
        (its storage read per call), else the tensor itself, guarded like state."""
        if not (a._requires_grad or a._grad_fn is not None or a._grad is not None):
            return None
        self._add_tensor(a)
        if a.is_leaf and a.requires_grad:
            self.params.append(a)
        return a

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
        # identity, compared in C (`is`, not `==`: a Tensor's __eq__ is elementwise); the
        # `_END` marker last on both sides makes a longer or shorter walk fail too
        try:
            if not all(map(operator.is_, _CHAIN(map(_CALL, self.sources)), self.keep)):
                return None
        except (KeyError, ValueError):   # a guarded attribute, global or cell was deleted
            return None
        storages = self.storages.copy()
        owners = self.owners.copy()
        index = self.index
        local = {}     # storages read only by this call: a slot each
        dyn = []       # tensors read per call (grads, batches): their versions follow eager
        sig = []
        sole = set()   # slots of `.grad`s only their parameter holds (see `_sole_grad`)
        refs = _reference_counts() if self.params else None
        for p in self.params:
            g = p._grad
            if g is None:
                sig.append(None)
                continue
            alone = _sole_grad(g, refs)   # (before `owners` holds it too)
            key = id(g._storage)
            i = index.get(key)
            if i is None:
                i = local.get(key)
                if i is None:
                    i = local[key] = len(storages)
                    storages.append(g._storage)
                    owners.append(g)
            if alone:
                sole.add(i)
            v = g._view
            sig.append((i, None if v is None else v.steps, g._requires_grad))
            dyn.append(g)
        for a, kind in zip(values, self.kinds):
            if kind is None or kind is _NON_LEAF or kind is _LEAF:
                if kind is None:
                    if not isinstance(a, Tensor) or a._requires_grad or a._grad is not None \
                            or a._grad_fn is not None:
                        return None
                elif not (_is_activation(a) if kind is _NON_LEAF else _is_fresh_leaf(a)):
                    return None
                st = a._storage
                key = id(st)
                i = index.get(key)
                if i is None:
                    i = local.get(key)
                    if i is None:
                        i = local[key] = len(storages)
                        storages.append(st)
                        owners.append(a)
                data = st.data
                v = a._view
                sig.append((i, data.shape, data.dtype, None if v is None else v.steps))
                dyn.append(a)
            elif kind is _STATIC:
                if isinstance(a, Tensor) or not _is_static(a):
                    return None
                sig.append(_static_key(a))
            elif kind is _VIEW:
                if not _is_view_input(a):
                    return None
            elif a is not kind:
                return None
        # view arguments: a slot each holding the view's values (`_compile_trace.trace_step`
        # swaps it in for the trace), after the storages anything else reads
        for a, kind in zip(values, self.kinds):
            if kind is _VIEW:
                if id(a._storage) in index or id(a._storage) in local:
                    return None   # (shared now: see `_unshare_views`)
                data = a._data
                sig.append((len(storages), data.shape, data.dtype, a._requires_grad,
                            a._grad_fn is None))
                storages.append(Storage(data, a.device))
                owners.append(a)
                dyn.append(a)
        for t in self.spread:   # (last: `_compile_trace.trace_step` finds them there)
            storages.append(Storage(t._data, t.device))
            owners.append(t)
        return (storages, owners, self.tensors + dyn, (tuple(sig), grad_mode.is_grad_enabled()),
                sole)


def _repeats_elements(t):
    """Whether `t`'s view reads some element of its storage more than once."""
    v = t._view
    if v is None:
        return False
    shape = t._storage.data.shape
    try:   # (the storage's element numbers, read through the view)
        with jax.ensure_compile_time_eval():
            index = _apply_steps(np.arange(int(np.prod(shape))).reshape(shape), v.steps)
            return np.unique(np.asarray(index)).size < index.size
    except Exception:   # a view that reinterprets bytes (`dtype`): one element each
        return False


def _metas(tensors):
    return _CHAIN(map(_TENSOR_META, tensors))


_END = object()
_END_SOURCE = functools.partial(tuple, (_END,))


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
