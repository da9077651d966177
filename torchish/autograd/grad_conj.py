"""PyTorch's conjugate bit on gradients, for the engine (`graph`) and its compiled pass
(`fused_backward`): which gradient arrays PyTorch would hold as conj views, so that a leaf's
`.grad` (and what hooks and `autograd.grad` see) out of ConjBackward0 is one, as PyTorch's."""
import jax.numpy as jnp

from .graph import _NODE_CLASSES, Node, _node_class


# ConjBackward0 returns a lazy conj view of its gradient; AccumulateGrad keeps that tensor as
# `.grad` (bit and all) when it may steal it: no graph is built, `.grad` is unset, nothing else
# holds it and its strides are the leaf's (the layout contract). Otherwise it copies it into a
# tensor laid out as the leaf, resolving the bit. Gradients here are plain arrays, so while a
# pass has a ConjBackward0 node a side table `marks` (id(array) -> (array, bits)) says which of
# them PyTorch would hold as a conj view (G_CONJ), laid out otherwise than densely row-major
# (G_EXPANDED: stride 0, as SumBackward0's expand; G_PERMUTED: transposed, which PyTorch's
# elementwise backward formulas keep) or owned by the caller (G_HELD).
G_CONJ, G_EXPANDED, G_HELD, G_PERMUTED = 1, 2, 4, 8
CONJ_RECORDED = [False]   # until a ConjBackward0 node exists no pass looks for one


def _conj_node_init(self, *args, **kwargs):
    CONJ_RECORDED[0] = True
    Node.__init__(self, *args, **kwargs)


CONJ_CLS = _NODE_CLASSES["ConjBackward0"] = type("ConjBackward0", (Node,), {
    "__slots__": (), "__module__": "builtins", "__init__": _conj_node_init})
# what PyTorch's backward of each of these nodes makes of the gradient's layout and bit
GRAD_KINDS = {_NODE_CLASSES.get(name) or _node_class(name): kind for names, kind in (
    (("ConjBackward0",), "conj"),
    (("SumBackward0",), "sum0"),   # grad.expand(...): stride 0 unless 0-d
    (("SumBackward1",), "sum1"),   # unsqueezed and expanded over the reduced dims
    (("TBackward0", "TransposeBackward0", "TransposeBackward1", "PermuteBackward0"), "perm"),
    (("CloneBackward0", "ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0",
      "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
      "SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"), "pass"),
    (("AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1"), "pass0"),
    (("MmBackward0", "AddmmBackward0", "BmmBackward0", "BaddbmmBackward0", "MvBackward0",
      "AddmvBackward0", "DotBackward0", "VdotBackward0"), "dense"))   # (new dense results)
    for name in names}


def grad_mark(g, marks):
    m = marks.get(id(g))
    return m[1] if m is not None and m[0] is g else 0


def mark_grads(kind, edges, g_in, grads, marks):
    """Record in `marks` what PyTorch's node of `kind` makes of its gradient `g_in` (the
    conj bit, the layout) for the gradients `grads` it returns (aligned with `edges`)."""
    m = 0 if g_in is None else grad_mark(g_in, marks)
    if kind == "pass0":   # the gradient itself, for the first input only when it is alone
        if any(e is not None for e in edges[1:]):
            kind = None   # (PyTorch's one tensor for both inputs: not modelled)
        else:
            grads = grads[:1]
    if kind is None:   # a new tensor; laid out as its gradient by an elementwise formula
        m &= G_PERMUTED
        if not m:
            return
        for g in grads:
            if g is not None and g.shape == g_in.shape:
                marks[id(g)] = (g, m)
        return
    if kind == "dense":
        return
    if kind == "conj":   # a new conj view (of a conj view: a plain one) with g_in's strides
        if not grads or grads[0] is None or not jnp.iscomplexobj(grads[0]):
            return   # (ifft of a real input: one node of ours, PyTorch's conj then R2C)
        out = (m ^ G_CONJ) & ~G_HELD
    elif not grads or grads[0] is None:
        return
    elif kind == "sum0":
        out = m | G_EXPANDED if grads[0].ndim else m
    elif kind == "sum1":   # (over a dim of size 1 the expand changes no stride)
        out = m | G_EXPANDED if _numel(grads[0].shape) != _numel(g_in.shape) else m
    elif kind == "perm":   # (approximated: permuted dims of size 1 keep the layout contract)
        out = m | G_PERMUTED if sum(n > 1 for n in grads[0].shape) > 1 else m
    else:   # "pass", "pass0"
        out = m
    if out:
        for g in grads:
            if g is not None and (g_in is None or g.shape == g_in.shape or kind != "pass0"):
                marks[id(g)] = (g, out)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def conj_tensor(g, device=None):
    """A tensor holding `g`'s values as a conj view (PyTorch's `.grad` out of ConjBackward0)."""
    from .._ops.conj_views import set_bits
    from .._tensor import _wrap
    return set_bits(_wrap(jnp.conj(g), device=device), conj=True)


def keeps_conj(var):
    """Whether PyTorch's AccumulateGrad may steal a dense row-major gradient for `var` (its
    strides are the leaf's)."""
    return var._view is None or var.is_contiguous()


def root_marks(grads, tensors):
    """`marks` for gradients given by the caller (`backward(g)`): held by the caller, and a
    conj view's or a strided tensor's said so. None when no gradient is a view."""
    marks = None
    for g, t in zip(grads, tensors):
        if t is not None and t._view is not None:
            bits = G_HELD | (G_CONJ if t.is_conj() else 0)
            if not t.is_contiguous():
                bits |= G_EXPANDED if 0 in t.stride() else G_PERMUTED
            marks = marks or {}
            marks[id(g)] = (g, bits)
    return marks
