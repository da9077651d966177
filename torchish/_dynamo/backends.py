"""`torch._dynamo`'s backend registry, the `GraphModule` custom backends get, `explain`, and
the check of inductor `options`.

Every name PyTorch ships (`inductor`, `eager`, `aot_eager`, `cudagraphs`, ...) compiles with XLA
in torchish. A *custom* backend, a callable `backend(gm, example_inputs)` given to
`torch.compile` or registered here, is called once per trace (PyTorch calls it once per graph)
with a `GraphModule` stand-in, and the callable it returns runs every call of that signature
(see `_compile.py`).
"""
import dataclasses
import functools

from .._tensor import Tensor, _wrap

__all__ = ["register_backend", "lookup_backend", "list_backends", "ExplainOutput",
           "GraphCompileReason", "GraphModule"]

# PyTorch's shipped backends and their tags (`list_backends()` leaves out debug/experimental)
_BUILTIN = dict.fromkeys(("cudagraphs", "inductor", "openxla", "tvm"), ())
_BUILTIN.update(dict.fromkeys((
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "dynamo_accuracy_minifier_backend", "dynamo_minifier_backend", "eager", "eager_debug",
    "eager_noexcept", "invoke_subgraph", "openxla_eval", "pre_dispatch_eager", "ts"),
    ("debug",)))
_CUSTOM = {}   # name -> (compiler_fn, tags), from register_backend


def register_backend(compiler_fn=None, name=None, tags=()):
    """Make `compiler_fn(gm, example_inputs)` usable as `torch.compile(backend=name)`
    (`name` defaults to its `__name__`); usable as a decorator, with or without arguments."""
    if compiler_fn is None:
        return functools.partial(register_backend, name=name, tags=tags)
    if not callable(compiler_fn):
        raise AssertionError(f"expected a callable backend, got {type(compiler_fn)}")
    name = name or compiler_fn.__name__
    if name in _CUSTOM or name in _BUILTIN:
        raise AssertionError(f"duplicate name: {name}")
    _CUSTOM[name] = (compiler_fn, tuple(tags))
    return compiler_fn


def is_builtin(backend):
    return isinstance(backend, str) and backend in _BUILTIN


def lookup_backend(compiler_fn):
    """A backend name as its callable (shipped names: a stand-in returning `gm.forward`)."""
    if not isinstance(compiler_fn, str):
        return compiler_fn
    if compiler_fn in _CUSTOM:
        return _CUSTOM[compiler_fn][0]
    if compiler_fn in _BUILTIN:
        return _named(compiler_fn)
    from .exc import InvalidBackend
    raise InvalidBackend(compiler_fn)


@functools.lru_cache(maxsize=None)
def _named(name):
    """A shipped backend as a callable: the traced step as XLA compiles it."""
    def backend(gm, example_inputs, **kwargs):
        return gm.forward
    backend.__name__ = backend.__qualname__ = name
    return backend


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names (shipped and registered) whose tags avoid `exclude_tags`."""
    exclude = set(exclude_tags or ())
    tags = dict(_BUILTIN)
    tags.update((k, t) for k, (_, t) in _CUSTOM.items())
    return sorted(k for k, t in tags.items() if not exclude.intersection(t))


@dataclasses.dataclass
class GraphCompileReason:
    """Why a graph ended: `reason` (the break's message) and the user frame that caused it."""
    reason: str
    user_stack: list
    graph_break: bool = True


@dataclasses.dataclass
class ExplainOutput:
    """`torch._dynamo.explain(fn)(*args)`: what compiling `fn` for these arguments gave.

    torchish traces the whole function as one program. Where PyTorch would break the graph and
    go on (a `print()` of constants, `.item()` without `capture_scalar_outputs`,
    `graph_break()`), the trace notes the break and goes on; where it cannot (a Python `if` on
    a tensor, printing a tensor), it stops there and the function runs eagerly. The counts
    follow PyTorch's: the code between two breaks is a graph when it holds ops, a graph that
    ends at a break gives a break reason (PyTorch's reason text for those breaks), and there
    is one break fewer than graphs (after a stop, the rest is taken as one more graph).
    `ops_per_graph` names each torchish op by the XLA primitives it lowered to, cut where the
    graphs end (after a stop, the last graph lists the ops the eager run did past it, by
    PyTorch's op names); `graphs` holds one `GraphModule` stand-in for the whole trace (none after a
    stop). Guards are not listed."""
    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = None
    out_guards: list = None
    compile_times: str = None

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, br in enumerate(self.break_reasons, 1):
            lines += [f"  Break Reason {i}:", f"    Reason: {br.reason}", "    User Stack:"]
            lines += [f"      {frame}" for frame in br.user_stack]
        if self.ops_per_graph is not None:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph, 1):
                lines.append(f"  Ops {i}:")
                lines += [f"    {o}" for o in ops]
        text = "\n".join(lines) + "\n"
        if self.out_guards is not None:
            text += "Out Guards:\n" + "".join(f"  Guard {i}:\n    {g}"
                                              for i, g in enumerate(self.out_guards, 1))
        if self.compile_times is not None:
            text += f"Compile Times: {self.compile_times}\n"
        return text


def explain(fn, args, kwargs):
    """`torch._dynamo.explain(fn)(*args, **kwargs)`: trace `fn` as `fullgraph=True` would
    and describe the outcome (see `ExplainOutput`). `fn` runs once, as in PyTorch: compiled,
    or eagerly where the trace stops."""
    from .._compile import compile, _EAGER
    from .._compile_capture import _Breaks
    from .exc import Unsupported
    compiled = compile(fn, fullgraph=True)
    breaks = compiled._compiled.breaks = _Breaks()
    eager = None   # the ops of the eager run, after a stop
    try:
        compiled(*args, **kwargs)
    except Unsupported as exc:
        eager = _eager_ops(fn, args, kwargs)
        if not (breaks.stopped or breaks.rerun):   # (stopped before the user's code ran)
            breaks.found.append((str(exc), list(exc.user_stack), None))
            breaks.stopped = True
        entries = []
    else:
        entries = [e for e in compiled._compiled.cache.values() if e is not _EAGER]
    ops = [_op_names(e.jaxpr.jaxpr.eqns) for e in entries]
    if not breaks.found:
        return ExplainOutput([GraphModule(e) for e in entries], len(entries), 0, [],
                             sum(map(len, ops)), ops)
    ends, reasons = breaks.graphs()
    if len(ops) == 1 and None not in ends and ends[-1] == len(ops[0]):
        # the one trace, cut where PyTorch's graphs end
        ops = [ops[0][a:b] for a, b in zip([0] + ends[:-1], ends)]
    elif breaks.eqns is not None:
        # the trace up to where it stopped (or, printing a tensor, ran eagerly), cut the same
        # way; after a stop, the eager run's later ops are the last graph's
        names = _op_names(breaks.eqns)
        bounds = ends[:-1] if breaks.stopped else ends
        if None not in bounds:
            ops = [names[a:b] for a, b in zip([0] + bounds[:-1], bounds)]
            if breaks.stopped:
                ops.append(eager[len(names):] if eager and len(eager) > len(names) else [])
    reasons = [GraphCompileReason(r, stack) for r, stack in reasons]
    return ExplainOutput([GraphModule(e) for e in entries], len(ends), len(ends) - 1, reasons,
                         sum(map(len, ops)), ops)


def _eager_ops(fn, args, kwargs):
    """Run `fn` eagerly (as explain does after a stop), naming the ops it ran (PyTorch's op
    names, from the profiler; None while the user's own profile records)."""
    from .. import profiler
    if profiler.ACTIVE[0] is not None:
        fn(*args, **kwargs)
        return None
    with profiler.profile() as prof:
        fn(*args, **kwargs)
    return [e.name.removeprefix("aten::") for e in prof.events()
            if getattr(e, "cpu_parent", None) is None]


def _op_names(eqns):
    """Each torchish op of a trace (one jitted call each) named by the XLA primitives it
    lowered to, e.g. `mul`, `sin`, `reduce_max+sub+exp+reduce_sum+div`."""
    names = []
    for eqn in eqns:
        inner = eqn.params.get("jaxpr")
        if inner is not None and eqn.primitive.name in ("jit", "pjit"):
            prims = [e.primitive.name for e in getattr(inner, "jaxpr", inner).eqns
                     if e.primitive.name != "convert_element_type"]
            names.append("+".join(prims) or eqn.params.get("name", "jit"))
        else:
            names.append(eqn.primitive.name)
    return names


class NoFXGraphError(NotImplementedError, AttributeError):
    """(an AttributeError too: `hasattr(gm, "graph")` is False)"""


class GraphModule:
    """What a custom backend gets where PyTorch passes an FX `GraphModule`: one traced
    signature of the compiled function. torchish has no FX graph (the trace is a JAX program),
    so `graph` and `code` raise NotImplementedError; `jaxpr` is the traced program and
    `print_readable()` prints it. `forward(*example_inputs)` (or calling it) runs the
    XLA-compiled program on tensors like the `example_inputs` the backend got (one per
    storage the step reads or writes: arguments, parameters, buffers, optimizer state,
    gradients) and returns all its outputs as a tuple of tensors (results first, then the new
    state), which torchish writes back. The backend is called once per trace and what it
    returns (typically `gm.forward`, or a wrapper calling it) runs on every call."""

    def __init__(self, entry):
        self._entry = entry
        self._call_args = None   # this call's learning rates and random key
        self.compiled = None

    @property
    def jaxpr(self):
        return self._entry.jaxpr

    @property
    def graph(self):
        raise NoFXGraphError(
            "torchish.compile has no FX graph: a custom backend gets the traced step as a JAX "
            "program (`gm.jaxpr`, `gm.print_readable()`) and can run it with `gm.forward`.")

    code = graph

    def print_readable(self, print_output=True):
        text = str(self._entry.jaxpr)
        if print_output:
            print(text)
        return text

    def forward(self, *inputs):
        if self._call_args is None:
            raise RuntimeError("a GraphModule of torch._dynamo.explain's result only describes "
                               "the trace (`jaxpr`): it does not run")
        lrs, key = self._call_args
        arrays = [t._data if isinstance(t, Tensor) else t for t in inputs]
        entry = self._entry
        return tuple(map(_wrap, entry.unpermute(entry.executable(*arrays, *lrs, key))))

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def run_backend(self, arrays, lrs, key):
        """One call through the backend's callable: its tensors back as arrays."""
        self._call_args = (lrs, key)
        outs = self.compiled(*map(_wrap, arrays))
        return [t._data if isinstance(t, Tensor) else t for t in outs]

    def __repr__(self):
        return "GraphModule()"


def check_inductor_options(options):
    """`options=` as PyTorch's inductor checks it: known names (`-` read as `_`), values of
    the setting's type."""
    if not options:
        return
    from ._inductor_options import OPTIONS
    for key, value in options.items():
        attr = key.replace("-", "_")
        if attr not in OPTIONS:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{list(OPTIONS)}")
        kind = OPTIONS[attr]
        if kind is not None and not isinstance(value, kind):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(value).__name__} "
                               f"should be {kind.__name__}")
