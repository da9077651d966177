"""Recording an op call in the autograd graph: whether a call records (`records`), its node's
name, edges and saved tensors, and its backward (the plan's `jax.vjp` pullback, jitted and
cached per plan and inputs needing grads)."""
import jax
import jax.numpy as jnp

from .._eager_jit import eager_jit
from .. import _dtype as dt
from .._storage import InferenceStorage
from .._tensor import requires_grad_of
from ..autograd import grad_mode, saved_tensors
from ..autograd.double_backward import READS_RESULT, undefined_vjp
from ..autograd.saved_storage import result_ref, storage_refs
from ..autograd.graph import Node, edge_of, saved_entry, torch_grad
from . import half_grad


def records(*tensors):
    """Whether an op on these operands records a node (non-tensors are ignored)."""
    return grad_mode.is_grad_enabled() and any(
        getattr(t, "requires_grad", False) for t in tensors)


def _grad_name(definition, kinds, statics):
    g = definition.grad_fn
    if g is None:
        return definition.name.capitalize() + "Backward0"
    return g if isinstance(g, str) else g(kinds, statics)



def _record(plan, leaves, tensors, outs, kinds):
    avals = tuple([(o.shape, o.dtype) for o in outs])
    diff_out = tuple([_DIFFERENTIABLE[d] for _, d in avals])
    if True not in diff_out:
        return None
    edges = op_edges(plan, tensors) if plan.edgeless else [
        None if t is None else edge_of(t) for t in tensors]
    mask = tuple([e is not None for e in edges])
    if True not in mask and not _edgeless_grad(tensors, plan):
        return None
    name, vjp, saved_at, saved_outs = _record_info(plan, mask, diff_out)
    saved = None if saved_at is None else _saved_of(tensors, saved_at)
    node = Node(name, edges, leaves, tensors, vjp, avals, saved, plan.fwd)
    node._shown = shown_edges(plan, name, edges)
    if saved:
        node._storage_refs = storage_refs(leaves, tensors, saved_at)
    for i, o in enumerate(outs):
        if diff_out[i]:
            o._grad_fn = node
            o._output_nr = i
    if saved_outs:
        node._saved = (saved or []) + [saved_entry(outs[i], (node, i)) for i in saved_outs]
        if name in READS_RESULT and len(saved_outs) == 1:
            node._storage_refs = (node._storage_refs or []) + [result_ref(outs[saved_outs[0]])]
    if saved_tensors.active():
        _pack_saved(node, leaves, tensors, saved_at)
    return node


def shown_edges(plan, name, edges):
    """Which of `edges` the node lists in next_functions (see `Node._shown`)."""
    if name == NOT_IMPLEMENTED:   # (PyTorch's NotImplemented node has edges only where needed)
        return [i for i in (range(len(edges)) if plan.shown is None else plan.shown)
                if i is not None and edges[i] is not None]
    return plan.shown


def _edgeless_grad(tensors, plan):
    """Whether an operand requires grad without a graph edge: a view without history of a base
    requiring grad (made under no_grad, or before the base's requires_grad_()). PyTorch records
    the op all the same, its node without that edge."""
    for i, t in enumerate(tensors):
        if t is not None and t._base is not None and t._grad_fn is None and \
                requires_grad_of(t) and (not plan.edgeless or i not in dict(plan.edgeless)):
            return True
    return False


def _no_grads(leaves, cts):
    return [None] * len(leaves)


def _pack_saved(node, leaves, tensors, positions):
    """Hand the node's saved operands (at `positions`) and saved outputs to the active
    saved-tensor pack hook."""
    inputs = [(i, tensors[i]) for i in positions or () if tensors[i] is not None]
    outputs = [(None, t) for t, _, p in node._saved or () if p and p[0] is node]
    if inputs or outputs:
        saved_tensors.pack_into(node, leaves, inputs + outputs)


_DIFFERENTIABLE = {d: d.is_floating_point or d.is_complex for d in dt._BY_NP.values()}


def _record_info(plan, mask, diff_out):
    """(grad_fn name, pullback, positions of the saved inputs, positions of the saved
    outputs): what recording this plan with these inputs needing grads takes, worked out
    once."""
    info = plan.records.get((mask, diff_out))
    if info is None:
        name = _grad_name(plan.op, plan.kinds, plan.statics)
        undefined = _undefined_grads(plan)
        if isinstance(undefined, tuple):   # (positions whose formula raises: see there)
            undefined = raising_vjp(UNDEFINED_OPERAND) if any(mask[i] for i in undefined) \
                else True
        info = plan.records[(mask, diff_out)] = (
            name, _refuse(plan) if name == NOT_IMPLEMENTED else undefined if callable(
                undefined) else undefined_vjp if undefined else _no_grads if True not in mask
            else _plan_vjp(plan, mask, diff_out),
            saved_positions(plan.op, plan.kinds, mask),
            saved_output_positions(plan.op, plan.kinds, diff_out))
    return info


# The grad_fn of an overload PyTorch records without a derivative (`remainder(2, x)`): its
# backward raises.
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def _refuse(plan):
    return raising_vjp(RuntimeError(f"derivative for aten::{kernel_name(plan)} is not "
                                    "implemented"))


def _undefined_grads(plan):
    """Whether PyTorch's formula leaves every operand's gradient undefined for this call (see
    `op`'s `undefined_grad`): the backward sends None, and `.grad` stays None; or the
    positions of the operands whose formula then computes with that undefined gradient,
    which raises where one of them needs a gradient."""
    rule = getattr(plan.op, "undefined_grad", None)
    return rule is not None and rule(**plan._kw)


# (`-grad` of an undefined gradient: dist's `other` at order 0)
UNDEFINED_OPERAND = RuntimeError("Expected a proper Tensor but got None (or an undefined "
                                 "Tensor in C++) for argument #0 'self'")


def _saved_outputs(saves, returns):
    """The outputs named in `saves`, in order: "result", or an output's index; None when
    `saves` depends on the operand kinds (see `saved_outputs`)."""
    if callable(saves):
        return None
    names = ("result",) if saves == "result" else saves if isinstance(saves, tuple) else ()
    slots = [_output_slot(n, returns) for n in names]
    return tuple(slot for slot in slots if slot is not None)


def saves_of(definition, kinds):
    """The op's `saves` for operands of these kinds (a callable `saves` picks it by
    overload: `pow`'s three nodes save different values)."""
    saves = definition.saves
    return saves(kinds) if callable(saves) else saves


def saved_outputs(definition, kinds):
    """The outputs this op saves for operands of these kinds (see `_saved_outputs`)."""
    at = definition.saved_outputs
    return _saved_outputs(definition.saves(kinds), definition.returns) if at is None else at


def _output_slot(name, returns):
    """"result", the index of the output `name` names, or None (not an output's name)."""
    fields = getattr(returns, "_fields", ())
    if name in fields:
        return fields.index(name)
    if name.startswith("result") and name[6:].isdigit():
        return int(name[6:])
    return "result" if name == "result" else None


def saved_output_positions(definition, kinds, diff_out, only=None):
    """Positions of the outputs PyTorch saves for this op's backward on operands of these
    kinds (`diff_out`: which outputs are differentiable, the ones "result" names); `only`:
    just that name's."""
    at = []
    for n in saved_outputs(definition, kinds):
        if only is not None and n != _output_slot(only, definition.returns):
            continue
        at += [i for i, d in enumerate(diff_out) if d] if n == "result" else [n]
    # (an output this call does not return, as max_pool2d's indices without return_indices)
    return tuple(i for i in dict.fromkeys(at) if i < len(diff_out))


def operand_positions(definition, kinds):
    """{parameter: range of its positions in the flattened operands} (a list operand has one
    position per element, an absent one none)."""
    at = {}
    pos = 0
    for pname, kind in zip(definition.tensors, kinds):
        count = 0 if kind is None else (len(kind[1]) if isinstance(kind, tuple) and
                                        kind and kind[0] == "L" else 1)
        at[pname] = range(pos, pos + count)
        pos += count
    return at


def saved_positions(definition, kinds, mask, only=None):
    """Positions (in the flattened operands) of the inputs PyTorch saves for this op's
    backward, or None when it saves none; `mask` tells which operands need grads. `only`:
    just those of that parameter."""
    saves = saves_of(definition, kinds)
    if saves == () or saves is None:
        return None
    if saves == "result":
        return ()
    at = operand_positions(definition, kinds)   # parameter -> its positions
    if isinstance(saves, dict):  # {input: the inputs whose gradient needs it}
        needs = {n: any(mask[i] for i in r) for n, r in at.items()}
        # in the order PyTorch's formulas save them: by the first gradient that uses each
        names = [n for g in definition.tensors if needs.get(g)
                 for n, users in saves.items() if g in users]
        names = [n for n in dict.fromkeys(names) if n in at]
    elif saves == "inputs":
        names = [n for n in definition.tensors if n in at]
    else:   # (a name of an output is not an input's)
        names = [n for n in saves if n in at and _output_slot(n, definition.returns) is None]
    return tuple(i for n in names if only in (None, n) for i in at[n])


def _edgeless_operands(definition, kinds):
    """(((position, parameter), ...), shown): the operands PyTorch's node has no edge for
    (parameter None: a Python number that selected a Scalar overload), and what
    `next_functions` lists: operand positions, None for an absent optional tensor (PyTorch's
    undefined edge), or None when that is every operand as it is."""
    nondiff = definition.non_differentiable
    at = operand_positions(definition, kinds)
    scalar_overload = not definition.scalars_as_tensors and any(
        isinstance(k, type) for k in kinds)
    edgeless, shown = [], []
    for pname, kind in zip(definition.tensors, kinds):
        if pname in nondiff:
            edgeless += [(i, pname) for i in at[pname]]
        elif isinstance(kind, type) and scalar_overload:
            edgeless.append((at[pname][0], None))
        elif kind is None:
            numbers = definition.scalar_operands
            in_scalar_overload = scalar_overload and (numbers is True or pname in (numbers or ()))
            if pname in definition.optional_tensors and not in_scalar_overload:
                shown.append(None)
        else:
            shown += at[pname]
    if not edgeless and None not in shown:
        return (), None
    return tuple(edgeless), tuple(shown)


def op_edges(plan, tensors):
    """The node's edges for these operands (None where PyTorch's node has none); a tensor
    that requires grad in a non-differentiable parameter is PyTorch's error."""
    edges = [None if t is None else edge_of(t) for t in tensors]
    for i, pname in plan.edgeless:
        if edges[i] is not None:
            if pname is not None:
                raise RuntimeError(
                    f"The function '{kernel_name(plan)}' is not differentiable with respect "
                    f"to argument '{pname}'. This input cannot have requires_grad True.")
            edges[i] = None
    return edges


def kernel_name(plan):
    k = plan.op.kernel
    if k is None:
        return plan.op.name.lstrip("_")
    return k if isinstance(k, str) else k(plan.kinds, plan.statics)


def _saved_of(tensors, positions):
    # (a scalar operand has None at its position: nothing to save)
    saved = [t for t in map(tensors.__getitem__, positions) if t is not None]
    for t in saved:
        if type(t._storage) is InferenceStorage:
            raise RuntimeError(INFERENCE_SAVED_MSG)
    return [saved_entry(t) for t in saved]


INFERENCE_SAVED_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


def _plan_vjp(plan, mask, diff_out):
    key = (mask, diff_out)
    fn = plan.bwd.get(key)
    if fn is None:
        refusal = backward_refusal(plan)
        fn = raising_vjp(refusal) if refusal is not None else eager_jit(
            _make_vjp(plan.fwd, mask, diff_out, plan.materialize))
        plan.bwd[key] = fn
    return fn


# ---- backward refusals by operand kinds ---------------------------------------------------
# Some overloads record a node whose backward PyTorch refuses for these operand kinds alone
# (the formula calls a kernel that lacks their dtype): the op's `backward_refusal` (see
# `declare.op`), asked once per plan, when its pullback is made, so recording and valid
# backwards never pay for it.

def backward_refusal(plan):
    """The exception this plan's backward raises (see above), or None."""
    rule = getattr(plan.op, "backward_refusal", None)
    return None if rule is None else rule(plan.kinds, plan.statics)


def raising_vjp(exc):
    """A pullback that raises `exc` (a backward refusal)."""
    def refuse(leaves, cts):
        raise type(exc)(*exc.args)   # (a fresh one each time: no traceback piles up)
    refuse.refusal = exc   # (read by the func transforms: see func/_refusals.py)
    return refuse


def _make_vjp(fwd, mask, diff_out, materialize=None):
    """The pullback of `fwd` for the leaves in `mask`; fused view operands (see `_collect`) are
    read first, so their gradients come out in the view's shape, as the graph edges expect."""
    positions = [i for i, m in enumerate(mask) if m]

    def vjp(leaves, cts):
        if materialize is not None:
            leaves = materialize(leaves)

        def f(*diff):
            full = list(leaves)
            for i, v in zip(positions, diff):
                full[i] = v
            out = fwd(*full)
            if isinstance(out, (tuple, list)):
                return [o for o, d in zip(out, diff_out) if d]
            return [out]
        primal_out, pullback = jax.vjp(f, *[leaves[i] for i in positions])
        diff_cts = [c for c, d in zip(cts, diff_out) if d]
        diff_cts = [jnp.zeros_like(p) if c is None else torch_grad(c.astype(p.dtype))
                    for c, p in zip(diff_cts, primal_out)]
        if any(c.dtype in half_grad.HALF for c in diff_cts):
            pullback = half_grad.float32_sums(pullback)   # PyTorch sums half grads in float32
        grads = pullback(diff_cts)
        result = [None] * len(leaves)
        for i, g in zip(positions, grads):
            result[i] = torch_grad(g)
        return result
    return vjp
