"""Distances between tensors: `torch.cdist` (with PyTorch's matrix-product path for the
Euclidean distance), `torch.dist`, and the `torch.*` spellings of the `F.*` distances."""
import functools
import math

import jax
import jax.numpy as jnp

from .. import _autocast
from .. import _dtype as dt
from .composite import composite
from .pointwise import legacy_name
from .reduction import order_zero
from .registry import Promote, op

P = Promote


@op(promote=P.NONE, grad_fn="CdistBackward0", method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    for name, x in (("X1", x1), ("X2", x2)):
        kind = dt._BY_NP[x.dtype]
        if not kind.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{kind._legacy}")
        if kind.itemsize == 2:
            raise NotImplementedError(f'"cdist" not implemented for \'{kind._legacy}\'')
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {dt._BY_NP[x1.dtype]._legacy} but found "
                           f"{dt._BY_NP[x2.dtype]._legacy}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    from .errors import broadcast_error
    msg = broadcast_error([x1.shape[:-2], x2.shape[:-2]])   # only batch dims broadcast
    if msg:
        raise RuntimeError(msg)
    if _cdist_uses_mm(x1.shape, x2.shape, p, compute_mode):
        return _euclidean_dist_body(x1, x2)
    return _p_norm(jnp.abs(x1[..., :, None, :] - x2[..., None, :, :]), p, -1, all_ties=True)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _cdist_uses_mm(shape1, shape2, p, compute_mode):
    """Whether PyTorch computes these p=2 distances as |x1|^2 - 2 x1.x2 + |x2|^2 through a
    matmul (asked for, or either side has over 25 rows), rounding as that formula does."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if p != 2 or min(len(shape1), len(shape2)) < 2 or not math.prod(shape1) \
            or not math.prod(shape2):   # (1-d operands: cdist itself refuses them)
        return False
    return compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode != "donot_use_mm_for_euclid_dist" and max(shape1[-2], shape2[-2]) > 25)


def _euclidean_dist_body(x1, x2):
    # [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T, the second operand built transposed: XLA then
    # accumulates the product in PyTorch's order more often
    n1 = _sequential_sum(x1 * x1)[..., None]
    n2 = _sequential_sum(x2 * x2)[..., None, :]
    a = jnp.concatenate([x1 * -2, n1, jnp.ones_like(n1)], -1)
    b = jnp.concatenate([jnp.swapaxes(x2, -1, -2), jnp.ones_like(n2), n2], -2)
    if a.shape[-1] > _SEQUENTIAL_MAX:
        return _clamped_sqrt(jnp.matmul(a, b))
    # few columns: the products summed one by one, in column order (as PyTorch's gemm does
    # here), so a point's distance to itself comes out exactly 0 whatever the CPU's vector
    # width; XLA's dot kernel orders its sums by the host's vector units
    total = a[..., :, None, 0] * b[..., None, 0, :]
    for k in range(1, a.shape[-1]):
        total = total + a[..., :, None, k] * b[..., None, k, :]
    return _clamped_sqrt(total)


_SEQUENTIAL_MAX = 18   # feature columns + 2


def _sequential_sum(products):
    if products.shape[-1] + 2 > _SEQUENTIAL_MAX or not products.shape[-1]:
        return jnp.sum(products, -1)
    total = products[..., 0]
    for k in range(1, products.shape[-1]):
        total = total + products[..., k]
    return total


@jax.custom_jvp
def _clamped_sqrt(r):
    return jnp.sqrt(jnp.maximum(r, 0))


@_clamped_sqrt.defjvp
def _clamped_sqrt_jvp(primals, tangents):
    # a distance clamped to 0 gets gradient 0 (PyTorch's subgradient), not inf or nan
    out = _clamped_sqrt(primals[0])
    zero = out == 0
    return out, jnp.where(zero, 0, tangents[0] / jnp.where(zero, 1, 2 * out))


@op(promote=P.NONE, grad_fn="EuclideanDistBackward0", method=False)
def _euclidean_dist(x1, x2):
    return _euclidean_dist_body(x1, x2)


_cdist_fused = cdist


@_autocast.casts("cdist")
def _cdist_steps(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """PyTorch's cdist when it takes the matmul route: `_euclidean_dist` of the operands
    (expanded to their common batch shape, as 3-d) viewed as the result (ViewBackward0)."""
    if not _cdist_uses_mm(tuple(x1.shape), tuple(x2.shape), p, compute_mode) \
            or x1.shape[-1] != x2.shape[-1] or x1.dtype is not x2.dtype \
            or x1.dtype.itemsize < 4 or not x1.dtype.is_floating_point:
        return _cdist_fused(x1, x2, p, compute_mode)   # (which raises PyTorch's errors)
    from .shape import broadcast_shapes
    batch = tuple(broadcast_shapes(x1.shape[:-2], x2.shape[:-2]))
    shape = batch + (x1.shape[-2], x2.shape[-2])
    if math.prod(batch) != 1:
        x1 = x1.expand(batch + tuple(x1.shape[-2:])).contiguous().view(-1, *x1.shape[-2:])
        x2 = x2.expand(batch + tuple(x2.shape[-2:])).contiguous().view(-1, *x2.shape[-2:])
    return _euclidean_dist(x1, x2).view(shape)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _max_all_ties(a, axis):
    return jnp.max(a, axis)


@_max_all_ties.defjvp
def _max_all_ties_jvp(axis, primals, tangents):
    # PyTorch's cdist / pdist backward gives each entry equal to the maximum the whole gradient
    # (its norm / dist backward, like jnp.max's, shares it among them)
    a, = primals
    out = jnp.max(a, axis)
    return out, jnp.sum(jnp.where(a == jnp.expand_dims(out, axis), tangents[0], 0), axis)


def _p_norm(a, p, axis, all_ties=False):
    """The p-norm of |differences| `a` over `axis`, with a 0 (not nan) gradient where all
    differences are 0, as PyTorch's norm backward. `all_ties`: the infinity norm's gradient
    goes whole to each tied maximum, as in PyTorch's cdist and pdist."""
    if p == 0:
        return jnp.sum((a != 0).astype(a.dtype), axis)
    if p == float("inf"):
        if not a.shape[axis]:
            return jnp.zeros(a.shape[:-1], a.dtype)
        a = jnp.where(a == 0, 0, a)  # sgn(0) = 0: no gradient through a zero difference
        return _max_all_ties(a, axis) if all_ties else jnp.max(a, axis)
    if p == 1:  # gradient sgn(x): 0 at 0 (JAX's |x|' is 1 there)
        return jnp.sum(jnp.where(a == 0, 0, a), axis)
    if p == 2:
        s = jnp.sum(a * a, axis)
    else:  # zero entries get gradient 0, not |0|^(p-1) (inf for p < 1), as in PyTorch
        zero = a == 0
        s = jnp.sum(jnp.where(zero, 0.0 if p > 0 else jnp.inf, jnp.where(zero, 1, a) ** p),
                    axis)
    safe = jnp.where(s == 0, 1, s)
    return jnp.where(s == 0, 0, jnp.sqrt(safe) if p == 2 else safe ** (1 / p))


def _dist_undefined(p=None, **_):
    """Order 0 leaves `input`'s gradient undefined, and `other`'s formula negates it: raises."""
    return (1,) if order_zero(p) else False


# (a norm: real for complex inputs, as PyTorch)
@op(promote=Promote.COMPLEX_TO_FLOAT, grad_fn="DistBackward0", scalar_operands=False,
    undefined_grad=_dist_undefined)
def dist(input, other, p=2):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {legacy_name(input)} instead.")
    return _p_norm(jnp.abs(input - other).reshape(-1), p, -1)


def pdist(input, p=2):
    # `torch.pdist` and kin are `F.*` (declared in _ops/nn_ops.py), as in PyTorch
    from ..nn import functional
    return functional.pdist(input, p)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    from ..nn import functional
    return functional.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from ..nn import functional
    return functional.pairwise_distance(x1, x2, p, eps, keepdim)


PLAIN = ["pdist", "cosine_similarity", "pairwise_distance"]
# with a graph to record, cdist records PyTorch's inner nodes (see composite.py)
_fns = composite("cdist", _cdist_steps)


def _through_steps_with_tangents(binding):
    """`binding`, which also takes PyTorch's inner ops where an operand carries a forward-AD
    tangent: on the matmul route their `_euclidean_dist` is the op forward AD refuses."""
    def cdist(*args, **kwargs):
        operands = args[:2] + tuple(kwargs[k] for k in ("x1", "x2") if k in kwargs)
        if any(getattr(a, "__dict__", {}).get("_fw_tangent") is not None for a in operands):
            return _cdist_steps(*args, **kwargs)
        return binding(*args, **kwargs)
    return functools.wraps(binding)(cdist)


_fns["cdist"] = _through_steps_with_tangents(_fns["cdist"])
globals().update(_fns)
PLAIN += list(_fns)
