"""Ops behind `torch.nn.functional` that PyTorch records under their own `grad_fn` names.

Each is declared once (registry docstring); the Python wrappers in `nn/_functional/` parse
PyTorch's arguments (reduction strings, legacy flags), check what PyTorch checks and call these.
Where PyTorch's backward differs from the true derivative of its forward (embedding's
`padding_idx` row, CTC's log_softmax-shaped gradient, cosine_similarity's no-grad clamp) the
body uses a `stop_gradient` identity so `jax.vjp` yields PyTorch's gradient, with a comment.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import float8
from .half_grad import HALF, Rounder, unfolded
from .pointwise import _true_div
from .reduction import _vector_norm, mean_by_count, order_zero
from .registry import Promote, op

P = Promote
_NN = dict(function=False, method=False)


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    # (half-precision losses accumulate in float32, as ATen's reductions)
    acc = jnp.float32 if loss.dtype in (jnp.bfloat16, jnp.float16) else None
    if reduction == "sum":
        return jnp.sum(loss, dtype=acc).astype(loss.dtype)
    return _loss_mean(loss)


@jax.custom_jvp
def _loss_mean(loss):
    """A 'mean' reduction: PyTorch's sum divided by the count. Its derivative stays the
    product with 1 / n that XLA makes of JAX's mean, as the loss backward kernels (huber's,
    soft margin's) scale the gradient by 1 / numel."""
    return mean_by_count(loss)


@_loss_mean.defjvp
def _loss_mean_jvp(primals, tangents):
    (loss,), (t,) = primals, tangents
    acc = jnp.float32 if loss.dtype in HALF else None
    return _loss_mean(loss), jnp.mean(t, dtype=acc).astype(loss.dtype)


def _grad_scaled(value, scale):
    """`value` forward, `scale * d value` backward."""
    return jax.lax.stop_gradient(value) + (value * scale - jax.lax.stop_gradient(value * scale))


# ---- linear ---------------------------------------------------------------------------------

@op("_bilinear_core", promote=P.DEFAULT, grad_fn="TrilinearBackward0", **_NN,
    tensors=("input1", "input2", "weight"))
def _bilinear_core(input1, input2, weight):
    return jnp.einsum("ni,oij,nj->no", input1, weight, input2)


# ---- losses ---------------------------------------------------------------------------------

def _nll_name(kinds, statics):
    return "NllLoss2DBackward0" if statics["nd"] else "NllLossBackward0"


def _total_weight(input=None, target=None, weight=None, reduction=None, ignore_index=None,
                  **_):
    """NllLossBackward0's `_saved_total_weight`: the summed weight of the counted targets (0
    without a reduction)."""
    from .._tensor import _wrap
    if input is None:   # (freed by backward)
        from ..autograd.graph import _FREED_MSG
        raise RuntimeError(_FREED_MSG)
    total = jnp.zeros((), input.dtype)
    if reduction != "none":
        valid = target != ignore_index
        w = jnp.ones(target.shape, input.dtype) if weight is None else \
            weight[jnp.where(valid, target, 0)]
        total = jnp.sum(jnp.where(valid, w, 0)).astype(input.dtype)
    return _wrap(total)


@op("_nll_loss", promote=P.DEFAULT, promoted=("input", "weight"), grad_fn=_nll_name, **_NN,
    tensors=("input", "target", "weight"), saves=("input", "target", "weight"),
    saved_as={"total_weight": _total_weight},
    non_differentiable=("target", "weight"), kernel=lambda kinds, statics:
    "nll_loss2d_forward" if statics["nd"] else "nll_loss_forward")
def _nll_loss(input, target, weight, reduction, ignore_index, nd):
    if input.ndim == 1:
        x, t = input[None], target[None]
    else:
        x, t = jnp.moveaxis(input, 1, -1), target
    valid = t != ignore_index
    tc = jnp.where(valid, t, 0).astype(jnp.int32)
    # (a select rather than a gather: the gather's pullback adds into zeros, turning the
    # -0.0 that PyTorch writes for a zero class weight into +0.0; ignored entries get none)
    hit = (jnp.arange(x.shape[-1]) == tc[..., None]) & valid[..., None]
    picked = jnp.sum(jnp.where(hit, x, jnp.zeros((), x.dtype)), axis=-1)
    w = jnp.ones((), x.dtype) if weight is None else weight[tc]
    w = jnp.where(valid, w, jnp.zeros((), x.dtype))
    # PyTorch writes +0.0 for an ignored entry (the product would be -0.0)
    loss = jnp.where(valid, -picked * w, jnp.zeros((), x.dtype))
    if reduction == "none":
        return loss.reshape(target.shape)
    # PyTorch accumulates from +0.0, so a reduced zero loss is +0.0; XLA's reduce of one element
    # (or of negated ones) keeps the -0.0, which `0 - x` avoids without being folded away
    total = jnp.sum(jnp.zeros((), x.dtype) - picked * w)
    if reduction == "sum":
        return total
    return total / jnp.sum(w)


def _pointwise_loss_jvp(loss, factor):
    """`loss(input, target, reduction, *params)` differentiated as PyTorch's loss backward
    kernels: grad_input = factor(input, target, norm, r, *params) * grad, grad_target its
    negation; `norm` is the reduction's 1 / numel (mean) or 1. For a half input the factor
    computes in float32 and `r` rounds where PyTorch's kernel does (see half_grad.py)."""
    @functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3))
    def rule(input, target, reduction, params):
        return loss(input, target, reduction, *params)

    @rule.defjvp
    def rule_jvp(reduction, params, primals, tangents):
        (x, t), (tx, tt) = primals, tangents
        r = Rounder(x.dtype if x.dtype in HALF else None)
        compute = jnp.float32 if r.half is not None else x.dtype
        x, t, tx, tt = (v.astype(compute) for v in (x, t, tx, tt))
        norm = jnp.asarray(1 / x.size if reduction == "mean" else 1.0, compute)
        # (the barrier keeps XLA from reassociating the factor's products with grad's)
        k = jax.lax.optimization_barrier(factor(x, t, norm, r, *params))
        d = k * tx - k * tt
        out = rule(*primals, reduction, params)
        return out, (d if reduction == "none" else jnp.sum(d)).astype(out.dtype)
    return lambda input, target, reduction, *params: rule(input, target, reduction, params)


def _mse_factor(x, t, norm, r):
    # (2 * norm) * (input - target), every op in the input's type
    return r(r(norm * 2) * r(x - t))


def _smooth_l1_factor(x, t, norm, r, beta):
    # norm * (sign(d) where |d| >= beta, else d / beta), d = input - target: in float32 for a
    # half input, as one kernel
    d = x - t
    out = jnp.where(jnp.abs(d) >= beta, jnp.where(d > 0, 1.0, -1.0), d / unfolded(beta, d))
    return norm * out


_mse = _pointwise_loss_jvp(lambda x, t, reduction: _reduce((x - t) ** 2, reduction),
                           _mse_factor)


def _smooth_l1_value(input, target, reduction, beta):
    d = jnp.abs(input - target)
    return _reduce(jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


_smooth_l1 = _pointwise_loss_jvp(_smooth_l1_value, _smooth_l1_factor)


@op("_mse_loss", promote=P.DEFAULT, grad_fn="MseLossBackward0", **_NN,
    tensors=("input", "target"))
def _mse_loss(input, target, reduction):
    return _mse(input, target, reduction)


@op("_smooth_l1_loss", promote=P.DEFAULT, grad_fn="SmoothL1LossBackward0", **_NN,
    tensors=("input", "target"))
def _smooth_l1_loss(input, target, reduction, beta):
    return _smooth_l1(input, target, reduction, beta)


@op("_huber_loss", promote=P.DEFAULT, grad_fn="HuberLossBackward0", **_NN,
    tensors=("input", "target"))
def _huber_loss(input, target, reduction, delta):
    d = jnp.abs(input - target)
    return _reduce(jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


_BCE_EPSILON = np.float32(1e-12)   # (a float constant in PyTorch's kernel, in either dtype)


@jax.custom_jvp
def _bce_terms(x, y):
    # PyTorch clamps each log term at -100 so that 0 * log(0) stays finite
    log_x = jnp.maximum(jnp.log(x), -100.0)
    log_1mx = jnp.maximum(jnp.log1p(-x), -100.0)
    return -(y * log_x + (1 - y) * log_1mx)


@_bce_terms.defjvp
def _bce_terms_jvp(primals, tangents):
    # PyTorch's backward divides by max(x (1 - x), epsilon): finite where the clamped logs
    # would give 0 * inf at an input of exactly 0 or 1 (a saturated sigmoid); the target's
    # gradient is the unclamped log(1 - x) - log(x)
    x, y = primals
    dx, dy = tangents
    gx = (x - y) / jnp.maximum((1 - x) * x, _BCE_EPSILON.astype(x.dtype))
    gy = jnp.log1p(-x) - jnp.log(x)
    return _bce_terms(x, y), gx * dx + gy * dy


@op("_binary_cross_entropy", promote=P.DEFAULT, promoted=("input", "target"),
    grad_fn="BinaryCrossEntropyBackward0", **_NN, tensors=("input", "target", "weight"),
    non_differentiable=("weight",))
def _binary_cross_entropy(input, target, weight, reduction):
    loss = _bce_terms(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _in_float(fn, x):
    """fn(x) computed in float32 and rounded to x's half-precision dtype, as ATen's kernels."""
    if x.dtype in (jnp.bfloat16, jnp.float16):
        return fn(x.astype(jnp.float32)).astype(x.dtype)
    return fn(x)


def _bce_logits_forward(input, target, pos_weight):
    # ATen's steps, in place: the loss is a tensor of target's dtype, log_sigmoid(input) one of
    # input's (mixed dtypes compute promoted and round into them)
    log_sig = _in_float(jax.nn.log_sigmoid, input)
    if pos_weight is not None:
        log_sig = (log_sig * ((pos_weight - 1) * target + 1)).astype(input.dtype)
    loss = ((1 - target) * input).astype(target.dtype)
    return (loss - log_sig).astype(target.dtype)


@jax.custom_jvp
def _bce_logits_terms(input, target, pos_weight):
    return _bce_logits_forward(input, target, pos_weight)


@_bce_logits_terms.defjvp
def _bce_logits_terms_jvp(primals, tangents):
    # PyTorch's backward formulas: input's gradient is (sigmoid(x) - y) * grad (with
    # pos_weight p: ((p y + 1 - y) sigmoid(x) - p y) * grad), so a zero `weight` gives -0.0
    # where it is negative (JAX's derivative of the forward gives +0.0); target's is -x * grad
    # (log_sigmoid(-x) - p log_sigmoid(x)). pos_weight takes no gradient (non-differentiable).
    x, y, pw = primals
    dx, dy, _ = tangents
    out = _bce_logits_forward(x, y, pw)
    sig = _in_float(jax.nn.sigmoid, x)
    if pw is None:
        gx, gy = sig - y, -x
    else:
        t = pw * y
        gx = (t + 1 - y) * sig - t
        gy = _in_float(jax.nn.log_sigmoid, -x) - pw * _in_float(jax.nn.log_sigmoid, x)
    return out, (gx * dx).astype(out.dtype) + (gy * dy).astype(out.dtype)


@op("_binary_cross_entropy_with_logits", promote=P.NONE,
    grad_fn="BinaryCrossEntropyWithLogitsBackward0", **_NN,
    tensors=("input", "target", "weight", "pos_weight"), non_differentiable=("weight", "pos_weight"))
def _binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction):
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        from .pointwise import not_implemented
        raise not_implemented("log_sigmoid_cpu", input)
    if jnp.issubdtype(target.dtype, jnp.inexact):
        loss = _bce_logits_terms(input, target, pos_weight)
    else:
        loss = _bce_logits_forward(input, target, pos_weight)
    if weight is not None:
        loss = (loss * weight).astype(target.dtype)
    return _reduce(loss, reduction)


@op("_soft_margin_loss", promote=P.DEFAULT, grad_fn="SoftMarginLossBackward0", **_NN,
    tensors=("input", "target"), non_differentiable=("target",))
def _soft_margin_loss(input, target, reduction):
    return _reduce(jnp.log1p(jnp.exp(-target * input)), reduction)


@op("_multi_margin_loss", promote=P.DEFAULT, promoted=("input", "weight"),
    grad_fn="MultiMarginLossBackward0", **_NN, tensors=("input", "target", "weight"),
    non_differentiable=("target", "weight"))
def _multi_margin_loss(input, target, weight, p, margin, reduction):
    x = input if input.ndim == 2 else input.reshape(1, -1)  # 0-d: one sample, one class
    t = (target if target.ndim == 1 else target.reshape(1)).astype(jnp.int32)
    c = x.shape[1]
    xt = jnp.take_along_axis(x, t[:, None], 1)
    z = jnp.maximum(margin - xt + x, 0)
    z = z if p == 1 else z * z
    if weight is not None:
        z = z * weight[t][:, None]
    z = jnp.where(jnp.arange(c)[None] == t[:, None], 0, z)
    loss = jnp.sum(z, 1) / c
    if input.ndim <= 1:
        loss = loss[0] if target.ndim == 0 else loss
    return _reduce(loss, reduction)


@op("_multilabel_margin_loss", promote=P.NONE, grad_fn="MultilabelMarginLossBackward0", **_NN,
    tensors=("input", "target"), non_differentiable=("target",))
def _multilabel_margin_loss(input, target, reduction):
    x = input if input.ndim == 2 else input.reshape(1, -1)  # 0-d: one sample, one class
    t = (target if target.ndim == 2 else target.reshape(1, -1)).astype(jnp.int32)
    c = x.shape[1]
    # targets are the prefix of each row before the first -1
    valid = jnp.cumprod(t >= 0, axis=1).astype(bool)
    tc = jnp.where(valid, t, 0)
    is_target = jnp.zeros(x.shape, bool).at[jnp.arange(x.shape[0])[:, None], tc].max(valid)
    xt = jnp.take_along_axis(x, tc, 1)
    z = jnp.maximum(1 - xt[:, :, None] + x[:, None, :], 0)
    z = jnp.where(valid[:, :, None] & ~is_target[:, None, :], z, 0)
    loss = jnp.sum(z, (1, 2)) / c
    if input.ndim <= 1:
        loss = loss[0]
    return _reduce(loss, reduction)


def _lse3(a, b, c):
    """log(e^a + e^b + e^c) with a zero (not nan) gradient where all three are -inf."""
    m = jnp.maximum(jnp.maximum(a, b), c)
    ms = jnp.where(jnp.isfinite(m), m, 0)
    total = jnp.exp(a - ms) + jnp.exp(b - ms) + jnp.exp(c - ms)
    pos = total > 0
    return jnp.where(pos, ms + jnp.log(jnp.where(pos, total, 1)), -jnp.inf)


def _ctc_alpha(lp, tg, in_len, tg_len, blank):
    """-log p(target | log_probs) for one sample by the alpha recursion (log space)."""
    t_max = lp.shape[0]
    s_len = 2 * tg.shape[0] + 1
    ext = jnp.full((s_len,), blank, jnp.int32).at[1::2].set(tg.astype(jnp.int32))
    neg_inf = jnp.asarray(-jnp.inf, lp.dtype)
    s_idx = jnp.arange(s_len)
    s_valid = s_idx < 2 * tg_len + 1
    skip_ok = (s_idx >= 2) & (ext != blank) & (ext != jnp.roll(ext, 2))
    emit = lp[:, ext]  # (T, S)
    alpha0 = jnp.where((s_idx < 2) & s_valid, emit[0], neg_inf)

    def step(alpha, t):
        a1 = jnp.concatenate([jnp.full((1,), neg_inf, lp.dtype), alpha[:-1]])
        a2 = jnp.concatenate([jnp.full((2,), neg_inf, lp.dtype), alpha[:-2]])
        a2 = jnp.where(skip_ok, a2, neg_inf)
        new = jnp.where(s_valid, _lse3(alpha, a1, a2) + emit[t], neg_inf)
        return jnp.where(t < in_len, new, alpha), None

    alpha, _ = jax.lax.scan(step, alpha0, jnp.arange(1, t_max))
    end = 2 * tg_len
    a_last = alpha[end]
    a_prev = jnp.where(tg_len > 0, alpha[jnp.maximum(end - 1, 0)], neg_inf)
    return -_lse3(a_last, a_prev, neg_inf)


@op("_ctc_loss", promote=P.NONE, grad_fn="CtcLossBackward0", **_NN,
    tensors=("log_probs", "targets", "input_lengths", "target_lengths"))
def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity,
              concat):
    lp = log_probs if log_probs.ndim == 3 else log_probs[:, None]
    n = lp.shape[1]
    if concat:  # 1-D targets: the samples' targets one after another
        max_len = targets.shape[0]
        starts = jnp.cumsum(target_lengths) - target_lengths
        idx = jnp.clip(starts[:, None] + jnp.arange(max_len)[None], 0, max(max_len - 1, 0))
        tg = targets[idx] if max_len else jnp.zeros((n, 0), targets.dtype)
    else:
        tg = targets if targets.ndim == 2 else targets[None]
    nll = jax.vmap(_ctc_alpha, in_axes=(1, 0, 0, 0, None))(
        lp, tg, input_lengths, target_lengths, blank)
    # PyTorch's backward returns exp(log_probs) - occupation (the gradient as if log_probs
    # came from log_softmax), for t < input_length: add a zero-valued term with that slope.
    t_mask = (jnp.arange(lp.shape[0])[:, None] < input_lengths[None, :])[..., None]
    e = jnp.sum(jnp.where(t_mask, jnp.exp(lp), 0), axis=(0, 2))
    e = e - jax.lax.stop_gradient(e)
    if zero_infinity:  # infinite losses get a zero gradient (the caller zeroes the value)
        nll = jnp.where(jnp.isinf(nll), jax.lax.stop_gradient(nll), nll + e)
    else:
        # PyTorch's gradient for an infinite loss is nan (its formula meets inf - inf) for
        # t < input_length: add a zero-valued term whose slope there is nan (sqrt at 0, times
        # 0), kept out of the other samples by the double where
        sel = t_mask & jnp.isinf(nll)[None, :, None]
        lpf = jnp.where(jnp.isfinite(lp), lp, 0)
        zero = (lpf - jax.lax.stop_gradient(lpf)) * 0
        poison = jnp.where(sel, jnp.sqrt(jnp.where(sel, zero, 1)), 0)
        nll = nll + e + jnp.sum(poison, axis=(0, 2))
    return nll if log_probs.ndim == 3 else nll[0]


# ---- embedding ------------------------------------------------------------------------------

@op("_embedding", promote=P.NONE, grad_fn="EmbeddingBackward0", **_NN,
    tensors=("weight", "indices"), saves=("indices",))
def _embedding(weight, indices, padding_idx, scale_grad_by_freq):
    idx = indices.astype(jnp.int32)
    out = weight[idx]
    if padding_idx is None and not scale_grad_by_freq:
        return out
    scale = jnp.ones(idx.shape, weight.dtype)
    if scale_grad_by_freq:
        counts = jnp.zeros((weight.shape[0],), weight.dtype).at[idx.reshape(-1)].add(1)
        scale = 1 / counts[idx]
    if padding_idx is not None:  # PyTorch's backward skips the padding row
        scale = jnp.where(idx == padding_idx, 0, scale)
    return _grad_scaled(out, scale[..., None])


@op("_embedding_bag", promote=P.NONE, grad_fn="EmbeddingBagBackward0", **_NN,
    tensors=("weight", "indices", "offsets", "per_sample_weights"),
    optional_tensors=("per_sample_weights",))
def _embedding_bag(weight, indices, offsets, per_sample_weights, mode, padding_idx,
                   n_bags, scale_grad_by_freq):
    idx = indices.astype(jnp.int32)
    n = idx.shape[0]
    # ATen's offset2bag: each index's bag counts the bag starts at or before it (unsorted
    # offsets, accepted by max mode and the double kernel, give PyTorch's bags too)
    marks = jnp.zeros((n + 1,), jnp.int32).at[offsets[1:n_bags].astype(jnp.int32)].add(1)
    bag = jnp.cumsum(marks)[:n]
    keep = jnp.ones((n,), bool) if padding_idx is None else idx != padding_idx
    # with include_last_offset, the float/half kernel sums only up to the last offset while
    # the bag sizes (mean) still count the indices after it
    summed = keep
    if n_bags < offsets.shape[0] and mode != "max" and padding_idx is None and \
            weight.dtype in (jnp.float32, jnp.float16, jnp.bfloat16):
        summed = keep & (jnp.arange(n) < offsets[n_bags])
    rows = weight[idx]
    if scale_grad_by_freq:
        # (the weight's gradient only) ATen's CPU backward divides the r-th distinct index's
        # rows by the count of sorted_indices[r], not by their own count: matched as it is
        counts = jnp.zeros((weight.shape[0],), weight.dtype).at[idx].add(1)
        rank = jnp.cumsum(counts > 0) - 1
        scale = 1 / counts[jnp.sort(idx)[rank[idx]]]
        rows = _grad_scaled(rows, scale[:, None])
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    seg = jnp.where(keep, bag, n_bags)  # dropped rows go to an extra segment
    if mode == "max":
        out = jax.ops.segment_max(rows, seg, num_segments=n_bags + 1)[:n_bags]
        cnt = jax.ops.segment_sum(keep.astype(jnp.int32), seg, num_segments=n_bags + 1)
        return jnp.where(cnt[:n_bags, None] > 0, out, 0)
    out = jax.ops.segment_sum(rows, jnp.where(summed, bag, n_bags),
                              num_segments=n_bags + 1)[:n_bags]
    if mode == "mean":
        # ATen's bag sizes come from the offsets (the last bag ends at n), less the padding
        # entries of the bag; a bag whose size is not positive is left undivided
        starts = offsets[:n_bags].astype(jnp.int32)
        ends = jnp.concatenate([starts[1:], jnp.full((1,), n, jnp.int32)])
        padded = jax.ops.segment_sum((~keep).astype(jnp.int32), bag, num_segments=n_bags)
        size = (ends - starts - padded).astype(weight.dtype)[:, None]
        out = jnp.where(size > 0, out / jnp.where(size > 0, size, 1), out)
    return out


# ---- activations with their own nodes -------------------------------------------------------

@op("_glu", promote=P.NONE, grad_fn="GluBackward0", **_NN, tensors=("input",))
def _glu(input, dim):
    a, b = jnp.split(input, 2, axis=dim)
    return a * jax.nn.sigmoid(b)


@op("_prelu", promote=P.NONE, grad_fn="PreluKernelBackward0", **_NN,
    tensors=("input", "weight"))
def _prelu(input, weight):
    w = weight
    if input.ndim >= 2 and weight.size > 1:
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    elif weight.ndim > input.ndim:
        w = weight.reshape(input.shape if input.ndim else ())
    if input.dtype in HALF and w.shape != input.shape:
        return jnp.where(input > 0, input, _half_prelu_scale(jnp.broadcast_to(w, input.shape),
                                                             input))
    return jnp.where(input > 0, input, w * input)


@jax.custom_jvp
def _half_prelu_scale(w, x):
    """`w * x` for a weight broadcast over a half-precision input. PyTorch's prelu backward
    rounds each element's weight gradient (g * x) to the half type before summing them (in
    float32); XLA would fuse the product into the sum unrounded. The tangent map rounds
    explicitly, so its transpose (the pullback) rounds g * x."""
    return w * x


@_half_prelu_scale.defjvp
def _half_prelu_scale_jvp(primals, tangents):
    (w, x), (tw, tx) = primals, tangents
    info = jnp.finfo(x.dtype)
    tw = jax.lax.reduce_precision(tw.astype(jnp.float32), exponent_bits=info.nexp,
                                  mantissa_bits=info.nmant)
    return w * x, (tw * x.astype(jnp.float32)).astype(x.dtype) + tx * w


@op("_rrelu_with_noise", promote=P.NONE, grad_fn="RreluWithNoiseBackward0", **_NN,
    tensors=("input", "noise"), non_differentiable=("noise",))
def _rrelu_with_noise(input, noise):
    return jnp.where(input > 0, input, input * noise)


# ---- padding --------------------------------------------------------------------------------

def _pad_name(kinds, statics):
    mode = statics["mode"]
    if mode == "constant":
        return "ConstantPadNdBackward0"
    if mode == "circular":
        return "torch::autograd::CopySlices"
    k = len(statics["pad"]) // 2
    return f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{k}DBackward0"


@op("_pad", promote=P.NONE, grad_fn=_pad_name, **_NN, tensors=("input",))
def _pad(input, pad, mode, value):
    if float8.is_float8(input.dtype):   # (moved as bits: XLA's CPU rewrites NaN patterns)
        bits = functools.partial(jax.lax.bitcast_convert_type, new_dtype=jnp.uint8)
        value = bits(float8.number_as(value, input.dtype)) if mode == "constant" else value
        return jax.lax.bitcast_convert_type(_padded(bits(input), pad, mode, value),
                                            input.dtype)
    return _padded(input, pad, mode, value)


def _padded(input, pad, mode, value):
    nd = input.ndim
    cfg = [(0, 0)] * nd
    for i in range(len(pad) // 2):
        cfg[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        v = float8.number_as(value, input.dtype)
        return jax.lax.pad(input, v, [(lo, hi, 0) for lo, hi in cfg])
    if mode == "replicate":
        # output j reads input clamp(j - lo, 0, n - 1): a crop larger than the input (a
        # negative lo with a larger hi) still replicates the edge, as PyTorch does
        for d, (lo, hi) in enumerate(cfg):
            if lo or hi:
                n = input.shape[d]
                src = np.clip(np.arange(n + lo + hi) - lo, 0, n - 1)
                input = jnp.take(input, jnp.asarray(src), axis=d)
        return input
    # negative pads crop first; the positive ones then pad the cropped tensor
    sl = tuple(slice(-min(lo, 0), input.shape[d] + min(hi, 0)) for d, (lo, hi) in enumerate(cfg))
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in cfg]
    jmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return jnp.pad(input[sl], pos, mode=jmode)


# ---- distances ------------------------------------------------------------------------------

@op("_cosine_similarity", promote=P.INT_TO_FLOAT, grad_fn="SumBackward1", **_NN,
    tensors=("x1", "x2"))
def _cosine_similarity(x1, x2, dim, eps):
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    if x1.ndim == 0:  # 0-d inputs: dim 0 / -1 of a 1-element vector
        return _cos_sim(x1.reshape(1), x2.reshape(1), 0, eps)
    return _cos_sim(x1, x2, dim, eps)


def _half_norm(x, p, axis, keepdim):
    """A vector norm as ATen's: half/bfloat16 inputs accumulate in float32 (their squares
    would underflow in half) and round once."""
    if x.dtype in HALF:
        return _vector_norm(x.astype(jnp.float32), p, axis, keepdim).astype(x.dtype)
    return _vector_norm(x, p, axis, keepdim)


def _cos_sim(x1, x2, dim, eps):
    n1 = _half_norm(x1, 2.0, (dim,), True)
    n2 = _half_norm(x2, 2.0, (dim,), True)
    # PyTorch clamps the norms at eps under no_grad: forward clamped, backward as identity
    n1 = n1 + jax.lax.stop_gradient(jnp.maximum(n1, eps) - n1)
    n2 = n2 + jax.lax.stop_gradient(jnp.maximum(n2, eps) - n2)
    q1, q2 = _true_div(x1, n1), _true_div(x2, n2)   # (as ATen divides: not by a reciprocal)
    if q1.dtype in HALF:   # each ATen op rounds: XLA would fuse the quotients unrounded
        q1, q2 = jax.lax.optimization_barrier((q1, q2))
    prod = q1 * q2
    if prod.dtype in HALF:   # (ATen's sum accumulates half in float32)
        prod = jax.lax.optimization_barrier(prod)
        return jnp.sum(prod.astype(jnp.float32), axis=dim).astype(prod.dtype)
    return jnp.sum(prod, axis=dim)


# INT_TO_FLOAT: PyTorch's `x1 - x2 + eps` turns integers into the default dtype
@op("_pairwise_distance", promote=P.INT_TO_FLOAT, grad_fn="NormBackward1", **_NN,
    tensors=("x1", "x2"), undefined_grad=order_zero)
def _pairwise_distance(x1, x2, p, eps, keepdim):
    d = x1 - x2 + eps
    nd = max(x1.ndim, x2.ndim)
    if nd == 0:
        return _half_norm(d.reshape(1), float(p), (0,), False).reshape(())
    return _half_norm(d, float(p), (nd - 1,), keepdim)


@op("_norm_dim", promote=P.NONE, grad_fn="NormBackward1", **_NN, tensors=("input",),
    undefined_grad=order_zero)
def _norm_dim(input, p, dim, keepdim):
    """ATen's `norm(Tensor, Scalar p, int[] dim, bool keepdim)` (NormBackward1)."""
    if input.ndim == 0:
        return _half_norm(input.reshape(1), float(p), (0,), False).reshape(())
    return _half_norm(input, float(p), (dim,), keepdim)


@op("_pdist", promote=P.NONE, grad_fn="PdistBackward0", **_NN, tensors=("input",))
def _pdist(input, p):
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = jnp.triu_indices(n, 1)
    if p == math.inf:  # each tied largest difference gets the whole gradient, as in cdist
        from .linalg_distance import _p_norm
        return _p_norm(jnp.abs(input[i] - input[j]), math.inf, -1, all_ties=True)
    return _vector_norm(input[i] - input[j], float(p), (1,), False)


# ---- attention ------------------------------------------------------------------------------

def _sdpa_name(kinds, statics):
    return "ScaledDotProductFlashAttentionForCpuBackward0" if statics["flash"] else \
        "UnsafeViewBackward0"


@op("_scaled_dot_product_attention", promote=P.NONE, grad_fn=_sdpa_name, **_NN,
    tensors=("query", "key", "value", "attn_mask"))
def _scaled_dot_product_attention(query, key, value, attn_mask, is_causal, scale, enable_gqa,
                                  flash):
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.ndim >= 3:
        if key.shape[-3] != query.shape[-3]:
            key = jnp.repeat(key, query.shape[-3] // key.shape[-3], axis=-3)
        if value.shape[-3] != query.shape[-3]:
            value = jnp.repeat(value, query.shape[-3] // value.shape[-3], axis=-3)
    dtype = query.dtype
    L, S = query.shape[-2], key.shape[-2]
    if flash:
        # PyTorch's fused CPU kernel: scores q @ k^T in the accumulation type (float32 for
        # half/bfloat16), scaled after the product; exp(scores - max) summed unrounded but
        # rounded to the input dtype for the product with v; divided by the sum at the end
        acc = jnp.promote_types(dtype, jnp.float32)
        attn = jnp.matmul(query.astype(acc), jnp.swapaxes(key, -2, -1).astype(acc)) * s
    else:
        # the math path scales q and k by sqrt(scale) each (callers upcast half/bfloat16)
        root = math.sqrt(abs(s))
        acc = dtype
        q = query * (root if s >= 0 else -root)
        attn = jnp.matmul(q, jnp.swapaxes(key, -2, -1) * root)
    if attn_mask is not None:
        if attn_mask.dtype == jnp.bool_:
            attn_mask = jnp.where(attn_mask, jnp.zeros((), attn.dtype),
                                  jnp.asarray(-jnp.inf, attn.dtype))
        attn = attn + attn_mask.astype(attn.dtype)
    if is_causal:
        # the fused kernel applies the causal mask on top of an explicit one
        attn = jnp.where(jnp.tril(jnp.ones((L, S), bool)), attn,
                         jnp.asarray(-jnp.inf, attn.dtype))
    # PyTorch's _safe_softmax: rows that are entirely -inf give zeros, not nan
    row_max = jnp.max(attn, axis=-1, keepdims=True)
    all_masked = jnp.isneginf(row_max)
    if not flash:
        w = jax.nn.softmax(jnp.where(all_masked, 0, attn), axis=-1)
        return jnp.matmul(jnp.where(all_masked, 0, w), value)
    e = jnp.exp(attn - jnp.where(all_masked, 0, row_max))
    total = jnp.sum(e, axis=-1, keepdims=True)
    out = jnp.matmul(e.astype(dtype), value, preferred_element_type=acc)
    return jnp.where(all_masked, 0, out / jnp.where(all_masked, 1, total)).astype(dtype)


# ---- packed sequences (nn.utils.rnn) --------------------------------------------------------
# `batch_sizes` is static: it fixes the gather pattern, as it fixes PyTorch's kernel loop.

def _packed_index(batch_sizes, batch):
    return [t * batch + b for t, n in enumerate(batch_sizes) for b in range(n)]


@op("_pack_padded_sequence", promote=P.NONE, grad_fn="PackPaddedSequenceBackward0", **_NN,
    tensors=("input",))
def _pack_padded_sequence(input, batch_sizes):
    t, b = input.shape[0], input.shape[1]
    flat = input.reshape((t * b,) + input.shape[2:])
    return flat[jnp.asarray(_packed_index(batch_sizes, b), jnp.int32)]


@op("_pad_packed_sequence", promote=P.NONE, grad_fn="torch::autograd::CopySlices", **_NN,
    tensors=("data",))
def _pad_packed_sequence(data, batch_sizes, padding_value, total_length):
    b = batch_sizes[0] if batch_sizes else 0
    out = jnp.full((total_length * b,) + data.shape[1:], padding_value, data.dtype)
    out = out.at[jnp.asarray(_packed_index(batch_sizes, b), jnp.int32)].set(data)
    return out.reshape((total_length, b) + data.shape[1:])


@op("_pad_sequence", promote=P.NONE, grad_fn="torch::autograd::CopySlices", **_NN,
    tensors=("sequences",))
def _pad_sequence(sequences, batch_first, padding_value, padding_side):
    from .errors import broadcast_error
    # ATen slices the first sequence's trailing sizes, then reads every one's size(0)
    if sequences[0].ndim == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    if any(s.ndim == 0 for s in sequences):
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    n = max(s.shape[0] for s in sequences)
    trailing, dtype = sequences[0].shape[1:], sequences[0].dtype
    rows = []
    for s in sequences:
        # PyTorch copies each sequence into a slice shaped by the first one: broadcasting,
        # casting to its dtype, with copy_'s errors
        target = s.shape[:1] + trailing
        msg = broadcast_error([target, s.shape])
        if msg:
            raise RuntimeError(msg)
        if jnp.broadcast_shapes(target, s.shape) != target:
            raise RuntimeError(f"output with shape {list(target)} doesn't match the broadcast "
                               f"shape {list(jnp.broadcast_shapes(target, s.shape))}")
        s = jnp.broadcast_to(s, target).astype(dtype)
        cfg = [(0, n - s.shape[0]) if padding_side == "right" else (n - s.shape[0], 0)]
        cfg += [(0, 0)] * (s.ndim - 1)
        rows.append(jnp.pad(s, cfg, constant_values=jnp.asarray(padding_value, s.dtype)))
    return jnp.stack(rows, axis=0 if batch_first else 1)
