"""`torch.cond` and `torch.while_loop`: control flow on tensor values that `torchish.compile`
can trace. Eagerly they run the branch (or loop) that the values pick. Inside a trace, where
the predicate is a JAX tracer, cond runs both branches on the tape and selects each output
with `where`, and while_loop becomes `jax.lax.while_loop`.

PyTorch's eager cond traces both branches before it runs one (with dynamo), so it reports the
errors of either branch, and its backward gives zeros to every tensor requiring grad that only
the branch not taken uses (operands, a module's parameters reached through closures). Eagerly
we therefore also run the branch not taken, aside (its random draws undone), to check its
outputs and to find those tensors on its tape; they become extra inputs of the one
CondAutogradOpBackward node over the taken branch's outputs, whose gradient for them is zero.

A branch may not change tensors that existed before it (operands, closures) nor return them or
views of them (PyTorch's "aliasing"): each run starts a storage epoch, as torch.func's
transforms do, so in-place ops refuse older storages and outputs tell their age.
A Python predicate just calls the branch, as PyTorch does."""
import jax

from . import _storage, autograd
from ._ops.call_jax import call_jax
from ._tensor import Tensor


def _function_nodes():
    """PyTorch's cond and while_loop are autograd.Functions: their nodes print as
    `<torch.autograd.function.CondAutogradOpBackward object at ...>`."""
    from .autograd import graph
    for name in ("CondAutogradOpBackward", "WhileLoopAutogradOpBackward"):
        graph._NODE_CLASSES.setdefault(name, type(name, (graph.Node,), {
            "__slots__": (), "__module__": "torch.autograd.function"}))


_function_nodes()


def where(condition, a, b):
    from ._ops.indexing import where as _where
    return _where(condition, a, b)


def _flatten(tree):
    leaves, treedef = jax.tree_util.tree_flatten(
        tree, is_leaf=lambda v: v is None or isinstance(v, Tensor))
    return leaves, treedef


# ---- PyTorch's errors (dynamo's, raised from its eager path too) -------------------------

_HEAD = ("This higher order operator doesn't work unless it is captured completely with "
         "torch.compile. Got graph break/error:\n\n")
_EAGER_HINT = ("Your code may result in an error when running in eager. Please double check "
               "that your code doesn't contain a similar error when actually running "
               "eager/uncompiled. You can do this by removing the `torch.compile` call, or by "
               "using `torch.compiler.set_stance(\"force_eager\")`. ")


def _exc():
    from ._dynamo import exc   # (late: _dynamo imports _compile, which imports us)
    return exc


def _graph_break(op, title, explanation, hints=(_EAGER_HINT,), context=""):
    lines = [title, f"  Higher Order Operator: torch.{op}", f"  Explanation: {explanation}"]
    lines += [f"  Hint: {h}" for h in hints]
    return _exc().UncapturedHigherOrderOpError(
        _HEAD + "\n".join(lines) + f"\n\n  Developer debug context: {context}\n")


def _aliasing(op):
    return _graph_break(
        op, "Encountered aliasing during higher order op tracing",
        f"Higher order ops do not support aliasing. Found in torch.{op}.",
        ("Replace `return input` with `return input.clone()` to avoid aliasing.",
         "Consider using the debug context to change user code to avoid aliasing.",
         "Please open an issue."), "Input-to-output or output-to-output aliasing detected")


def _mutation(op):
    return _graph_break(
        op, "Encountered input mutation during higher order op tracing",
        f"Higher order ops do not support input mutation. Found in torch.{op}.",
        ("Consider using the debug context to change user code to avoid mutation.",
         "Please open an issue."), "Input mutation detected")


def _fake_call_error(op, inner):
    """dynamo's TorchRuntimeError for an error its fake-tensor run of the op raised."""
    return _exc().TorchRuntimeError(
        "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node "
        f"with fake tensors: call_function {op}(...): got {inner!r}\n  Hint: {_EAGER_HINT}\n\n"
        "  Developer debug context: \n")


def _type_name(v):
    # (PyTorch's check sees its fake tensors)
    return ("<class 'torch._subclasses.fake_tensor.FakeTensor'>" if isinstance(v, Tensor)
            else repr(type(v)))


def _fake(t):
    """How PyTorch prints one of its fake tensors (the metadata its messages show)."""
    extra = "" if t.dtype is _default_dtype() else f", dtype={t.dtype}"
    return f"FakeTensor(..., size={tuple(t.shape)}{extra})"


def _default_dtype():
    from ._dtype import get_default_dtype
    return get_default_dtype()


# ---- running one branch ----------------------------------------------------------------

def _storage_of(t):
    s = t._storage
    return getattr(s, "root", None) or s   # (a dtype view's RetypedStorage: its root's)


class _Run:
    """One call of a branch (or cond_fn / body_fn) with PyTorch's checks: its flat outputs,
    their structure, and where its tape starts (`seq0`)."""

    def __init__(self, op, fn, args, aside=False, grad=None):
        from .autograd import graph
        versions = [t._version for t in args if isinstance(t, Tensor)]
        self.seq0 = next(graph._SEQ)
        _storage.EPOCH[0] += 1
        epoch = _storage.EPOCH[0]
        _storage.TRANSFORM_EPOCHS.append(epoch)   # in-place ops refuse older storages
        restore = _set_aside() if aside else None
        try:
            with autograd.grad_mode.set_grad_enabled(
                    autograd.grad_mode.is_grad_enabled() if grad is None else grad):
                out = fn(*args)
        except RuntimeError as e:
            if str(e).startswith("During a grad (vjp, jvp, grad, etc) transform"):
                raise _mutation(op) from None
            if isinstance(e, _exc().TorchDynamoException):
                raise
            # (dynamo meets it running the branch on fake tensors; its name for the op that
            # raised is not known here)
            raise _fake_call_error("...", e) from e
        finally:
            _storage.TRANSFORM_EPOCHS.pop()
            if restore is not None:
                restore()
        if versions != [t._version for t in args if isinstance(t, Tensor)]:
            raise _mutation(op)
        self.out = out
        self.leaves, self.tree = _flatten(out)
        for v in self.leaves:
            if v is None:
                raise _graph_break(op, f"torch.{op}: unsupported branch return type (constant "
                                   "non-int)", "Constants returned from branches must be ints.")
            if not isinstance(v, (Tensor, int)):
                raise _graph_break(op, "HOP body output unsupported", "HigherOrderOperator "
                                   "body's output must consist of tensors or ints/bools only "
                                   f"but got {type(v)}.")
        seen = set()
        for v in self.leaves:
            if isinstance(v, Tensor):
                s = _storage_of(v)
                if getattr(s, "epoch", epoch) < epoch or id(s) in seen:
                    raise _aliasing(op)
                seen.add(id(s))

    def reached(self):
        """The tensors from before the run that require grad and that its outputs' tape
        reaches (operands, closures: what PyTorch's cond lifts into inputs)."""
        from .autograd.graph import AccumulateGrad, edge_of
        found, seen = {}, set()
        stack = [e[0] for e in (edge_of(v) for v in self.leaves if isinstance(v, Tensor))
                 if e is not None]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            inputs = getattr(node, "_inputs", None) or ()
            for i, e in enumerate(getattr(node, "_edges", None) or ()):
                if e is None:
                    continue
                if isinstance(e[0], AccumulateGrad) or getattr(e[0], "_seq", -1) < self.seq0:
                    t = inputs[i] if i < len(inputs) else None
                    if isinstance(t, Tensor) and t.requires_grad:
                        found.setdefault(id(t), t)
                else:
                    stack.append(e[0])
        return list(found.values())


def _set_aside():
    """Keep the default generator's state: the branch not taken draws nothing in PyTorch
    (dynamo only traces it). Returns the function that restores it."""
    from .random import current_default
    gen = current_default()
    engine = gen._engine
    gen._engine = engine.clone()

    def restore():
        gen._engine = engine
    return restore


# ---- cond ----------------------------------------------------------------------------

def _check_binds(op, fn, args):
    """dynamo's error for a branch whose parameters do not take the operands."""
    import inspect
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        name = getattr(fn, "__name__", type(fn).__name__)
        raise _graph_break(op, "failed to bind arguments when attempting to inline",
                           f"Argument mismatch when attempting to trace function {name}.",
                           context=f"func={name!r}") from None
    except ValueError:   # (no signature to check: a builtin)
        pass


def _on_leaves(fn, tree):
    """`fn` over the operands' flat tensors (the branches take the nested operands)."""
    return lambda *leaves: fn(*jax.tree_util.tree_unflatten(tree, list(leaves)))


def _merge_check(a, b):
    """PyTorch's checks when it merges the two branches' outputs (after both ran)."""
    if a.tree != b.tree:
        raise _graph_break("cond", "torch.cond: differing branch outputs",
                           "Expected branches to return the same pytree structure.",
                           context=f"true_spec: {a.tree}, false_spec: {b.tree}, "
                                   "same_spec: False")
    for x, y in zip(a.leaves, b.leaves):
        if type(x) is int and type(y) is int:
            continue
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)):
            raise _fake_call_error("cond", AssertionError(
                f"expected both a and b to be FakeTensor, got a={_type_name(x)}, "
                f"b={_type_name(y)}"))
        for what, p, q in (("dim", x.dim(), y.dim()), ("dtype", x.dtype, y.dtype)):
            if p != q:
                raise _fake_call_error("cond", RuntimeError(
                    "When merging two branches' output in torch.cond,  expected same "
                    f"{what} but got {p} and {q}."))


def cond(pred, true_fn, false_fn, operands=()):
    if isinstance(pred, (bool, int, float)):
        return (true_fn if pred else false_fn)(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    leaves, tree = jax.tree_util.tree_flatten(   # (None is a leaf to PyTorch's pytree here)
        operands, is_leaf=lambda v: v is None or isinstance(v, Tensor)) \
        if isinstance(operands, (tuple, list)) else ([None], None)
    if not all(isinstance(t, Tensor) for t in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    for fn in (true_fn, false_fn):
        _check_binds("cond", fn, operands)
    true_fn, false_fn = _on_leaves(true_fn, tree), _on_leaves(false_fn, tree)
    operands = tuple(leaves)
    from ._compile import patch_torch
    patch_torch()
    value = pred._data.reshape(())
    traced = isinstance(value, jax.core.Tracer)
    taken = True if traced else bool(value)
    grad = autograd.grad_mode.is_grad_enabled()
    runs = {}
    for side, fn in ((True, true_fn), (False, false_fn)):   # (PyTorch traces true_fn first)
        runs[side] = _Run("cond", fn, operands, aside=not traced and side != taken)
    _merge_check(runs[True], runs[False])
    if traced:   # both branches are on the tape: `where` picks each output
        flag = pred.reshape(()).bool()
        outs = [a if type(a) is int and a == b else
                where(flag, _as_tensor(a, pred), _as_tensor(b, pred))
                for a, b in zip(runs[True].leaves, runs[False].leaves)]
        return jax.tree_util.tree_unflatten(runs[True].tree, outs)
    run, other = runs[taken], runs[not taken]
    outs = list(run.leaves)
    tensors = [i for i, v in enumerate(outs) if isinstance(v, Tensor)]
    if tensors and grad:
        # the untaken branch's inputs ride along with a zero gradient (PyTorch's zeros)
        extra = other.reached()
        inputs = [outs[i] for i in tensors] + extra
        if any(t.requires_grad for t in inputs):
            n = len(tensors)
            new = call_jax("CondAutogradOpBackward", lambda *a: a[:n], inputs,
                           key=("cond", n, len(extra)))
            for i, t in zip(tensors, new):
                outs[i] = t
    return jax.tree_util.tree_unflatten(run.tree, outs)


def _as_tensor(v, like):
    if isinstance(v, Tensor):
        return v
    from ._ops.creation_data import tensor
    return tensor(v, device=like.device)


# ---- while_loop --------------------------------------------------------------------------

def _check_pred(run, symbolic):
    """cond_fn's result: a bool scalar tensor (a constant Python bool loops forever or never,
    which PyTorch refuses when it is True; with Python ints carried, dynamo makes them
    symbolic, so a bool from them is a real condition)."""
    p = run.out
    if isinstance(p, bool):
        if symbolic:
            return p
        if p:
            raise _graph_break(
                "while_loop", "torch.while_loop: infinite loop detected",
                "Infinite loop detected because while_loop's cond_fn always returns the same "
                "value True.")
        return False
    if not isinstance(p, Tensor) or p.dtype is not _bool() or p.dim() != 0:
        shape = p.shape if isinstance(p, Tensor) else type(p)
        raise _graph_break(
            "while_loop", "torch.while_loop: unsupported cond_fn return type",
            f"Expected cond_fn to return a scalar tensor or a bool but got {shape}.")
    return p


def _bool():
    from ._dtype import bool as b
    return b


def _check_body(body, carried):
    """body_fn's outputs against the carried inputs (their number, shapes and dtypes)."""
    lhs, rhs = body.leaves, carried
    show = lambda vs: "[" + ", ".join(_fake(v) if isinstance(v, Tensor) else repr(v)  # noqa
                                      for v in vs) + "]"
    if len(lhs) != len(rhs):
        raise _exc().UncapturedHigherOrderOpError(
            "Expected body_fn_output and carried_inputs to have same number of outputs but "
            f"got lhs:{show(lhs)} and rhs:{show(rhs)}\n  Higher Order Operator: "
            "torch.while_loop\n")
    for i, (a, b) in enumerate(zip(lhs, rhs)):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            continue
        diffs = [f"'{what}: {p} vs {q}'" for what, p, q in
                 (("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype)) if p != q]
        if diffs:
            raise _exc().UncapturedHigherOrderOpError(
                "Expected body_fn_output and carried_inputs to have same metadata but found:\n"
                f"pair[{i}] differ in {', '.join(diffs)}, where lhs is {_fake(a)} and rhs is "
                f"{_fake(b)}\n  Higher Order Operator: torch.while_loop\n")


def while_loop(cond_fn, body_fn, carried_inputs):
    """`carried = body_fn(*carried)` while `cond_fn(*carried)`; eagerly its outputs get one
    WhileLoopAutogradOpBackward node, as PyTorch's."""
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if isinstance(carried_inputs, Tensor) and carried_inputs.dim() == 0:
        raise AssertionError("Can't unpack scalar tensors.")   # (dynamo unpacks the others)
    carried = tuple(carried_inputs)
    leaves, tree = _flatten(carried)
    bad = [v for v in leaves if not isinstance(v, (Tensor, int))]
    if bad:
        raise AssertionError(
            f"{list(carried)} can only be of (<class 'torch.Tensor'>, <class 'int'>, "
            "<class 'torch.SymInt'>) but got (" +
            ", ".join("<class 'torch.Tensor'>" if isinstance(v, Tensor) else repr(type(v))
                      for v in leaves) + ")")
    for fn in (cond_fn, body_fn):
        _check_binds("while_loop", fn, carried)
    if any(isinstance(v, Tensor) and isinstance(v._data, jax.core.Tracer) for v in leaves):
        return _traced_while(cond_fn, body_fn, carried, leaves)
    unflat = lambda vs: jax.tree_util.tree_unflatten(tree, list(vs))  # noqa: E731
    on_leaves = lambda fn: lambda *vs: fn(*unflat(vs))  # noqa: E731
    current, body, steps = leaves, None, 0
    symbolic = any(type(v) is int for v in leaves)
    while True:
        pred = _check_pred(_Run("while_loop", on_leaves(cond_fn), current), symbolic)
        if pred is False or not bool(pred):
            break
        body = _Run("while_loop", on_leaves(body_fn), current)
        if steps == 0:
            _check_body(body, leaves)
        current, steps = body.leaves, steps + 1
    if body is None:   # PyTorch traces body_fn even when it never runs
        body = _Run("while_loop", on_leaves(body_fn), leaves, aside=True, grad=False)
        _check_body(body, leaves)
        # (the outputs are new tensors, never the inputs themselves)
        current = [v.clone() if isinstance(v, Tensor) else v for v in leaves]
    tensors = [i for i, v in enumerate(current) if isinstance(v, Tensor)]
    outs = list(current)
    if tensors and autograd.grad_mode.is_grad_enabled() and any(
            outs[i].requires_grad for i in tensors):
        new = call_jax("WhileLoopAutogradOpBackward", lambda *a: a,
                       [outs[i] for i in tensors], key=("while_loop", len(tensors)))
        for i, t in zip(tensors, new):
            outs[i] = t
    return jax.tree_util.tree_unflatten(body.tree, outs)


def _traced_while(cond_fn, body_fn, carried, leaves):
    """Inside a trace: `jax.lax.while_loop` over the flat carried values, cond_fn and body_fn
    checked as eagerly (once each, when JAX traces them)."""
    from ._ops.creation_data import from_jax
    device = next(v.device for v in leaves if isinstance(v, Tensor))
    _, tree = _flatten(carried)
    on_leaves = lambda fn: lambda *vs: fn(*jax.tree_util.tree_unflatten(tree, list(vs)))  # noqa
    body_tree = []

    def run(fn, arrays):
        with autograd.no_grad():
            args = [from_jax(a).to(device) for a in arrays]
            return _Run("while_loop", on_leaves(fn), args), args

    def on_cond(arrays):
        pred = _check_pred(run(cond_fn, arrays)[0], True)
        return jax.numpy.asarray(pred if isinstance(pred, bool) else pred._data)

    def on_body(arrays):
        body, args = run(body_fn, arrays)
        _check_body(body, args)
        body_tree[:] = [body.tree]
        return tuple(v._data if isinstance(v, Tensor) else jax.numpy.asarray(v)
                     for v in body.leaves)
    result = jax.lax.while_loop(
        on_cond, on_body,
        tuple(t.detach()._data if isinstance(t, Tensor) else jax.numpy.asarray(t)
              for t in leaves))
    return jax.tree_util.tree_unflatten(body_tree[0],
                                        [from_jax(a).to(device) for a in result])
