"""The dispatcher every out-of-place op call goes through (`dispatch`; `dispatch_out` for
`out=`): collect the operands, hand the call to `__torch_function__` or autocast where they
apply, run the op's plan, wrap its outputs (a view op's outputs view their base), record the
node, and map forward-AD tangents."""
import jax

from .._eager_jit import eager_jit
from .. import _autocast, _meta, profiler
from .. import _dtype as dt
from .._device import CPU, has_accelerator
from .._reverse_constant import REVERSE
from .._tensor import Tensor, _alias, _wrap, requires_grad_of
from .._tensor_checks import _vmap_batched
from .._storage import InferenceStorage, LaidOutStorage
from .._views import base_view, extend
from .. import overrides as _tf
from ..autograd import grad_mode
from ..autograd.graph import edge_of
from .errors import NumberArgumentError
from .opdef import given
from .plans import _INT64_MAX, _INT64_MIN, _NP_SCALAR, _SCALARS, _get_plan, _kind_of, big_int
from .forward_refusals import forward_ad_refusal
from .recording import _record
from .torch_function import _PLAIN, _PROCEED, _TF_MODES, _torch_function

_BY_NP = dt._BY_NP
_AUTOCAST_ACTIVE = _autocast.ACTIVE
_META = _meta.ACTIVE


def _collect(targs, fuse_views=True):
    """(kinds, leaves, tensors, first tensor, whether any tensor requires grad).

    A view whose value is not at hand is passed as `(base array, offsets)` with its view
    template in the kind, so the plan reads it inside the op's own kernel: a transposed weight
    in `x @ w.t()` is never materialised, XLA folds the transpose into the dot.
    """
    kinds, leaves, tensors = [], [], []
    first = None
    needs_grad = False
    special = False   # an operand that may take part in __torch_function__
    for v in targs:
        if isinstance(v, Tensor):
            if type(v) is not Tensor and type(v) not in _PLAIN:
                special = True
            view = v._view
            if (fuse_views and view is not None and v._cache_base is not v._storage.array
                    and not v._stopgrad and type(v._storage) is not LaidOutStorage):
                base = v._storage.data
                template, offsets = view.split()
                kinds.append((_BY_NP[base.dtype], not view.size, template))
                leaves.append((base, offsets))
            else:
                data = v._data
                kinds.append((_BY_NP[data.dtype], data.ndim == 0))
                leaves.append(data)
            tensors.append(v)
            if first is None:
                first = v
            if v._grad_fn is not None or v._requires_grad:
                needs_grad = True
            elif view is not None and v._base is not None and requires_grad_of(v._base):
                # a view without history of a base requiring grad (made under no_grad, or
                # before the base's requires_grad_()): recorded, without its edge
                needs_grad = True
        elif isinstance(v, (list, tuple)):
            sub = []
            bad = None
            for x in v:
                if isinstance(x, Tensor):
                    if type(x) is not Tensor and type(x) not in _PLAIN:
                        special = True
                    data = x._data
                    sub.append((_BY_NP[data.dtype], data.ndim == 0))
                    leaves.append(data)
                    tensors.append(x)
                    if first is None:
                        first = x
                    if x._grad_fn is not None or x._requires_grad:
                        needs_grad = True
                    elif x._view is not None and x._base is not None and \
                            requires_grad_of(x._base):
                        needs_grad = True
                elif isinstance(x, _SCALARS):
                    sub.append(type(x))
                    leaves.append(x)
                    tensors.append(None)
                else:   # the plan raises the parser's TypeError, naming the argument
                    if hasattr(type(x), "__torch_function__"):   # a tensor-like
                        special = True
                    bad = ("?", type(v), len(sub), type(x))
                    break
            kinds.append(bad or ("L", tuple(sub)))
        else:
            k = _kind_of(v)
            if isinstance(k, type):
                if isinstance(v, _NP_SCALAR):
                    try:
                        v = dt.python_scalar(v)
                    except TypeError as exc:   # (the binding's error: see NumberArgumentError)
                        raise NumberArgumentError(str(exc)) from None
                if k is int and not _INT64_MIN <= v <= _INT64_MAX:   # (JAX cannot parse it)
                    k, v = big_int(v)
                kinds.append(k)
                leaves.append(v)
                tensors.append(None)
            else:
                kinds.append(k)
                if k is not None and hasattr(k[1], "__torch_function__"):   # a tensor-like
                    special = True
    return tuple(kinds), leaves, tensors, first, needs_grad, special


def _run(plan, leaves):
    """Run the compiled forward; JAX's errors become PyTorch's."""
    if profiler.ACTIVE[0] is not None:
        event = profiler.op_event(plan.op.name, lambda: plan.materialize(leaves))
        try:
            return _run_plan(plan, leaves)
        finally:
            profiler.close(event)
    return _run_plan(plan, leaves)


def _run_plan(plan, leaves):
    try:
        return plan.jit(*leaves)
    except (TypeError, ValueError) as exc:
        from .errors import on_one_device, translate
        if "incompatible devices" in str(exc):
            return plan.jit(*on_one_device(leaves))
        raise translate(plan, plan.materialize(leaves), exc) from None
    except jax.errors.JaxRuntimeError as exc:
        from .._functions import out_of_memory
        arrays = [x for x in jax.tree_util.tree_leaves(leaves) if isinstance(x, jax.Array)]
        device = next(iter(arrays[0].devices())).platform if arrays else "cpu"
        found = out_of_memory(exc, "cpu" if device == "cpu" else "cuda")
        if found is None:
            raise
        raise found from exc


def _check(definition, plan, targs, leaves):
    """The error the op's `check` finds in concrete operands, or None (also when traced,
    unless the op declares `check_traced`)."""
    if definition.check is None:
        return None
    if not definition.check_traced:
        for leaf in leaves:  # a fused view operand is `(base, offsets)`
            if isinstance(leaf, jax.core.Tracer) or (
                    isinstance(leaf, tuple) and isinstance(leaf[0], jax.core.Tracer)):
                return None
    return definition.check(plan.compute, *targs, *plan._var, **plan._kw)


def _collect_for(definition, targs, fuse_views=True):
    """`_collect` for a call of `definition`: a number operand its parser refuses is raised
    for the op's binding to word (or as the plain TypeError where it has none)."""
    try:
        return _collect(targs, fuse_views)
    except NumberArgumentError as exc:
        if definition.argcheck is None:
            raise TypeError(exc.message) from None
        exc.op = definition
        raise


def dispatch(definition, targs, sargs):
    kinds, leaves, tensors, first, needs_grad, special = _collect_for(definition, targs)
    if special or _TF_MODES:
        result = _torch_function(definition, targs, sargs)
        if result is not _PROCEED:
            return result
    if _AUTOCAST_ACTIVE[0] and definition.name in _autocast.NAMES:
        cast = _autocast_args(definition, targs, sargs)
        if cast is not None:   # the op runs on the cast arguments, autocast suspended
            return _autocast.suspended(dispatch, definition, *cast)
    plan = _get_plan(definition, sargs, kinds)
    record = needs_grad and definition.differentiable and grad_mode.GRAD_ENABLED[0]
    if record and _FUNC_LEVELS and _FUNC_LEVELS[-1].__class__ is _FORWARD:
        record = _records_in_forward(tensors)
    if definition.view is not None:
        # A view op computes no value: the view reads its base when (and where) it is used.
        steps = definition.view(*targs, *plan._var, **plan._kw)
        if steps is not None:
            if definition.multi_view:  # split/unbind/chunk: every output views the input
                outs = [_as_view(first, st) for st in steps]
                result = definition.returns(*outs) if definition.returns else tuple(outs)
            else:
                outs = None
                result = _as_view(first, steps)
            made = outs or [result]
            _finish_view(plan, leaves, tensors, kinds, made, record, result)
            if not record and _FUNC_LEVELS:
                _constants_in_transform(made)
            if needs_grad or first._creation is not None or not grad_mode.GRAD_ENABLED[0]:
                _view_creation(first, made, definition.multi_view, record)
            if FORWARD_AD[0]:
                _forward_tangents(plan, leaves, tensors, made)
            return result
    if _META[0] and _meta.involved(tensors):   # meta device: shapes only (see _meta.py)
        return _meta.dispatch(definition, plan, targs, leaves, tensors, kinds, record)
    error = _check(definition, plan, targs, leaves)
    if FUNC_FORWARD:   # (a torchish.func forward-mode transform tracing: func/_forward.py)
        _func_forward_refusal(plan, leaves)
    out = _run(plan, leaves)
    if error is not None:  # raised after the forward: shape and dtype errors come first
        raise error
    device = first._storage.device if first is not None else None
    if device is CPU and has_accelerator() and first.ndim == 0:  # a CPU scalar, CUDA others?
        device = next((t._storage.device for t in tensors
                       if t is not None and t._storage.device is not CPU), CPU)
    outs, result = wrap_result(definition, out, device)
    if definition.layout is not None:
        definition.layout(definition, tensors, outs, plan._kw)
    if record:
        _record(plan, leaves, tensors, outs, kinds)
    elif _FUNC_LEVELS:
        _constants_in_transform(outs)
    if FORWARD_AD[0]:
        _forward_tangents(plan, leaves, tensors, outs)
    return result


_FUNC_LEVELS = grad_mode.FUNC_LEVELS
_FORWARD = grad_mode.ForwardLevel


def _constants_in_transform(outs):
    """Under no_grad inside a `torchish.func` transform results are constants of the
    reverse-mode levels (the transform, if `grad`-like, and the tape around it), as PyTorch's;
    forward mode (`jvp`, `jacfwd`) sees through them."""
    if _FUNC_LEVELS[-1] is not False and not grad_mode.GRAD_ENABLED[0]:   # (False: internal)
        for o in outs:
            o._stopgrad = REVERSE


def _records_in_forward(tensors):
    """Whether an op records inside vmap/jvp/jacfwd (see `grad_mode.ForwardLevel`)."""
    if _FUNC_LEVELS[-1].jvp:
        return False
    return not any(t is not None and _vmap_batched(t._storage.array) for t in tensors)


# ---- forward AD: tangents through the op's forward (see autograd/forward_ad.py) -----------

FORWARD_AD = [False]   # inside a dual_level
FUNC_FORWARD = []   # the JAX traces of the torchish.func forward-mode transforms tracing


def _func_forward_refusal(plan, leaves, inplace=False):
    from ..func._forward import refuse
    refuse(plan, leaves, inplace)


def _forward_tangents(plan, leaves, tensors, outputs, inplace=False):
    """Give `outputs` the tangents the op maps its operands' tangents to; on the tape of the
    tangents and primals that require grad (forward-over-reverse), as PyTorch's."""
    from ..autograd.forward_ad import set_tangent, tangent_of
    tangents = [tangent_of(t) for t in tensors]
    mask = tuple(t is not None for t in tangents)
    if not any(mask):
        return
    jvp = plan.jvps.get(mask)
    if jvp is None:
        refusal = forward_ad_refusal(plan, inplace)
        if refusal is not None:
            raise refusal
        jvp = plan.jvps[mask] = _jvp_of(plan, mask)
    primals = plan.materialize(leaves)
    moving = [t for t in tangents if t is not None]
    outs = jvp(primals, [t._data for t in moving])
    outs = outs if isinstance(outs, (tuple, list)) else [outs]
    live = tuple(i for i, o in enumerate(outputs)
                 if o.dtype.is_floating_point or o.dtype.is_complex)
    made = [_wrap(outs[i], outputs[i]._storage.device) for i in live]
    inputs = list(tensors) + moving
    if made and grad_mode.GRAD_ENABLED[0] and any(
            t is not None and (t._grad_fn is not None or t._requires_grad) for t in inputs):
        _record_tangents(plan, mask, live, list(primals) + [t._data for t in moving],
                         inputs, made)
    for i, tangent in zip(live, made):
        set_tangent(outputs[i], tangent)


def _record_tangents(plan, mask, live, leaves, inputs, made):
    """One node for the tangents `made`, a function of the op's primals and tangents."""
    from .call_jax import call_jax_record
    jvp, n = plan.jvps[mask], len(leaves) - sum(mask)

    def tangents_of(*a):
        outs = jvp(list(a[:n]), list(a[n:]))
        outs = outs if isinstance(outs, (tuple, list)) else [outs]
        return [outs[i] for i in live]
    edges = [None if t is None else edge_of(t) for t in inputs]
    node = call_jax_record("JvpBackward", tangents_of, leaves, inputs, edges,
                           [(t.shape, t.dtype) for t in made], key=("tangents", plan, mask, live))
    for j, t in enumerate(made):
        t._grad_fn, t._output_nr = node, j


def _jvp_of(plan, mask):
    where = [i for i, m in enumerate(mask) if m]

    def tangents(primals, tangents):
        def fwd(*moving):
            args = list(primals)
            for i, value in zip(where, moving):
                args[i] = value
            return plan.fwd(*args)
        return jax.jvp(fwd, [primals[i] for i in where],
                       [t.astype(primals[i].dtype) for i, t in zip(where, tangents)])[1]
    return eager_jit(tangents)


def dispatch_out(definition, targs, sargs, out, name):
    """`torchish.<name>(..., out=out)`: the result, computed as without `out`, written into
    `out` in place (see `out_arg.write_out`); `out` (or the named tuple of outs) returned."""
    from . import out_arg
    if _tf.ARMED[0] and (_TF_MODES or _tf.overloaded(_tf._flat(targs + (out,)))):
        result = _torch_function(definition, targs, sargs)   # (before out's checks)
        if result is not _PROCEED:
            return result
    outs = out_arg.check_out(name, out, targs, multi=definition.returns is not None or None)
    if name in out_arg.DTYPE_FROM_OUT:
        if name in ("sum", "prod") and not given(sargs[definition.statics.index("dim")]):
            # only their `dim` overloads take out= in PyTorch
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            "(Tensor, out=Tensor)")
        i = definition.statics.index("dtype")
        if sargs[i] is None:  # PyTorch accumulates in out's dtype (inputs cast first)
            sargs = sargs[:i] + (outs[0].dtype,) + sargs[i + 1:]
        elif sargs[i] is not outs[0].dtype:
            raise RuntimeError(out_arg.expected_dtype(sargs[i], outs[0].dtype))
    result = out_arg.write_out(name, outs, dispatch(definition, targs, sargs))
    if name in out_arg.AUTOGEN_OUT:
        return out_arg.finish_autogen_out(name, outs, targs, result)
    return result


def _autocast_args(definition, targs, sargs):
    """(targs, sargs) as the active autocast region casts them, or None: no cast applies."""
    device_type = _autocast.device_type_of(targs)
    if device_type is None or not _autocast.enabled.get(device_type):
        return None
    policy = _autocast.policy_of(definition.name, device_type)
    if policy is None:
        return None
    if policy == _autocast.FP32_SET_OPT_DTYPE:
        i = definition.statics.index("dtype")
        if sargs[i] is None and _autocast.wants_fp32(targs, device_type):
            sargs = sargs[:i] + (dt.float32,) + sargs[i + 1:]
        return targs, sargs
    return tuple(_autocast.cast_values(policy, targs, device_type)), sargs


def _finish_view(plan, leaves, tensors, kinds, made, record, result):
    if record:
        node = _record(plan, leaves, tensors, made, kinds)
        if node is not None:
            node._is_view = True
        for o in made:
            o._view_vc = o._vc[0]
    return result


def _view_creation(src, made, multi, record):
    """Give views PyTorch's "creation meta" when not the default: ("no_grad",) or
    ("inference",) for a view made with grad mode off, ("multi", grad_fn name, output_nr) for
    split/unbind outputs, ("custom", ...) for a custom Function's (see autograd/function.py).
    Such a view may not be modified in place with grad mode on, and its history cannot be
    regenerated once its base is modified in place (`_creation_error`)."""
    prev = src._creation
    if prev is not None and prev[0] == "inference":
        meta = prev   # PyTorch keeps an inference-mode view's meta through every later view
    elif not grad_mode.GRAD_ENABLED[0]:
        if type(src._storage) is InferenceStorage:
            return   # (an inference tensor has no autograd metadata to keep it in)
        meta = ("inference",) if grad_mode._INFERENCE[0] else ("no_grad",)
    elif multi and record:
        for i, o in enumerate(made):
            if o._grad_fn is not None:
                o._creation = ("multi", o._grad_fn._name, i)
        return
    elif prev is None:
        return
    else:
        meta = prev
    for i, o in enumerate(made):
        if not _DIFFERENTIABLE[o.dtype]:
            continue
        if meta[0] in ("multi", "custom") and o._grad_fn is not None:
            # a view of such a view: named by its own grad_fn
            o._creation = (meta[0], o._grad_fn._name, i)
        else:
            o._creation = meta
        if o._view_vc is None:
            # the version it was made at: once its base changes, `Tensor.grad_fn` refuses
            o._view_vc = o._vc[0]


_DIFFERENTIABLE = {d: d.is_floating_point or d.is_complex for d in _BY_NP.values()}
_IS_BEING = "is being modified inplace"
_INDIRECT = "its base or another view of its base has been modified inplace"


def _creation_error(t, action):
    """PyTorch's error for modifying in place (`action`: `_IS_BEING`, or `_INDIRECT` for a
    view whose base changed) a view whose creation meta forbids it."""
    from ..autograd.graph import _op_name_of
    kind = t._creation[0]
    fn = t._grad_fn
    subject = action[:-len(" modified inplace")]
    if kind == "inference" or kind == "no_grad" or fn is None:
        head = "A view was created in" if fn is None else (
            f"Output {t._output_nr} of {_op_name_of(fn._name)} is a view of a view which was "
            "created in")
        if kind == "inference":
            msg = f"{head} inference mode and {subject} modified inplace in normal mode."
        else:   # (without a grad_fn, the view was made with grad mode off)
            msg = f"{head} no_grad mode and {subject} modified inplace with grad mode enabled."
    else:
        meta = t._creation
        msg = f"Output {meta[2]} of {_op_name_of(meta[1])} is a view and {action}."
    if kind == "multi":
        return RuntimeError(
            f"{msg} This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one.")
    if kind == "custom":
        return RuntimeError(
            f"{msg} This view was created inside a custom Function (or because an input was "
            "returned as-is) and the autograd logic to handle view+inplace would override the "
            "custom backward associated with the custom Function, leading to incorrect "
            "gradients. This behavior is forbidden. You can fix this by cloning the output of "
            "the custom Function.")
    block = "inference_mode" if kind == "inference" else "no_grad"
    return RuntimeError(
        f"{msg} Given that this use case is ambiguous and error-prone, it is forbidden. You "
        f"can clarify your code by moving both the view and the inplace either both inside "
        f"the {block} block (if you don't want the inplace to be tracked) or both outside (if "
        "you want the inplace to be tracked).")


def _as_view(src, steps):
    view = src._view
    if view is None:
        view = base_view(src._storage.data.shape)
    for step in steps:
        view = extend(view, step)
    t = _alias(src, view)
    t._cache, t._cache_base = None, None
    t._stopgrad = src._stopgrad   # a view of a detached tensor is detached too (when traced)
    return t



def wrap_result(definition, out, device):
    """Tensors for an op's computed output(s) on `device`: (the list of outputs, what the op
    returns: the single tensor, a tuple, or its `returns` structure)."""
    if isinstance(out, (tuple, list)):
        outs = [_wrap(o, device) for o in out]
        return outs, definition.returns(*outs) if definition.returns else tuple(outs)
    result = _wrap(out, device)
    return [result], result
