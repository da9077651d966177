"""`F.pairwise_distance`, `F.cosine_similarity`, `F.pdist`, `F.normalize`."""
import torchish
from ... import _autocast
from ..._ops import nn_ops as _nn

__all__ = ["pairwise_distance", "cosine_similarity", "pdist", "normalize"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if x1.dtype is torchish.bool and x2.dtype is torchish.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    return _nn._pairwise_distance(x1, x2, float(p), float(eps), bool(keepdim))


@_autocast.casts("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    nd = max(x1.ndim, x2.ndim)
    n = max(nd, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return _nn._cosine_similarity(x1, x2, dim % n, float(eps))


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
