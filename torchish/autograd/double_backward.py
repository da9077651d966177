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

from .graph import Node, edge_of, saved_entry, torch_grad

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


def record_backward(node, cts):
    """Run `node`'s backward on Tensors, itself recorded (for create_graph=True)."""
    from .._tensor import Tensor, _wrap

    node._check_saved()
    leaves = node._leaf_values()
    n = len(leaves)
    inputs = node._inputs
    args, tensors = [], []
    for i, leaf in enumerate(leaves):
        t = inputs[i] if inputs is not None else None
        if isinstance(leaf, tuple):  # a view operand read from its base (see `_collect`)
            same = t is not None and t._storage.data is leaf[0]
        else:
            same = t is not None and t._data is leaf
        # a Tensor changed in place since the forward is no operand: its old value is a constant
        args.append(t._data if same else leaf)
        tensors.append(t if same else None)
    for c in cts:
        if c is not None and not isinstance(c, Tensor):
            c = _wrap(c)
        args.append(None if c is None else c._data)
        tensors.append(c)
    edges = [None if t is None else edge_of(t) for t in tensors]
    plan = _plan_for(node._vjp, n, args, tuple(e is not None for e in edges), node._name)
    values = node._vjp(args[:n], args[n:])
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
            _, name, deps, vjp, saves = out
            g = _wrap(value, device)
            saved = None
            if saves is not None:
                saved = [saved_entry(tensors[i]) for i in saves if tensors[i] is not None]
            g._grad_fn = Node(name, [edges[i] for i in deps], args, tensors, vjp,
                              [(g.shape, g.dtype)], saved)
            g._output_nr = 0
            grads.append(g)
    return grads


class _Plan:
    """Per gradient of a pullback: None (no gradient), ("pass", operand), ("const",) or
    ("node", name, dependencies needing grads, pullback, operands to save or None)."""
    __slots__ = ("outs",)

    def __init__(self, outs):
        self.outs = outs


def _plan_for(vjp, n, args, mask, fwd_name):
    flat, tree = jax.tree_util.tree_flatten(args)
    avals = tuple(map(jax.typeof, flat))
    key = (vjp, n, tree, avals, mask, fwd_name)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _make_plan(vjp, n, args, tree, avals, mask, fwd_name)
    return plan


def _make_plan(vjp, n, args, tree, avals, mask, fwd_name):
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
        used = sorted({owner[k] for k in range(len(avals)) if val >> k & 1})
        if producer[0] == "in" and (avals[producer[1]].shape, avals[producer[1]].dtype) == (
                aval.shape, aval.dtype):
            outs[j] = ("pass", owner[producer[1]])
            continue
        needed = tuple(i for i in deps if mask[i])
        if not needed:
            outs[j] = ("const",)
            continue
        name = name or _fused_at(fwd_name, j, args[:n], closed.jaxpr) or _name_of(producer)
        # A pullback is linear in its cotangents: a gradient of cotangents alone can be
        # differentiated again without the values (as PyTorch's AddBackward0 saves nothing);
        # one that reads forward operands keeps them, and re-running it after it was freed
        # must raise.
        saves = tuple(i for i in used if i < n) or (
            () if any(a is None for a in args) else None)  # (a None has no aval to keep)
        outs[j] = ("node", name, needed, jax.jit(_one_vjp(vjp, n, j, needed)), saves)
    return _Plan(outs)


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


def _one_vjp(vjp, n, j, positions):
    """The pullback of gradient `j` of `vjp` w.r.t. the operands at `positions`, as a node's
    `vjp(leaves, cts)` returning one gradient per position (the node's edges)."""
    def fn(leaves, cts):
        def g_j(*diff):
            full = list(leaves)
            for i, v in zip(positions, diff):
                full[i] = v
            return vjp(full[:n], full[n:])[j]
        out, pullback = jax.vjp(g_j, *[leaves[i] for i in positions])
        ct = cts[0]
        ct = jnp.zeros_like(out) if ct is None else torch_grad(ct.astype(out.dtype))
        return [torch_grad(g) for g in pullback(ct)]
    return fn


def _walk(jaxpr, in_infos):
    """(differentiable dependencies, value dependencies, producer) of every output of `jaxpr`
    given its inputs': bitmasks over the flat inputs; the producer is ("in", k) for flat input
    k passed through unchanged, else ("eqn", eqn, the producers of its operands). A bool or
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
        else:
            diff = val = 0
            for d, m, _ in ins:
                diff |= d
                val |= m
            producer = ("eqn", eqn, [p for _, _, p in ins])
            outs = [(diff if _inexact(v) else 0, val, producer) for v in eqn.outvars]
        for v, info in zip(eqn.outvars, outs):
            env[v] = info
    return [read(v) for v in jaxpr.outvars]


def _aval_key(v):
    return v.aval.shape, v.aval.dtype


def _inexact(v):
    return jnp.issubdtype(v.aval.dtype, jnp.inexact)


def _name_of(producer):
    if producer[0] != "eqn":
        return "CloneBackward0"
    _, eqn, operands = producer
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
        return "SumBackward1"   # ... or only the sum, when no dimension goes
    if prim == "cumsum" and eqn.params.get("reverse"):
        return "FlipBackward0"  # PyTorch's cumsum backward flips, sums, flips back
    name = _PRIMITIVES.get(prim)
    if name is None:
        name = "".join(p.capitalize() for p in prim.replace("-", "_").split("_")) + \
            "Backward0"
    return name
