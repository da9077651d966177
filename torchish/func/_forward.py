"""Forward-AD refusals inside the forward-mode transforms (`jvp`, `jacfwd`, the outer
`jacfwd` of `hessian`, `linearize`).

JAX pushes a tangent through any op's forward; PyTorch only through ops with a forward
formula, and raises NotImplementedError for the others when an operand carries a tangent
(`_ops.forward_refusals`, as `autograd.forward_ad`). While such a transform traces,
`dispatch.FUNC_FORWARD` holds its JAX trace (`marked`); an op is refused when an operand is
a tracer of one of those traces, directly or under the tracers of transforms nested inside
(vmap, grad), so an op on constants only never is. It is refused before its forward runs, as
PyTorch's autograd kernel refuses it (and JAX's jvp of a custom_vjp kernel would raise its
own error)."""
import jax
from jax._src.ad_util import Zero
from jax._src.interpreters.ad import JVPTracer, LinearizeTracer

from .._ops.dispatch import FUNC_FORWARD
from .._ops.forward_refusals import forward_ad_refusal

_Tracer = jax.core.Tracer
_TANGENT_TRACERS = (JVPTracer, LinearizeTracer)


def marked(func):
    """`func` (over arrays, differentiated by a JAX forward-mode transform) with that
    transform's trace registered for the ops it runs."""
    def run(*arrays, **kwargs):
        trace = next((a._trace for a in jax.tree_util.tree_leaves(arrays)
                      if isinstance(a, _TANGENT_TRACERS)), None)
        if trace is None:
            return func(*arrays, **kwargs)
        FUNC_FORWARD.append(trace)
        try:
            return func(*arrays, **kwargs)
        finally:
            FUNC_FORWARD.pop()
    return run


def _carries_tangent(leaf):
    """Whether an operand (an array, or a view's `(base, offsets)`) carries a tangent of an
    active forward-mode transform."""
    x = leaf[0] if type(leaf) is tuple else leaf
    while isinstance(x, _Tracer):
        if isinstance(x, _TANGENT_TRACERS):
            if any(x._trace is t for t in FUNC_FORWARD):
                return not isinstance(x.tangent, Zero)
            x = x.primal
        else:   # (a BatchTracer holds the tracers of the levels around it in `val`)
            x = getattr(x, "val", None)
    return False


def refuse(plan, leaves, inplace=False):
    """Raise PyTorch's NotImplementedError for this op call if an operand carries a tangent
    and the op has no forward formula (`dispatch` calls it while FUNC_FORWARD is set)."""
    if any(_carries_tangent(leaf) for leaf in leaves):
        refusal = forward_ad_refusal(plan, inplace)
        if refusal is not None:
            raise refusal
