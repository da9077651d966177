"""`F.scaled_dot_product_attention`, as PyTorch's CPU math kernel computes it.

PyTorch routes 4-D inputs without dropout that pass its gates (`_use_flash`) to its fused CPU
kernel (node ScaledDotProductFlashAttentionForCpuBackward0) and everything else to the math
composition (last node UnsafeViewBackward0; half/bfloat16 computed in float32 and cast back,
ToCopyBackward0). With dropout the math path is spelled out here with tensor ops so `dropout`
draws exactly what PyTorch draws.
"""
import math

import torchish
from ... import _autocast, backends
from ..._ops import nn_ops as _nn

__all__ = ["scaled_dot_product_attention"]


def _infer_size(a, b):
    """Broadcast two shapes, failing with the message of PyTorch's infer_size."""
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a1, b1)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _check(query, key, value, attn_mask, is_causal, enable_gqa, flash):
    if not (query.dtype == key.dtype == value.dtype):
        from ..._random_engine import _TYPEMETA   # (ATen prints c10's type names here)
        q, k, v = (_TYPEMETA.get(t.dtype.name, t.dtype.name) for t in (query, key, value))
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {q} key.dtype: {k} and value.dtype: {v} instead.")
    if flash:
        return
    # PyTorch's math path: only the fused kernel takes both a mask and is_causal (it masks
    # with their intersection)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    kshape, vshape = tuple(key.shape), tuple(value.shape)
    if enable_gqa and query.ndim >= 3:
        h = query.shape[-3]
        if h % key.shape[-3] or h % value.shape[-3]:
            # (PyTorch's message does end this way)
            raise RuntimeError("Number of heads in key and value must divide the number of "
                               "heads in ")
        kshape = kshape[:-3] + (h,) + kshape[-2:]
        vshape = vshape[:-3] + (h,) + vshape[-2:]
    # then two broadcasting matmuls, the mask added in place to the scores in between
    batch = _infer_size(tuple(query.shape[:-2]), kshape[:-2])
    scores = batch + (query.shape[-2], kshape[-2])
    if attn_mask is not None:
        full = _infer_size(scores, tuple(attn_mask.shape))
        if full != scores:
            raise RuntimeError(f"output with shape {list(scores)} doesn't match the broadcast "
                               f"shape {list(full)}")
    _infer_size(batch, vshape[:-2])


def _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch's CPU backend selection picks its fused kernel, its gates checked in
    its order (the mask-shape gate indexes dims -2/-1, so a 1-D mask raises IndexError there)."""
    if not backends.cuda.flash_sdp_enabled() or dropout_p > 0.0:
        return False
    if not query.ndim == key.ndim == value.ndim == 4:
        return False
    (b, h, L, e), (bk, hk, S, ek), (bv, hv, _, ev) = query.shape, key.shape, value.shape
    if not b == bk == bv:
        return False
    if not (h == hk == hv or (enable_gqa and hk == hv and h % hk == 0)):
        return False
    if attn_mask is not None:
        if attn_mask.requires_grad:
            return False
        if attn_mask.size(-2) not in (L, 1) or attn_mask.size(-1) not in (S, 1):
            return False
        if attn_mask.ndim != 2 and not (attn_mask.ndim == 4 and attn_mask.shape[0] in (1, b)
                                        and attn_mask.shape[1] in (1, h)):
            return False
    if not e == ek == ev or L == 0 or S == 0:
        return False
    return query.stride(-1) == 1 and key.stride(-1) == 1 and value.stride(-1) == 1


@_autocast.casts("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    flash = _use_flash(query, key, value, attn_mask, dropout_p, enable_gqa)
    if not flash and not backends.cuda.math_sdp_enabled():
        raise RuntimeError("No available kernel.  Aborting execution." if
                           backends.cuda.flash_sdp_enabled() else
                           "No viable backend for scaled_dot_product_attention was found. "
                           "This is likely due to turning off both the math kernel and the "
                           "fused kernels.")
    _check(query, key, value, attn_mask, is_causal, enable_gqa, flash)
    dtype = query.dtype
    if (not flash and dtype in (torchish.float16, torchish.bfloat16)
            and not backends.cuda.fp16_bf16_reduction_math_sdp_allowed()):
        # PyTorch's math path computes half/bfloat16 in float32 and casts the result back
        # (grad_fn ToCopyBackward0)
        if attn_mask is not None and attn_mask.dtype is torchish.bool:
            attn_mask = torchish.zeros(attn_mask.shape, dtype=dtype).masked_fill(
                attn_mask.logical_not(), float("-inf"))
        query, key, value = query.float(), key.float(), value.float()
        attn_mask = None if attn_mask is None else attn_mask.float()
    if dropout_p > 0.0:
        out = _math_with_dropout(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                 enable_gqa)
    else:
        out = _nn._scaled_dot_product_attention(query, key, value, attn_mask, bool(is_causal),
                                                None if scale is None else float(scale),
                                                bool(enable_gqa), flash)
    return out.to(dtype)


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
    if enable_gqa and query.ndim >= 3:
        if key.shape[-3] != query.shape[-3]:
            key = key.repeat_interleave(query.shape[-3] // key.shape[-3], dim=-3)
        if value.shape[-3] != query.shape[-3]:
            value = value.repeat_interleave(query.shape[-3] // value.shape[-3], dim=-3)
    attn = q @ (key.transpose(-2, -1) * root)
    if attn_mask is not None:
        attn = attn + attn_mask
    masked_rows = (attn == float("-inf")).all(-1, keepdim=True)
    attn = attn.softmax(-1).masked_fill(masked_rows, 0.0)
    attn = dropout(attn, dropout_p, True)
    return attn @ value
