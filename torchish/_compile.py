"""`torchish.compile`: run a PyTorch-style function or Module as one `jax.jit` computation.

The function runs once per *signature* (argument shapes/dtypes, the structure of the state it
touches) with every tensor's storage holding a JAX tracer, so the forward, `loss.backward()`
and `optimizer.step()` all become one XLA computation. The state a step reads and writes is
found by walking what the function can reach (its arguments, bound `self`, closure cells and
the globals it names): Modules (parameters, buffers, `.grad`), Optimizers (their state and
each group's `lr`), and tensors. Before a call their current values go in as inputs; after it,
the outputs are written back so the Python objects hold exactly what eager execution would.

Limits (documented in the README): Python side effects other than on that state happen only
while tracing; data-dependent Python control flow on tensor values (`if loss.item() > 0`)
raises `CompileError` naming the line; random ops use JAX's PRNG keyed from the generator.
"""
import functools
import os
import traceback
import types

import jax
import jax.numpy as jnp

from ._tensor import Tensor, _wrap
from . import _random_trace
from .autograd import grad_mode, graph
from .autograd.graph import Node, edge_of

__all__ = ["compile", "CompileError"]


class CompileError(RuntimeError):
    pass


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """PyTorch's `torch.compile` signature; the keyword arguments are accepted and ignored."""
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if disable:
        return model
    from .nn import Module
    if isinstance(model, Module):
        return CompiledModule(model)
    return CompiledFunction(model)


# ---- finding the state a function can touch ------------------------------------------------

class _State:
    """Everything mutable a compiled call reads or writes, in a fixed order."""

    def __init__(self):
        self.storages = []     # Storage objects (their .data goes in and comes out)
        self.owners = {}       # id(storage) -> a tensor on it (for autograd edges)
        self.params = []       # tensors whose .grad is carried
        self.modules = []
        self.optimizers = []
        self._seen = set()

    def add_tensor(self, t):
        st = t._storage
        if id(st) not in self.owners:
            self.owners[id(st)] = t
            self.storages.append(st)
        if t._grad is not None:
            self.add_tensor(t._grad)


def _is_optimizer(obj):
    from . import optim
    return isinstance(obj, getattr(optim, "Optimizer", ()))


def _discover(roots, depth=3):
    from .nn import Module
    state = _State()
    stack = [(r, 0) for r in roots]
    while stack:
        obj, d = stack.pop()
        if id(obj) in state._seen or d > depth:
            continue
        state._seen.add(id(obj))
        if isinstance(obj, Tensor):
            state.add_tensor(obj)
            if obj.is_leaf and obj.requires_grad:
                state.params.append(obj)
        elif isinstance(obj, Module):
            for m in obj.modules():
                if id(m) not in state._seen or m is obj:
                    state.modules.append(m)
                    state._seen.add(id(m))
            for p in obj.parameters():
                stack.append((p, 0))
            for b in obj.buffers():
                stack.append((b, 0))
            stack.extend((v, d + 1) for v in vars(obj).values()
                         if not isinstance(v, (Tensor, dict)))
        elif _is_optimizer(obj):
            state.optimizers.append(obj)
            for group in obj.param_groups:
                stack.extend((p, 0) for p in group["params"])
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend((v, d + 1) for v in obj)
        elif isinstance(obj, dict):
            stack.extend((v, d + 1) for v in obj.values())
        elif isinstance(obj, types.MethodType):
            stack.append((obj.__self__, d))
            stack.append((obj.__func__, d))
        elif isinstance(obj, types.FunctionType):
            stack.extend((c.cell_contents, d + 1) for c in obj.__closure__ or ()
                         if _cell_filled(c))
            for name in _global_names(obj.__code__):
                if name in obj.__globals__:
                    stack.append((obj.__globals__[name], d + 1))
        elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)):
            stack.extend((v, d + 1) for v in vars(obj).values())
    for opt in state.optimizers:
        for st in opt.state.values():
            for v in st.values():
                if isinstance(v, Tensor):
                    state.add_tensor(v)
    return state


def _cell_filled(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _global_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


# ---- one compiled callable -------------------------------------------------------------

def _static_key(obj):
    """A hashable stand-in for a non-tensor argument (its value, or its identity)."""
    try:
        hash(obj)
        return ("v", type(obj), obj)
    except TypeError:
        return ("id", id(obj))


def _opt_state_layout(opt):
    """(layout, tensors) of an optimizer's state in parameter order."""
    layout, tensors = [], []
    order = [p for g in opt.param_groups for p in g["params"]]
    for i, p in enumerate(order):
        st = opt.state.get(p)
        if not st:
            continue
        entry = []
        for k in sorted(st):
            v = st[k]
            if isinstance(v, Tensor):
                entry.append((k, "T", tuple(v.shape), v.dtype))
                tensors.append(v)
            else:
                entry.append((k, "v", _static_key(v)))
        layout.append((i, tuple(entry)))
    return tuple(layout), tensors


class _Entry:
    """A compiled signature: the jitted pure function and what its trace recorded."""

    def __init__(self):
        self.jitted = None
        self.post = None      # filled while tracing: how to write outputs back
        self.uses_rng = None  # filled while tracing: whether random ops were called
        self.vjp = {}


class _Compiled:
    def __init__(self, fn, roots_fn, forward_only=False):
        self.fn = fn
        self.roots_fn = roots_fn
        self.forward_only = forward_only
        self.cache = {}

    # The pure function: (state arrays, lrs, key, arg arrays) -> (result, post-state)
    def _pure(self, entry, state_arrays, lrs, key):
        # The objects of the call being traced (a cache hit never runs this Python code).
        state, args, kwargs = entry.current
        saved = [st.data for st in state.storages]
        saved_grads = [p._grad for p in state.params]
        saved_lrs = [[g["lr"] for g in o.param_groups] for o in state.optimizers]
        saved_opt = [{p: dict(s) for p, s in o.state.items()} for o in state.optimizers]
        try:
            for st, a in zip(state.storages, state_arrays):
                st.data = a
            it = iter(lrs)
            for o in state.optimizers:
                for g in o.param_groups:
                    g["lr"] = next(it)
            runs_before = graph.BACKWARD_RUNS[0]
            with _random_trace.traced_key(key, record=lambda used: setattr(
                    entry, "uses_rng", used)):
                if self.forward_only:
                    with grad_mode.no_grad():
                        result = self._call_user(args, kwargs)
                else:
                    result = self._call_user(args, kwargs)
            flat, treedef = jax.tree_util.tree_flatten(
                result, is_leaf=lambda x: isinstance(x, Tensor))
            res_arrays = [x._data if isinstance(x, Tensor) else x for x in flat]
            res_kinds = [isinstance(x, Tensor) for x in flat]
            grads = [p._grad._data if p._grad is not None else None for p in state.params]
            layouts, opt_arrays = [], []
            for o in state.optimizers:
                layout, tensors = _opt_state_layout(o)
                layouts.append(layout)
                opt_arrays.append([t._data for t in tensors])
            entry.ran_backward = graph.BACKWARD_RUNS[0] != runs_before
            entry.post = (treedef, res_kinds, [g is not None for g in grads], layouts,
                          [tuple(p._grad.shape) if p._grad is not None else None
                           for p in state.params])
            post_state = [st.data for st in state.storages]
            return ([a for a, k in zip(res_arrays, res_kinds) if k],
                    post_state, [g for g in grads if g is not None], opt_arrays)
        finally:
            for st, a in zip(state.storages, saved):
                st.data = a
            for p, g in zip(state.params, saved_grads):
                p._grad = g
            for o, lrs_o, st in zip(state.optimizers, saved_lrs, saved_opt):
                for g, lr in zip(o.param_groups, lrs_o):
                    g["lr"] = lr
                o.state.clear()
                o.state.update(st)

    def _call_user(self, args, kwargs):
        try:
            return self.fn(*args, **kwargs)
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError,
                jax.errors.TracerIntegerConversionError,
                jax.errors.TracerArrayConversionError) as exc:
            raise CompileError(_data_dependent_message(exc)) from None

    def __call__(self, *args, **kwargs):
        state = _discover(list(self.roots_fn()) + list(args) + list(kwargs.values()))
        arg_tensors = [a for a in jax.tree_util.tree_leaves(
            (args, kwargs), is_leaf=lambda x: isinstance(x, Tensor)) if isinstance(a, Tensor)]
        for t in arg_tensors:
            state.add_tensor(t)
        layouts = tuple(_opt_state_layout(o)[0] for o in state.optimizers)
        index = {id(st): i for i, st in enumerate(state.storages)}
        key = (
            tuple((st.data.shape, st.data.dtype) for st in state.storages),
            tuple(p._grad is not None for p in state.params),
            tuple(index[id(t._storage)] for t in arg_tensors),  # aliasing between arguments
            tuple(t.requires_grad for t in arg_tensors),
            jax.tree_util.tree_structure((args, kwargs),
                                         is_leaf=lambda x: isinstance(x, Tensor)),
            tuple(_static_key(a) for a in jax.tree_util.tree_leaves(
                (args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))
                if not isinstance(a, Tensor)),
            layouts,
            tuple(m.training for m in state.modules),
            tuple(len(o.param_groups) for o in state.optimizers),
            grad_mode.is_grad_enabled(),
        )
        entry = self.cache.get(key)
        if entry is None:
            entry = self.cache[key] = _Entry()
            entry.jitted = jax.jit(functools.partial(self._pure, entry))
        entry.current = (state, args, kwargs)
        state_arrays = [st.data for st in state.storages]
        lrs = [_lr_value(g["lr"]) for o in state.optimizers for g in o.param_groups]
        traced_before = entry.uses_rng is not None
        rng_key = _random_trace.next_key(entry.uses_rng)
        entry.last_inputs = (state_arrays, lrs, rng_key)
        results, post_state, grads, opt_arrays = entry.jitted(state_arrays, lrs, rng_key)
        if not traced_before and entry.uses_rng:
            _random_trace.advance()  # the peeked key was used: consume it
        flat, treedef = self._write_back(entry, state, results, post_state, grads, opt_arrays)
        if grad_mode.is_grad_enabled() and not entry.ran_backward:
            # a forward: let gradients flow from its outputs back to params and inputs
            self._attach_grad(entry, state, flat, state_arrays, lrs, rng_key)
        return jax.tree_util.tree_unflatten(treedef, flat)

    def _write_back(self, entry, state, results, post_state, grads, opt_arrays):
        treedef, res_kinds, grad_present, layouts, _ = entry.post
        for st, a in zip(state.storages, post_state):
            st.data = a
        it = iter(grads)
        for p, present in zip(state.params, grad_present):
            if not present:
                p._grad = None
                continue
            g = next(it)
            if p._grad is not None and p._grad.shape == g.shape:
                p._grad._storage.data = g
            else:
                p._grad = _wrap(g, p.device)
        for o, layout, arrays in zip(state.optimizers, layouts, opt_arrays):
            order = [p for g in o.param_groups for p in g["params"]]
            it = iter(arrays)
            for i, entries in layout:
                st = o.state.setdefault(order[i], {})
                for k, kind, *rest in entries:
                    if kind == "T":
                        old = st.get(k)
                        a = next(it)
                        if isinstance(old, Tensor) and old.shape == a.shape:
                            old._storage.data = a
                        else:
                            st[k] = _wrap(a, order[i].device)
        it = iter(results)
        flat = [_wrap(next(it)) if k else None for k in res_kinds]
        return flat, treedef

    def _attach_grad(self, entry, state, flat, state_arrays, lrs, rng_key):
        """Make a compiled forward differentiable: one node over the inputs needing grads."""
        diff = [i for i, st in enumerate(state.storages)
                if state.owners[id(st)].requires_grad]
        if not diff:
            return
        vjp = entry.vjp.get(tuple(diff))
        if vjp is None:
            jitted = entry.jitted

            def results_of(diff_arrays, all_arrays, lrs_, key_):
                full = list(all_arrays)
                for i, a in zip(diff, diff_arrays):
                    full[i] = a
                res = jitted(full, lrs_, key_)[0]
                return [res[j] for j in range(len(res))]

            @jax.jit
            def vjp(leaves, cts):
                diff_arrays, all_arrays, lrs_, key_ = leaves
                outs, pull = jax.vjp(lambda d: results_of(d, all_arrays, lrs_, key_),
                                     diff_arrays)
                cts = [jnp.zeros_like(o) if c is None else c for o, c in zip(outs, cts)]
                return pull(cts)[0]
            entry.vjp[tuple(diff)] = vjp
        tensor_flat = [t for t in flat if t is not None]
        edges = [edge_of(state.owners[id(state.storages[i])]) for i in diff]
        node = Node("CompiledFunctionBackward", edges,
                    ([state_arrays[i] for i in diff], state_arrays, lrs, rng_key),
                    None, lambda leaves, cts, _v=vjp: list(_v(leaves, cts)),
                    [(t.shape, t.dtype) for t in tensor_flat], None)
        for j, t in enumerate(tensor_flat):
            if t.dtype.is_floating_point or t.dtype.is_complex:
                t._grad_fn = node
                t._output_nr = j


def _lr_value(lr):
    """An lr as a traced input: weakly typed, so a float32 model's update stays float32."""
    if isinstance(lr, Tensor):
        return lr._data
    return jnp.asarray(lr)


def _data_dependent_message(exc):
    here = os.path.dirname(__file__)
    jax_dir = os.path.dirname(jax.__file__)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(here) and not f.filename.startswith(jax_dir)]
    where = f"{frames[-1].filename}:{frames[-1].lineno} (`{frames[-1].line}`)" if frames \
        else "unknown location"
    return (f"torchish.compile: the compiled code at {where} converts a tensor value to a "
            "Python value (e.g. `if x > 0`, `.item()`, `.tolist()`, `int(x)`), which depends "
            "on data and cannot be traced. Move it out of the compiled function, or use "
            "tensor ops such as torch.where.")


class CompiledFunction:
    """`torchish.compile(fn)`: a whole step (forward, backward, optimizer) as one jit."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._compiled = _Compiled(fn, lambda: (fn,))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


class CompiledModule:
    """`torchish.compile(module)`: the module's forward as one differentiable computation."""

    def __init__(self, module):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled",
                           _Compiled(module, lambda: (module,), forward_only=True))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return "OptimizedModule(\n  (_orig_mod): " + \
            repr(self._orig_mod).replace("\n", "\n  ") + "\n)"
