"""`F.pairwise_distance`, `F.cosine_similarity`, `F.pdist`, `F.normalize`."""
import torchish
from ... import _autocast
from ..._ops import nn_ops as _nn
from ..._ops.pointwise import _add_scalar
from ..._ops.recording import records as _records

__all__ = ["pairwise_distance", "cosine_similarity", "pdist", "normalize"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if x1.dtype is torchish.bool and x2.dtype is torchish.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _records(x1, x2):  # PyTorch's composite, op by op: norm(x1 - x2 + eps, p, last dim)
        dim = max(x1.ndim, x2.ndim, 1) - 1
        return _nn._norm_dim(_add_scalar(x1 - x2, eps), float(p), dim, bool(keepdim))
    return _nn._pairwise_distance(x1, x2, float(p), float(eps), bool(keepdim))


@_autocast.casts("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    d1, d2 = x1.dtype, x2.dtype
    if d1.is_complex or d2.is_complex or not (d1.is_floating_point or d2.is_floating_point):
        common = torchish.result_type(x1, x2)
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._legacy}")
    nd = max(x1.ndim, x2.ndim)
    n = max(nd, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if _records(x1, x2):
        return _cosine_steps(x1, x2, dim, eps)
    return _nn._cosine_similarity(x1, x2, dim % n, float(eps))


def _cosine_steps(x1, x2, dim, eps):
    """PyTorch's composite op by op: each operand over its norm, the norm clamped at eps
    outside the graph (on a clone: the clamp's gradient is the identity)."""
    dtype = torchish.result_type(x1, x2)
    x1, x2 = (x if x.is_floating_point() or x.is_complex() else x.to(dtype) for x in (x1, x2))
    if x1.shape != x2.shape:  # ATen's expand_outplace: both expanded (ExpandBackward0)
        shape = torchish.broadcast_shapes(x1.shape, x2.shape)
        x1, x2 = x1.expand(shape), x2.expand(shape)
    parts = []
    for x in (x1, x2):
        norm = torchish.linalg.vector_norm(x, 2, dim, keepdim=True).clone()
        with torchish.no_grad():
            norm.clamp_min_(eps)
        parts.append(x / norm)
    return (parts[0] * parts[1]).sum(dim)


@_autocast.casts("pdist")
def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    return _nn._pdist(input, float(p))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return out.copy_(input / denom)
