"""Recording a node's backward as graph nodes of its own (`create_graph=True`).

With `create_graph` the engine runs each node's pullback on Tensors so the gradients can be
differentiated again. PyTorch's gradient graph is made of the ops its derivative formulas use,
one node per gradient, with edges only to what that gradient depends on. We get the same shape
from the pullback itself: it is traced once with `jax.make_jaxpr` per (pullback, operand avals,
which operands require grad), and for every gradient it returns we find

- the operands it depends on (a forward walk over the jaxpr),
- whether it *is* one of them (add's gradient passes the incoming one through unchanged),
- the primitive that produces it, which names its node (`mul` -> MulBackward0) unless the
  forward op has a fused backward of its own in PyTorch (tanh -> TanhBackwardBackward0), or
  PyTorch's formula for that gradient ends in another op (prod -> MulBackward0, `_FUSED_AT`).

A gradient depending on no operand that requires grad is returned as a plain tensor, one that
is an operand is returned as that Tensor, and any other gets a node whose edges are its
dependencies and whose backward is the (cached, jitted) pullback of that gradient alone. After
the first call for a key, a call costs one dict lookup plus the node's own cached pullback.
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Literal

from . import result_rules
from .graph import Node, edge_of, saved_entry, torch_grad
from .._eager_jit import eager_jit

__all__ = ["record_backward"]

_PLANS = {}   # (pullback, operand structure, avals, grad mask) -> _Plan
_MAX_PLANS = 4096

# Forward nodes whose backward PyTorch runs as one fused op: the gradient's node is named
# after that op (`tanh_backward` -> TanhBackwardBackward0), whatever primitives JAX uses.
_FUSED = {
    "TanhBackward0": "TanhBackwardBackward0",
    "SigmoidBackward0": "SigmoidBackwardBackward0",
    "ReluBackward0": "ThresholdBackwardBackward0",
    "ThresholdBackward0": "ThresholdBackwardBackward0",
    "GeluBackward0": "GeluBackwardBackward0",
    "SoftplusBackward0": "SoftplusBackwardBackward0",
    "EluBackward0": "EluBackwardBackward0",
    "EluBackward1": "EluBackwardBackward0",
    "CeluBackward0": "EluBackwardBackward0",
    "SeluBackward0": "EluBackwardBackward0",
    "LeakyReluBackward0": "LeakyReluBackwardBackward0",
    "LeakyReluBackward1": "LeakyReluBackwardBackward0",
    "HardtanhBackward0": "HardtanhBackwardBackward0",
    "Relu6Backward0": "HardtanhBackwardBackward0",
    "HardswishBackward0": "HardswishBackwardBackward0",
    "HardsigmoidBackward0": "HardsigmoidBackwardBackward0",
    "SoftmaxBackward0": "SoftmaxBackwardDataBackward0",
    "LogSoftmaxBackward0": "LogSoftmaxBackwardDataBackward0",
    "MseLossBackward0": "MseLossBackwardBackward0",
    "SmoothL1LossBackward0": "SmoothL1LossBackwardBackward0",
    "HuberLossBackward0": "HuberLossBackwardBackward0",
    "NllLossBackward0": "NllLossBackwardBackward0",
    "NativeLayerNormBackward0": "NativeLayerNormBackwardBackward0",
    "NativeBatchNormBackward0": "NativeBatchNormBackwardBackward0",
    "NativeGroupNormBackward0": "NativeGroupNormBackwardBackward0",
    "ConvolutionBackward0": "ConvolutionBackwardBackward0",
    "MaxPool2DWithIndicesBackward0": "MaxPool2DWithIndicesBackwardBackward0",
    "MaxPool3DWithIndicesBackward0": "MaxPool3DWithIndicesBackwardBackward0",
    "AvgPool2DBackward0": "AvgPool2DBackwardBackward0",
    "AvgPool3DBackward0": "AvgPool3DBackwardBackward0",
    "SelectBackward0": "SelectBackwardBackward0",
    # PyTorch's tanh/sigmoid backward reads the forward's result, so differentiating it again
    # ends in the forward node's backward: its gradients are named like the first ones
    "TanhBackwardBackward0": "TanhBackwardBackward0",
    "SigmoidBackwardBackward0": "SigmoidBackwardBackward0",
    "SliceBackward0": "SliceBackwardBackward0",
    "LogSigmoidBackward0": "LogSigmoidBackwardBackward0",
    "GluBackward0": "GluBackwardBackward0",
    "PreluKernelBackward0": "PreluKernelBackwardBackward0",
    "RreluWithNoiseBackward0": "RreluWithNoiseBackwardBackward0",
    "SoftshrinkBackward0": "SoftshrinkBackwardBackward0",
    "HardshrinkBackward0": "HardshrinkBackwardBackward0",
    "CdistBackward0": "CdistBackwardBackward0",
}

# Fused backward nodes of a result (leaves: the result, the gradient it was called with)
_OF_RESULT_BACKWARD = frozenset(("TanhBackwardBackward0", "SigmoidBackwardBackward0"))

# Fused backward ops PyTorch has no derivative for: their node records as usual (it shows in
# grad_fn), but differentiating through it raises, naming the backward kernel
_NOT_TWICE = {"CdistBackwardBackward0": "_cdist_backward"}

# (forward node, gradient position or None for every position) -> name, where PyTorch's
# formula for that gradient ends in an op other than the primitive JAX ends with. A value
# (name, other, condition) picks `name` when the condition holds for the pullback:
#   "number": a forward operand is a Python number (PyTorch's Scalar overload of the op),
#   "div": the pullback divides by a constant (a mean reduction's division by the count).
_FUSED_AT = {
    ("PowBackward1", 0): "WhereBackward0",  # pow_backward_self masks a zero exponent
    # mean: the expanded (or sum_backward'ed) gradient divided by the element count
    ("MeanBackward0", 0): "DivBackward1",
    ("MeanBackward1", 0): "DivBackward1",
    # prod: the gradient times result / input
    ("ProdBackward0", 0): "MulBackward0",
    ("ProdBackward1", 0): "MulBackward0",
    # cumprod (no zeros): a reversed cumsum of grad * result, divided by the input
    ("CumprodBackward0", 0): "DivBackward0",
    # vector norms: the input times the (scaled) gradient over the norm
    ("LinalgVectorNormBackward0", 0): "MulBackward0",
    ("NormBackward0", 0): "MulBackward0",
    ("NormBackward1", 0): "MulBackward0",
    # max()/min()/median() of everything: zeros masked_fill'ed with grad / count where the
    # input equals the result (evenly_distribute_backward)
    ("MaxBackward1", 0): "MaskedFillBackward1",
    ("MinBackward1", 0): "MaskedFillBackward1",
    ("MedianBackward0", 0): "MaskedFillBackward1",
    ("NanmedianBackward0", 0): "MaskedFillBackward1",
    # ops selecting values along a dim: zeros scattered with the gradient at the indices
    # (value_selecting_reduction_backward)
    ("MaxBackward0", 0): "ScatterBackward0",
    ("MinBackward0", 0): "ScatterBackward0",
    ("MedianBackward1", 0): "ScatterBackward0",
    ("KthvalueBackward0", 0): "ScatterBackward0",
    ("ModeBackward0", 0): "ScatterBackward0",
    ("SortBackward0", 0): "ScatterBackward0",
    ("TopkBackward0", 0): "ScatterBackward0",
    ("NanmedianBackward1", 0): "ScatterBackward0",
    # cummax/cummin: zeros scatter_add'ed with the gradient at the running arg-extremes
    ("CummaxBackward0", 0): "ScatterAddBackward0",
    ("CumminBackward0", 0): "ScatterAddBackward0",
    # maximum/minimum: where(self == other, grad / 2, grad) masked_fill'ed to zero where the
    # other operand won
    ("MaximumBackward0", None): "MaskedFillBackward0",
    ("MinimumBackward0", None): "MaskedFillBackward0",
    ("FmaxBackward0", None): "MaskedFillBackward0",   # the same, NaN-aware
    ("FminBackward0", None): "MaskedFillBackward0",
    # masked_fill: the gradient masked_fill'ed with zero
    ("MaskedFillBackward0", 0): "MaskedFillBackward0",
    # lerp: grad * (1 - weight) and grad * weight, Scalar weight (MulBackward1) or tensor
    # weight (MulBackward0); the weight's gradient is grad * (end - self)
    ("LerpBackward0", 0): ("MulBackward1", "MulBackward0", "number"),
    ("LerpBackward0", 1): ("MulBackward1", "MulBackward0", "number"),
    ("LerpBackward0", 2): "MulBackward0",
    ("LerpBackward1", None): "MulBackward0",
    # binary_cross_entropy_with_logits: (sigmoid(self) - target) * grad, divided by the
    # element count under reduction='mean'
    ("BinaryCrossEntropyWithLogitsBackward0", 0): ("DivBackward1", "MulBackward0", "div"),
    # stack: each input's gradient is a select of the incoming one (unbind)
    ("StackBackward0", None): "SelectBackward0",
    # indexing ops' backward writes the gradient into zeros with the inverse op
    ("GatherBackward0", 0): "ScatterAddBackward0",
    ("IndexSelectBackward0", 0): "IndexAddBackward0",
    ("IndexBackward0", 0): "IndexPutImplBackward0",
    # shape ops undone by their inverse
    ("RollBackward0", 0): "RollBackward0",
    ("RepeatBackward0", 0): "SumBackward1",
    ("PermuteBackward0", 0): "PermuteBackward0",
    ("TransposeBackward0", 0): "TransposeBackward0",
    ("UnsqueezeBackward0", 0): "SqueezeBackward1",
    # sqrt: grad / (2 * result)
    ("SqrtBackward0", 0): "DivBackward0",
    # exp2: grad * result times the constant log(2)
    ("Exp2Backward0", 0): "MulBackward1",
    # logcumsumexp (real input): a difference of two exponentiated cumulative terms
    ("LogcumsumexpBackward0", 0): "SubBackward0",
    # hypot: grad * operand / result; logaddexp: grad / (1 + exp(other - self))
    ("HypotBackward0", None): "DivBackward0",
    ("LogaddexpBackward0", None): "DivBackward0",
    # xlogy: xlogy(grad, other) masked to zero where self == 0 and other <= 0
    ("XlogyBackward0", 0): "MaskedFillBackward0",
    # sinc: where(self == 0, 0, grad * (cos - sinc) / self)
    ("SincBackward0", 0): "WhereBackward0",
}

# Primitive producing a gradient -> the node PyTorch records for the same formula.
_PRIMITIVES = {
    "mul": "MulBackward0", "div": "DivBackward0", "neg": "NegBackward0",
    "add": "AddBackward0", "add_any": "AddBackward0", "sub": "SubBackward0",
    "broadcast_in_dim": "ExpandBackward0", "reshape": "ViewBackward0",
    "squeeze": "SqueezeBackward1", "expand_dims": "UnsqueezeBackward0",
    "reduce_sum": "SumBackward1", "select_n": "WhereBackward0", "slice": "SliceBackward0",
    "concatenate": "CatBackward0", "pad": "ConstantPadNdBackward0", "rev": "FlipBackward0",
    "exp": "ExpBackward0", "log": "LogBackward0", "sqrt": "SqrtBackward0",
    "rsqrt": "RsqrtBackward0", "sin": "SinBackward0", "cos": "CosBackward0",
    "tanh": "TanhBackward0", "logistic": "SigmoidBackward0", "abs": "AbsBackward0",
    "sign": "SgnBackward0", "max": "MaximumBackward0", "min": "MinimumBackward0",
    "pow": "PowBackward1", "integer_pow": "PowBackward0", "square": "PowBackward0",
    "cumsum": "CumsumBackward0", "dynamic_slice": "SliceBackward0", "split": "SliceBackward0",
    "dynamic_update_slice": "SliceScatterBackward0", "scatter-add": "IndexPutBackward0",
    "scatter_add": "IndexPutBackward0", "gather": "IndexBackward0",
    "convert_element_type": "ToCopyBackward0", "conv_general_dilated": "ConvolutionBackward0",
    "reduce_max": "AmaxBackward0", "reduce_min": "AminBackward0",
    "reduce_prod": "ProdBackward1", "erf": "ErfBackward0", "log1p": "Log1PBackward0",
    "expm1": "Expm1Backward0", "atan2": "Atan2Backward0", "clamp": "ClampBackward1",
}

# Sub-jaxpr calls whose outputs we trace through exactly; any other equation holding a
# sub-jaxpr (custom_jvp_call, cond, scan, while...) is taken as "every output depends on
# every input".
_CALLS = frozenset(("pjit", "jit", "closed_call", "core_call"))
# Equations that only restate their operand: a gradient made by them is still a pass-through.
_SAME = frozenset(("convert_element_type", "copy", "copy_p"))


# Forward nodes whose PyTorch derivative reads the op's result rather than its input
# (derivatives.yaml: `tanh_backward(grad, result)`, `grad * result`): their gradient is
# recorded as this function of (result, incoming gradient), so its graph reaches the input
# through the forward node itself, as PyTorch's does.
_LN2 = 0.6931471805599453
# Derivatives PyTorch writes with the op's saved result: the backward reads the result as it
# is then (written through `.data`, or as an unpack hook returns it).
FROM_RESULT = {
    "ExpBackward0": lambda y, g: g * y,
    "Exp2Backward0": lambda y, g: g * y * _LN2,
    "Expm1Backward0": lambda y, g: g * (y + 1),
    "SqrtBackward0": lambda y, g: g / (2 * y),
    "RsqrtBackward0": lambda y, g: -0.5 * g * y ** 3,
    "TanBackward0": lambda y, g: g * (1 + y * y),
    "TanhBackward0": lambda y, g: g * (1 - y * y),
    "SigmoidBackward0": lambda y, g: g * (1 - y) * y,
    "ReciprocalBackward0": lambda y, g: -g * (y * y),
    "ReluBackward0": lambda y, g: jnp.where(y > 0, g, jnp.zeros_like(g)),
    "SoftmaxBackward0": lambda y, g, dim: y * (g - jnp.sum(g * y, _axis(y, dim), keepdims=True)),
    "LogSoftmaxBackward0": lambda y, g, dim: g - jnp.exp(y) * jnp.sum(
        g, _axis(y, dim), keepdims=True),
}
# the op's arguments a rule above takes besides (result, gradient)
_RESULT_PARAMS = {"SoftmaxBackward0": ("dim",), "LogSoftmaxBackward0": ("dim",)}
# nodes whose gradient reads their saved result: these, and those of `result_rules` (formulas
# that also read the operands)
READS_RESULT = frozenset(FROM_RESULT) | frozenset(result_rules.RULES)
_RESULT_VJPS = {}


def _axis(y, dim):
    return None if y.ndim == 0 else dim   # (a 0-d softmax: along its one element)


def _result_vjp(node):
    name = node._name
    params = ()
    if name in _RESULT_PARAMS:
        from .._ops.registry import value_of
        statics = node._fn.__self__.statics
        params = tuple(value_of(statics[k]) for k in _RESULT_PARAMS[name])
    fn = _RESULT_VJPS.get((name, params))
    if fn is None:
        rule = FROM_RESULT[name]
        fn = _RESULT_VJPS[name, params] = lambda leaves, cts: [
            None if cts[0] is None else rule(leaves[0], cts[0].astype(leaves[0].dtype),
                                             *leaves[1:], *params)]
    return fn


def _result_operand(node):
    """The saved result of a `FROM_RESULT` node (one real output, one operand), or None."""
    if node._name not in FROM_RESULT or node._packed is not None or node._saved is None or \
            node._leaves is None or len(node._leaves) != 1 or len(node._out_avals) != 1:
        return None
    outs = [t for t, _, p in node._saved if p is not None and p[0] is node]
    # (complex: conjugates; an output since rebased onto another node, as a view modified
    # in place, keeps the input form)
    if len(outs) != 1 or not outs[0].dtype.is_floating_point or outs[0]._grad_fn is not node:
        return None
    return outs[0]


def from_unpacked_result(node, outputs, cts, leaves):
    """The gradients of a node whose formula reads its result, from that result as a
    saved-tensor unpack hook gave it or as written since (PyTorch's formula reads that) and
    its operands' `leaves`; None when the node's gradient is not one of these formulas."""
    if len(outputs) != 1 or len(node._out_avals) != 1:
        return None
    data = getattr(outputs[0], "_data", None)
    shape, dtype = node._out_avals[0]
    if data is None or tuple(data.shape) != tuple(shape) or outputs[0].dtype != dtype:
        return None
    if node._name in result_rules.RULES:
        return result_rules.gradients(node, data, cts, leaves)
    if node._name not in FROM_RESULT or len(node._edges) != 1:
        return None
    return _result_vjp(node)([data], cts)


def undefined_vjp(leaves, cts):
    """The backward of a node whose formula leaves every operand's gradient undefined."""
    return [None] * len(leaves)


def record_backward(node, cts):
    """Run `node`'s backward on Tensors, itself recorded (for create_graph=True)."""
    node._check_saved()
    if node._vjp is undefined_vjp:
        return [None] * len(node._edges)
    if node._name in result_rules.RULES:
        grads = _from_result_recorded(node, cts)
        if grads is not None:
            return grads
    result = _result_operand(node)
    if result is not None:
        return _record(_result_vjp(node), [result._data], [result], cts, node._name)
    return _record(node._vjp, node._leaf_values(), node._inputs, cts, node._name,
                   node._edges)


def _from_result_recorded(node, cts):
    """A `result_rules` node's gradients, recorded: the formula on its saved result (which
    leads back to the node) and its operands, as PyTorch's; None where no rule applies."""
    from .._tensor import Tensor, _wrap
    from . import saved_storage, saved_tensors
    if node._leaves is None or len(node._out_avals) != 1:
        return None
    if node._packed is not None:   # the result as the unpack hook gives it
        outputs = []
        leaves = saved_tensors.unpacked_leaves(node._leaves, node._packed, outputs)
        result = outputs[0] if len(outputs) == 1 else None
    else:
        leaves = node._leaf_values()
        saved = [(t, p[1]) for t, _, p in node._saved or () if p is not None and p[0] is node]
        if len(saved) != 1:
            return None
        result, nr = saved[0]
        written = saved_storage.written_result(node) if node._storage_refs else None
        if written is not None:   # (PyTorch's saved result: that storage, written)
            result = written
            result._grad_fn, result._output_nr = node, nr
        elif result._grad_fn is not node:   # (rebased onto another node since)
            return None
    if not isinstance(result, Tensor):
        return None
    inputs = node._inputs or [None] * len(leaves)
    values = node._fn.__self__.materialize(leaves)   # (a view operand: (base, offsets))
    operands = []
    for t, leaf, value in zip(inputs, leaves, values):
        if isinstance(leaf, tuple):
            same = t is not None and t._storage.data is leaf[0]
        else:
            same = t is not None and t._data is leaf
        operands.append(t if same else _wrap(value) if hasattr(value, "shape") else value)
    cts = [c if c is None or isinstance(c, Tensor) else _wrap(c) for c in cts]
    return result_rules.tensor_gradients(node, result, cts, operands)


def _record(node_vjp, leaves, inputs, cts, fwd_name, old_edges=None):
    from .._tensor import Tensor, _wrap

    n = len(leaves)
    args, tensors = [], []
    for i, leaf in enumerate(leaves):
        t = inputs[i] if inputs is not None else None
        if isinstance(leaf, tuple):  # a view operand read from its base (see `_collect`)
            same = t is not None and t._storage.data is leaf[0]
        else:
            same = t is not None and t._data is leaf
        if not same and t is not None and not isinstance(leaf, tuple) and \
                old_edges is not None and old_edges[i] is not None and \
                isinstance(old_edges[i][0], Node):
            # a Tensor changed in place since the forward (CopySlices' base): its old value
            # is what the node its edge leads to produced, so the gradient depends on it there
            t = _wrap(leaf, t.device)
            t._grad_fn, t._output_nr = old_edges[i]
            same = True
        # otherwise an operand changed in place is no operand: its old value is a constant
        args.append(t._data if same else leaf)
        tensors.append(t if same else None)
    for c in cts:
        if c is not None and not isinstance(c, Tensor):
            c = _wrap(c)
        args.append(None if c is None else c._data)
        tensors.append(c)
    edges = [None if t is None else edge_of(t) for t in tensors]
    plan = _plan_for(node_vjp, n, args, tuple(e is not None for e in edges), fwd_name,
                     tuple(t is not None for t in tensors))
    values = node_vjp(args[:n], args[n:])
    device = next((t.device for t in tensors if t is not None), None)
    grads = []
    for value, out in zip(values, plan.outs):
        if value is None or out is None:
            grads.append(None)
        elif out[0] == "pass":
            t = tensors[out[1]]
            grads.append(t if t is not None else _wrap(value, device))
        elif out[0] == "const":
            grads.append(_wrap(value, device))
        else:
            _, name, deps, vjp, saves, summed, shown, transposed = out
            node_edges = [edges[i] for i in deps]
            for k in transposed:   # `mat2.t()` in PyTorch's formula: a TBackward0 node
                node_edges[k] = _t_edge(tensors[deps[k]], edges[deps[k]], device)
            g = _wrap(value, device)
            saved = None
            if saves is not None:
                saved = [saved_entry(tensors[i]) for i in saves if tensors[i] is not None]
            if summed is None:
                g._grad_fn = Node(name, node_edges, args, tensors, vjp,
                                  [(g.shape, g.dtype)], saved)
                g._grad_fn._shown = shown
            else:   # sum_to_size: a keepdim sum, then a view dropping the leading dims
                keep, sum_vjp, view_vjp = summed
                k = _wrap(value.reshape(keep), device)
                k._grad_fn = Node("SumBackward1", node_edges, args, tensors,
                                  sum_vjp, [(k.shape, k.dtype)], saved)
                k._grad_fn._shown = shown
                k._output_nr = 0
                g._grad_fn = Node(name, [(k._grad_fn, 0)], [k._data], [k], view_vjp,
                                  [(g.shape, g.dtype)], None)
            g._output_nr = 0
            grads.append(g)
    return grads


class _Plan:
    """Per gradient of a pullback: None (no gradient), ("pass", operand), ("const",) or
    ("node", name, dependencies needing grads, pullback, operands to save or None, what
    `_sum_then_view` gives or None, the node's `_shown` edges or None)."""
    __slots__ = ("outs",)

    def __init__(self, outs):
        self.outs = outs


def _plan_for(vjp, n, args, mask, fwd_name, tmask):
    flat, tree = jax.tree_util.tree_flatten(args)
    avals = tuple(map(jax.typeof, flat))
    key = (vjp, n, tree, avals, mask, fwd_name, tmask)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _make_plan(vjp, n, args, tree, avals, mask, fwd_name, tmask)
    return plan


def _make_plan(vjp, n, args, tree, avals, mask, fwd_name, tmask):
    # which operand each flat leaf belongs to (an operand may be a (base, offsets) tuple)
    owner = []
    for i, a in enumerate(args):
        owner += [i] * len(jax.tree_util.tree_leaves(a))
    present, count = [], [0]

    def flat_fn(*flat):
        a = jax.tree_util.tree_unflatten(tree, flat)
        out = vjp(a[:n], a[n:])
        count[0] = len(out)
        present[:] = [i for i, g in enumerate(out) if g is not None]
        return [out[i] for i in present]

    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    closed = jax.make_jaxpr(flat_fn)(*specs)
    infos = _walk(closed.jaxpr, [(1 << k, 1 << k, ("in", k)) for k in range(len(avals))])
    outs = [None] * count[0]
    for j, (diff, val, producer), aval in zip(present, infos, closed.out_avals):
        name = _FUSED.get(fwd_name)
        if name is not None:  # PyTorch's fused backward op is differentiable in its operands
            diff = val
        deps = sorted({owner[k] for k in range(len(avals)) if diff >> k & 1})
        if fwd_name in _OF_RESULT_BACKWARD and n == 2 and 1 in deps:
            # tanh_backward(grad_output, result)'s gradient for the result reads grad_output:
            # PyTorch's formula is a product (`grad * -2 * result * grad_output`)
            name = "MulBackward0"
        used = sorted({owner[k] for k in range(len(avals)) if val >> k & 1})
        if producer[0] == "in" and (avals[producer[1]].shape, avals[producer[1]].dtype) == (
                aval.shape, aval.dtype):
            outs[j] = ("pass", owner[producer[1]])
            continue
        needed = tuple(i for i in deps if mask[i])
        if not needed:
            outs[j] = ("const",)
            continue
        # PyTorch's node has an edge per Tensor its formula reads, undefined for those not
        # requiring grad; the pullback only differentiates the others
        order = _edge_order(producer, tuple(i for i in deps if tmask[i]), n, owner)
        needed = tuple(i for i in order if mask[i])
        shown = None if len(order) == len(needed) else tuple(
            needed.index(i) if mask[i] else None for i in order)
        name = name or _fused_at(fwd_name, j, args[:n], closed.jaxpr) or _name_of(producer)
        # A pullback is linear in its cotangents: a gradient of cotangents alone can be
        # differentiated again without the values (as PyTorch's AddBackward0 saves nothing);
        # one that reads forward operands keeps them, and re-running it after it was freed
        # must raise.
        saves = tuple(i for i in used if i < n) or (
            () if any(a is None for a in args) else None)  # (a None has no aval to keep)
        transposed = _transposed_operands(producer, needed, n, owner) \
            if name == "MmBackward0" else ()
        one = _one_vjp(vjp, n, j, needed, transposed)
        summed = None
        rank = _summed_rank(producer) if name == "ViewBackward0" else None
        if rank is not None and rank > len(aval.shape):
            summed = _sum_then_view(one, aval, rank)
        pull = _refusing(_NOT_TWICE[name]) if name in _NOT_TWICE else eager_jit(one)
        outs[j] = ("node", name, needed, pull, saves, summed, shown, transposed)
    return _Plan(outs)


def _refusing(kernel):
    """A pullback raising PyTorch's error for a backward kernel with no derivative formula."""
    def refuse(leaves, cts):
        raise NotImplementedError(f"the derivative for '{kernel}' is not implemented.")
    return refuse


def _sum_then_view(one, aval, rank):
    """(keepdim shape, pullbacks of the sum and of the view) of a gradient PyTorch computes as
    `sum_to_size`: a keepdim sum over the broadcast dimensions, viewed without the leading ones."""
    shape = tuple(aval.shape)
    keep = (1,) * (rank - len(shape)) + shape

    def sum_vjp(leaves, cts):
        return one(leaves, [None if cts[0] is None else cts[0].reshape(shape)])

    def view_vjp(leaves, cts):
        ct = cts[0]
        return [jnp.zeros(keep, aval.dtype) if ct is None else ct.reshape(keep)]
    return keep, eager_jit(sum_vjp), eager_jit(view_vjp)


def _fused_at(fwd_name, j, operands, jaxpr):
    """The `_FUSED_AT` name of gradient `j` of a `fwd_name` node, or None."""
    name = _FUSED_AT.get((fwd_name, j)) or _FUSED_AT.get((fwd_name, None))
    if isinstance(name, tuple):
        name, other, condition = name
        if condition == "number":
            # a Python number operand (an int/float leaf; its aval is weak-typed, so the plan
            # cache tells it from a 0-dim Tensor)
            holds = any(isinstance(a, (int, float, complex)) and not isinstance(a, bool)
                        for a in operands)
        else:
            holds = _divides_by_constant(jaxpr)
        name = name if holds else other
    return name


def _divides_by_constant(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "div" and isinstance(eqn.invars[1], Literal):
            return True
        for p in eqn.params.values():
            sub = getattr(p, "jaxpr", p)   # a ClosedJaxpr's Jaxpr, or a Jaxpr
            if hasattr(sub, "eqns") and _divides_by_constant(sub):
                return True
    return False


def _t_edge(t, edge, device):
    """The edge to a `t.t()` taken inside a gradient's formula (its TBackward0 node)."""
    from .._tensor import _wrap
    tt = _wrap(t._data.T, device)
    tt._grad_fn = Node("TBackward0", [edge], [t._data], [t], _T_VJP, [(tt.shape, tt.dtype)],
                       None)
    tt._output_nr = 0
    return (tt._grad_fn, 0)


_T_VJP = eager_jit(lambda leaves, cts: [None if cts[0] is None else cts[0].T])


def _transposed_operands(producer, needed, n, owner):
    """Which of a matrix product gradient's edges (indices into `needed`) PyTorch's formula
    takes transposed: `grad.mm(mat2.t())`, `mat1.t().mm(grad)`. JAX contracts the operand
    along the other dimension instead (and writes the second as the transpose of a product)."""
    flip = False
    if producer[1].primitive.name == "transpose":
        producer, flip = producer[2][0], True
    eqn = producer[1]
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if lb or rb or len(lc) != 1 or len(rc) != 1:
        return ()
    # in the mm's order, the left operand contracts its dim 1, the right one its dim 0
    sides = [(producer[3][1], rc[0] == 0), (producer[3][0], lc[0] == 1)] if flip else [
        (producer[3][0], lc[0] == 0), (producer[3][1], rc[0] == 1)]
    out = []
    for mask, transposed in sides:
        ops = {owner[k] for k in range(len(owner)) if mask >> k & 1}
        if transposed and len(ops) == 1:
            (i,) = ops
            if i < n and i in needed:
                out.append(needed.index(i))
    return tuple(out)


def _one_vjp(vjp, n, j, positions, transposed=()):
    """The pullback of gradient `j` of `vjp` w.r.t. the operands at `positions`, as a node's
    `vjp(leaves, cts)` returning one gradient per position (the node's edges); those at the
    indices `transposed` are for the operand's transpose."""
    def fn(leaves, cts):
        def g_j(*diff):
            full = list(leaves)
            for i, v in zip(positions, diff):
                full[i] = v
            return vjp(full[:n], full[n:])[j]
        out, pullback = jax.vjp(g_j, *[leaves[i] for i in positions])
        ct = cts[0]
        ct = jnp.zeros_like(out) if ct is None else torch_grad(ct.astype(out.dtype))
        grads = [torch_grad(g) for g in pullback(ct)]
        for k in transposed:
            grads[k] = grads[k].T
        return grads
    return fn


def _walk(jaxpr, in_infos):
    """(differentiable dependencies, value dependencies, producer) of every output of `jaxpr`
    given its inputs': bitmasks over the flat inputs; the producer is ("in", k) for flat input
    k passed through unchanged, else ("eqn", eqn, the producers of its operands, their
    differentiable dependencies). A bool or
    integer value carries no derivative (a comparison's result never requires grad)."""
    env = {}

    def read(v):
        if isinstance(v, Literal):
            return 0, 0, ("lit",)
        return env[v]

    for v, info in zip(jaxpr.invars, in_infos):
        env[v] = info
    for v in jaxpr.constvars:
        env[v] = (0, 0, ("lit",))
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        sub = eqn.params.get("jaxpr")
        name = eqn.primitive.name
        if name in _CALLS and sub is not None:
            outs = _walk(getattr(sub, "jaxpr", sub), ins)
        elif name in _SAME and len(ins) == 1 and _aval_key(eqn.invars[0]) == _aval_key(
                eqn.outvars[0]):
            outs = [ins[0]]
        elif name == "optimization_barrier":   # (a fence against XLA's rewrites: no node)
            outs = list(ins)
        else:
            diff = val = 0
            for d, m, _ in ins:
                diff |= d
                val |= m
            producer = ("eqn", eqn, [p for _, _, p in ins], [d for d, _, _ in ins])
            outs = [(diff if _inexact(v) else 0, val, producer) for v in eqn.outvars]
        for v, info in zip(eqn.outvars, outs):
            env[v] = info
    return [read(v) for v in jaxpr.outvars]


def _aval_key(v):
    return v.aval.shape, v.aval.dtype


def _inexact(v):
    return jnp.issubdtype(v.aval.dtype, jnp.inexact)


def _edge_order(producer, needed, n, owner):
    """The order of a gradient node's edges: PyTorch's formulas mostly lead with the incoming
    gradient (`grad * other`, `tanh_backward(grad, result)`), so cotangents come first; a
    matrix product's follow its operands (`grad.mm(mat2.t())`, but `mat1.t().mm(grad)`,
    which JAX writes as the transpose of a product led by the cotangent)."""
    flip = False
    if producer[0] == "eqn" and producer[1].primitive.name == "transpose" and \
            producer[2][0][0] == "eqn" and producer[2][0][1].primitive.name == "dot_general":
        producer, flip = producer[2][0], True
    if producer[0] == "eqn" and producer[1].primitive.name == "dot_general":
        masks = producer[3][::-1] if flip else producer[3]
        order = []
        for m in masks:
            for k in range(len(owner)):
                if m >> k & 1 and owner[k] in needed and owner[k] not in order:
                    order.append(owner[k])
        return tuple(order) + tuple(i for i in needed if i not in order)
    return tuple(sorted(needed, key=lambda i: (i < n, i)))


def _summed_rank(producer):
    """The rank of what a chain of sums and reshapes (ending in `producer`) started from."""
    rank = None
    while producer[0] == "eqn" and producer[1].primitive.name in (
            "reduce_sum", "reshape", "broadcast_in_dim", "expand_dims", "squeeze"):
        eqn, operands = producer[1], producer[2]
        if eqn.primitive.name == "reduce_sum":
            rank = len(eqn.invars[0].aval.shape)
        producer = operands[0]
    return rank


def _name_of(producer):
    if producer[0] != "eqn":
        return "CloneBackward0"
    eqn, operands = producer[1], producer[2]
    prim = eqn.primitive.name
    inner = [p[1].primitive.name if p[0] == "eqn" else None for p in operands]
    if prim == "dot_general":
        if not eqn.params["dimension_numbers"][0][0]:
            return "MulBackward0"   # no contraction: an outer or scalar product (ger, dot)
        ranks = tuple(len(v.aval.shape) for v in eqn.invars)
        if max(ranks) >= 3:
            return "BmmBackward0"
        return {(2, 2): "MmBackward0", (1, 1): "DotBackward0"}.get(ranks, "MvBackward0")
    if prim == "transpose":
        if inner[0] == "dot_general":  # JAX lays a matmul's gradient out with a transpose
            return _name_of(operands[0])
        return "TBackward0" if len(eqn.outvars[0].aval.shape) == 2 else "PermuteBackward0"
    if prim == "neg" and inner[0] == "mul":
        return "MulBackward0"   # JAX's -(g * y) is PyTorch's -g * y
    if prim == "add_any" and any(p[0] == "eqn" and p[1].primitive.name in ("mul", "add_any")
                                 and _name_of(p) == "MulBackward0" for p in operands):
        # JAX sums the contributions of an operand used twice in one op; PyTorch's formula
        # for that op is one product (silu, square, var)
        return "MulBackward0"
    if prim == "reduce_sum":
        return "ViewBackward0"  # PyTorch's sum_to_size: sum(keepdim=True), then view
    if prim in ("reshape", "broadcast_in_dim", "expand_dims") and inner[0] == "reduce_sum":
        # ... or only the sum, when no leading dimension goes (JAX may sum every broadcast
        # dimension, then put the size-1 ones back)
        return "ViewBackward0" if _summed_rank(operands[0]) > len(
            eqn.outvars[0].aval.shape) else "SumBackward1"
    if prim == "cumsum" and eqn.params.get("reverse"):
        return "FlipBackward0"  # PyTorch's cumsum backward flips, sums, flips back
    name = _PRIMITIVES.get(prim)
    if name is None:
        name = "".join(p.capitalize() for p in prim.replace("-", "_").split("_")) + \
            "Backward0"
    return name
