"""`F.scaled_dot_product_attention`, as PyTorch's CPU math kernel computes it.

PyTorch routes 4-D inputs without dropout to its fused CPU kernel (node
ScaledDotProductFlashAttentionForCpuBackward0) and everything else to the math composition
(last node UnsafeViewBackward0); the value is the same function either way. With dropout the
math path is spelled out here with tensor ops so `dropout` draws exactly what PyTorch draws.
"""
import math

import torchish
from ... import _autocast
from ..._ops import nn_ops as _nn

__all__ = ["scaled_dot_product_attention"]


def _check(query, key, value, attn_mask, is_causal, enable_gqa, flash):
    # only PyTorch's fused CPU kernel takes both (it masks with their intersection); the
    # math path refuses the pair
    if is_causal and attn_mask is not None and not flash:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype} key.dtype: {key.dtype} and value.dtype: "
                           f"{value.dtype} instead.")
    if query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        if not enable_gqa or query.shape[-3] % key.shape[-3]:
            raise RuntimeError(f"The size of tensor a ({query.shape[-3]}) must match the size "
                               f"of tensor b ({key.shape[-3]}) at non-singleton dimension "
                               f"{query.ndim - 3}")


@_autocast.casts("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    # PyTorch's fused CPU kernel takes 4-D inputs, no dropout and no mask that needs a gradient
    flash = dropout_p <= 0.0 and query.ndim == 4 and key.ndim == 4 and value.ndim == 4 and (
        attn_mask is None or not attn_mask.requires_grad)
    _check(query, key, value, attn_mask, is_causal, enable_gqa, flash)
    if dropout_p > 0.0:
        return _math_with_dropout(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                  enable_gqa)
    return _nn._scaled_dot_product_attention(query, key, value, attn_mask, bool(is_causal),
                                             None if scale is None else float(scale),
                                             bool(enable_gqa), flash)


def _math_with_dropout(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    from .dropout import dropout
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(s))
    q = query * (root if s >= 0 else -root)
    L, S = query.shape[-2], key.shape[-2]
    if is_causal:
        attn_mask = torchish.ones(L, S, dtype=torchish.bool).tril()
    if attn_mask is not None and attn_mask.dtype is torchish.bool:
        attn_mask = torchish.zeros(attn_mask.shape, dtype=query.dtype).masked_fill(
            attn_mask.logical_not(), float("-inf"))
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    attn = q @ (key.transpose(-2, -1) * root)
    if attn_mask is not None:
        attn = attn + attn_mask
    masked_rows = (attn == float("-inf")).all(-1, keepdim=True)
    attn = attn.softmax(-1).masked_fill(masked_rows, 0.0)
    attn = dropout(attn, dropout_p, True)
    return attn @ value
