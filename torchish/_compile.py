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
registered after the first call (PyTorch does not guard them either), attributes first added
to a submodule later, rebinding a builtin name, and scalars inside lists/dicts the function
reads.

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
cannot be traced: where PyTorch would break the graph, that signature runs eagerly, silently
as PyTorch breaks it (a log record, once, for `.item()`; `torch._dynamo.utils.counters` counts
the breaks; `fullgraph=True`: `Unsupported` naming the line instead, as PyTorch raises);
random ops use JAX's PRNG keyed from the generator (other masks than eager's, as PyTorch's
compiled dropout draws other masks than its eager one; reproducible under `manual_seed`).

Gradients. A compiled forward differentiates the storages it reads; an input that views its
storage gets the gradient of the elements it reads. A tensor needing grad whose view reads
some element twice (`base.expand(4, 3)`) gets a slot of its own holding its view's values,
so its gradient is per viewed element, as PyTorch's (`_Plan.spread`). An argument made by a
graph (an activation) or a leaf needing grad without a `.grad` yet is read per call like a
batch, so a new one each call does not retrace; the `.grad` a step gives such a leaf is
written back. A view argument (a slice of a dataset, a row of a weight) is read per call into
a slot of its own holding its values, its gradient going to the view's node; where the step
writes into it, or it shares a storage with state or another argument, its storage is read
instead (guarded). Other tensor arguments needing grad are guarded like state. A compiled
Module's forward (no grad mode inside) carries no `.grad`s.

Optimizer state. PyTorch creates an optimizer's state before tracing its step, so a compiled
`opt.step()` compiles once; where a trace creates the state of parameters that had none, it
is created eagerly with the optimizer's `_prepare` and the step traced again.

Scalars. PyTorch 2.13 captures `.item()` (and `.tolist()` of an integer tensor) in the graph
with `fullgraph=True` or `torch._dynamo.config.capture_scalar_outputs`, else breaks the graph
there. So do we: captured, `.item()` gives a 0-d tensor of the traced value (see
`_captured_item`) that later tensor math uses; returned from the function it is a Python
number again. `float(t)`, `int(t)` and `bool(t)` must return real Python numbers, so they
cannot be traced (nor can `if`/`range` on a captured scalar): `Unsupported`, or eager. With
`fullgraph=True` PyTorch traces `float(t)`/`int(t)` as symbolic numbers and raises `UserError`
only where Python compares them: a second trace with symbolic stand-ins for them finds that
(`_Compiled._guard_on_number`); otherwise that signature runs eagerly.

Backends. Every backend name PyTorch ships compiles with XLA. A custom backend (a callable,
or a name from `torch._dynamo.register_backend`) is called once per traced signature, as
PyTorch calls it once per graph, with a `GraphModule` stand-in and example input tensors; the
callable it returns (typically `gm.forward`) runs every call of that signature. torchish has
no FX graph, so `gm.graph`/`gm.code` raise NotImplementedError; `gm.jaxpr` is the traced
program. A backend that raises gives `BackendCompilerFailed` (with
`torch._dynamo.config.suppress_errors`: eager instead); nothing is donated to its callable.

Modules: this file is the public front (`compile`, `CompiledFunction`, `OptimizedModule`,
`reset`, `graph_break`); `_compile_plan` walks the state and guards it, `_compile_step` (with
`_compile_trace`) traces, compiles and runs a signature, `_compile_writeback` puts its outputs
back onto the objects, and `_compile_capture` holds the graph-break errors, `print()` and
captured scalars.
"""
import functools

from ._compile_capture import CompileError, _SilentBreak, _EXPLAIN, _user_stack  # noqa: F401
from ._compile_plan import _Plan  # noqa: F401  (torchish.func walks with it)
from ._compile_step import _Compiled, _EAGER, _ALL_COMPILED  # noqa: F401
from ._compile_trace import _TRACING  # noqa: F401

__all__ = ["compile", "CompileError"]


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
    patch_torch()
    settings = dict(fullgraph=fullgraph, backend=custom, dynamic=dynamic,
                    recompile_limit=recompile_limit)
    from .nn import Module
    if isinstance(model, Module):
        return CompiledModule(model, **settings)
    return CompiledFunction(model, **settings)


@functools.cache
def patch_torch():
    """What PyTorch's dynamo changes globally the first time it prepares to compile (a
    `torch.compile` that is not disabled, or `torch.cond` on a tensor): it turns off the
    distributions' default argument validation, so invalid parameters no longer raise."""
    from .distributions import Distribution
    Distribution.set_default_validate_args(False)


_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

# ---- torch.compiler.reset, torch._dynamo.graph_break ------------------------------------------

def reset():
    """Forget every compiled signature: the next call of each compiled function traces
    (and calls its custom backend) again."""
    for c in list(_ALL_COMPILED):
        c.reset()


def graph_break(msg=""):
    """`torch._dynamo.graph_break()`: inside a trace, PyTorch ends the graph there; torchish
    runs the signature eagerly (no warning), or raises Unsupported with `fullgraph=True`
    (`torch._dynamo.explain` notes it and traces on)."""
    if _TRACING[0]:
        reason = (f"Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph "
                  f"break. Message: {msg or None}\n  Hint: Remove the "
                  "`torch._dynamo.graph_break()` call.")
        if _EXPLAIN[0] is not None:
            _EXPLAIN[0].add(reason, _user_stack())
            return
        raise _SilentBreak(reason)


class CompiledFunction:
    """`torchish.compile(fn)`: a whole step (forward, backward, optimizer) as one jit."""
    _compile_bookkeeping = True

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
