"""Loss functions of `torch.nn.functional`.

Losses that PyTorch implements as one ATen kernel (nll_loss, mse_loss, smooth_l1/huber,
binary cross entropy, soft margin, multi margin, ctc) call the matching op in
`_ops/nn_ops.py`; the composite ones are written here with the same sequence of tensor ops as
ATen's `Loss.cpp` (so their graphs end in the same nodes, e.g. l1_loss -> MeanBackward0).
"""
import math
import os
import sys
import warnings

import jax
import numpy as np

import torchish
from ... import _autocast
from ..._ops import nn_ops as _nn
from ..._ops.errors import broadcast_error
from ..._ops import pointwise as _pointwise

__all__ = ["l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
           "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
           "multi_margin_loss", "multilabel_margin_loss"]


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """`torch.nn._reduction.legacy_get_string`."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=2)
    return ret


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _apply_reduction(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# wrappers around public functions whose frames a warning's stacklevel steps over
_WRAPPERS = (_autocast.__file__, os.path.join(os.path.dirname(_autocast.__file__),
                                              "overrides.py"))


def _caller_stacklevel():
    """The `stacklevel` naming the caller of the public function, as PyTorch's `stacklevel=2`
    does: past the calling file (this one for the losses) and the wrappers around it."""
    frame, level = sys._getframe(1), 1
    skip = (frame.f_code.co_filename,) + _WRAPPERS
    while frame is not None and frame.f_code.co_filename in skip:
        frame, level = frame.f_back, level + 1
    return level


def _size_warning(input, target):
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      stacklevel=_caller_stacklevel())


def _concrete(t):
    """NumPy value of `t`, or None inside traced code or for a meta tensor (value checks are
    skipped there)."""
    data = t._data
    if isinstance(data, (jax.core.Tracer, jax.ShapeDtypeStruct)):
        return None
    return np.asarray(data)


def _broadcast(a, b):
    if a.shape == b.shape:
        return a, b
    message = broadcast_error((a.shape, b.shape))
    if message:  # torch.broadcast_tensors' error
        raise RuntimeError(message)
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return (a if a.shape == shape else a.expand(tuple(shape)),
            b if b.shape == shape else b.expand(tuple(shape)))


def _real_floating(kernel, a, b):
    """ATen's regression kernels (mse, smooth_l1, huber) exist for real floating dtypes only."""
    d = torchish.promote_types(a.dtype, b.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d._legacy}\'')


def _weighted(loss, weight, reduction):
    if weight.size() != loss.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return torchish.sum(loss)
    return torchish.sum(loss) / torchish.sum(weight)


# ---- regression ------------------------------------------------------------------------------

@_autocast.casts("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _size_warning(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(torchish.abs(a - b), weight, reduction)
    return _apply_reduction((a - b).abs(), reduction)


@_autocast.casts("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _size_warning(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(torchish.pow(a - b, 2), weight, reduction)
    _real_floating("mse_cpu", a, b)
    return _nn._mse_loss(a, b, reduction)


@_autocast.casts("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _size_warning(input, target)
    reduction = _reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    a, b = _broadcast(input, target)
    if beta == 0.0:
        return _apply_reduction((a - b).abs(), reduction)
    _real_floating("smooth_l1_cpu", a, b)
    return _nn._smooth_l1_loss(a, b, reduction, float(beta))


@_autocast.casts("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _size_warning(input, target)
    reduction = _reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, b = _broadcast(input, target)
    _real_floating("huber_cpu", a, b)
    if weight is None:
        return _nn._huber_loss(a, b, reduction, float(delta))
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = _nn._huber_loss(a, b, "none", float(delta)) * weight
    return _apply_reduction(loss, reduction)


# ---- classification ----------------------------------------------------------------------------

def _check_nll_shapes(input, target, weight):
    # (in the order of ATen's checks: which one a call with several mistakes reports; a K-d
    # input takes nll_loss2d's path once its target's shape is checked)
    nd = input.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    n_classes = input.shape[1] if nd > 1 else input.shape[0]
    # (nll_loss_nd compares the batch sizes before any kernel looks at the target's rank)
    if nd > 1 and (target.shape[0] if target.ndim else 0) != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if nd <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd != 4:
        out_size = [input.shape[0]] + list(input.shape[2:])
        if list(target.shape) != out_size:
            raise RuntimeError(f"Expected target size {out_size}, got {list(target.shape)}")
    elif target.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target.ndim}")
    if target.dtype not in (torchish.int64, torchish.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._legacy}")
    if nd == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        if nd > 2:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if nd == 4 and tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                           f"{list(target.shape)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                           f"{weight.dtype._legacy}")
    if not input.dtype.is_floating_point:
        kernel = "nll_loss_out_frame" if nd <= 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype._legacy}\'')
    if nd > 2 and target.dtype is torchish.uint8:   # nll_loss2d's kernel reads int64 only
        raise RuntimeError("expected scalar type Long but found Byte")
    return n_classes


def _check_targets(target, n_classes, ignore_index):
    t = _concrete(target)
    if t is None or t.size == 0:
        return
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")


@_autocast.casts("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    n_classes = _check_nll_shapes(input, target, weight)
    if input.ndim == 1 and target.ndim == 1:
        target = target.reshape(())   # (ATen takes a 1-element target for a 1-D input)
    _check_targets(target, n_classes, ignore_index)
    out = _nn._nll_loss(input, target, weight, reduction, int(ignore_index), input.ndim > 2)
    if reduction == "none" and input.ndim > 2 and input.ndim != 4:
        # ATen folds K-dim inputs into nll_loss2d's 4-D shape and views the result back
        out = out.view(target.shape)
    return out


def _class_view(weight, ndim, class_dim):
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(tuple(shape))


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")


@_autocast.casts("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    for position, (name, value) in enumerate((("input", input), ("target", target)), 1):
        if not isinstance(value, torchish.Tensor):   # (PyTorch's binding is ATen's op)
            raise TypeError(f"cross_entropy_loss(): argument '{name}' (position {position}) "
                            f"must be Tensor, not {type(value).__name__}")
    reduction = _reduction(reduction, size_average, reduce)
    class_dim = 0 if input.ndim == 1 else 1
    n_classes = input.shape[class_dim]
    logp = torchish.log_softmax(input, class_dim)
    if input.shape == target.shape:  # class probabilities (ATen's cross_entropy_loss_prob_target)
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {target.dtype._legacy}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for "
                               f"all {n_classes} classes or no classes but got weight tensor "
                               f"of shape: {list(weight.shape)}")
        if label_smoothing > 0.0:
            _check_label_smoothing(label_smoothing)
            target = target * (1 - label_smoothing) + (label_smoothing / n_classes)
        prod = logp * target
        if weight is not None:
            prod = prod * _class_view(weight, input.ndim, class_dim)
        if reduction == "mean":
            if input.numel() == 0:
                return -prod.sum().fill_(float("nan"))
            return _pointwise._div_scalar(-prod.sum(), input.numel() // n_classes)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum(class_dim)
    if label_smoothing > 0.0:  # a negative value means none, as in ATen
        _check_label_smoothing(label_smoothing)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0.0:
        return nll
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_view(weight, input.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:
            denom = weight.gather(0, target.masked_select(ignore_mask.logical_not()).flatten()).sum()
        else:
            denom = ignore_mask.logical_not().sum()
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


@_autocast.casts("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         "the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype._legacy} but expected "
                           f"{input.dtype._legacy}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f'"binary_cross_entropy" not implemented for \'{input.dtype._legacy}\'')
    # (NaN is out of range too: PyTorch checks `0 <= x <= 1`)
    for name, t in (("input", input), ("target", target)):
        v = _concrete(t)
        if v is not None and v.size and not ((v >= 0) & (v <= 1)).all():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    if weight is not None:
        t_shape, w_shape = list(target.shape), list(weight.shape)
        for k in range(1, min(len(t_shape), len(w_shape)) + 1):
            if w_shape[-k] not in (1, t_shape[-k]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {w_shape[-k]} at {-k}! "
                    f"Mismatching argument at index 1 had {weight.size()}; but expected shape "
                    f"should be broadcastable to {t_shape}")
        _check_into(input, weight)
        weight = weight.expand(np.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    return _nn._binary_cross_entropy(input, target, weight, reduction)


def _check_into(out, other):
    """ATen's error for an in-place op whose operand broadcasts `out` to a larger shape."""
    shape = np.broadcast_shapes(tuple(out.shape), tuple(other.shape))
    if shape != tuple(out.shape):
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")


@_autocast.casts("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    reduction = _reduction(reduction, size_average, reduce)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    # (ATen computes in a tensor of target's dtype, in place)
    if target.dtype is torchish.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    elif not (target.dtype.is_floating_point or target.dtype.is_complex):
        result = torchish.promote_types(input.dtype, target.dtype)._legacy
        raise RuntimeError(f"result type {result} can't be cast to the desired output type "
                           f"{target.dtype._legacy}")
    for extra in (pos_weight, weight):
        if extra is not None:
            message = broadcast_error((extra.shape, target.shape) if extra is pos_weight
                                      else (target.shape, extra.shape))
            if message:
                raise RuntimeError(message)
            _check_into(target, extra)
    return _nn._binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


@_autocast.casts("kl_div")
def aten_kl_div(input, target, reduction, log_target):
    """`torch.kl_div`: `reduction` one of "none", "mean", "sum"."""
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = torchish.exp(target) * (target - input)
    else:
        out = torchish.xlogy(target, target) - target * input
    return _apply_reduction(out, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if size_average is not None or reduce is not None:
        red = _legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          stacklevel=_caller_stacklevel())
        red = "sum" if reduction == "batchmean" else reduction
        if red not in ("none", "mean", "sum"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
    out = aten_kl_div(input, target, red, log_target)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.size()[0]
    return out


@_autocast.casts("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = torchish.exp(input) - target * input
    else:
        loss = input - target * torchish.log(input + eps)
    if full:
        stirling = target * torchish.log(target) - target + 0.5 * torchish.log(
            2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torchish.ones_like(input)
    elif var.dtype.is_complex:   # PyTorch's check compares var with 0 first: lt's refusal
        torchish.lt(var, 0)
    elif _concrete(var) is not None and bool((_concrete(var) < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = torchish.unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(
                y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with torchish.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (torchish.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


# ---- embedding / ranking ------------------------------------------------------------------------

@_autocast.casts("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"cosine_embedding_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.size()}, input2: "
                           f"{input2.size()}, target: {target.size()} ")
    d = input1.ndim - 1
    eps = 1e-12
    prod_sum = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = torchish.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = torchish.where(target == 1, pos, zeros) + torchish.where(target == -1, neg, zeros)
    return _apply_reduction(out, reduction)


@_autocast.casts("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.size()}, input2: "
                           f"{input2.size()}, target: {target.size()} ")
    # ATen's composite adds the margin as a C++ double (AddBackward1: integer inputs give
    # float results), and computes the difference before negating the target
    diff = input1 - input2
    out = _pointwise._add_scalar(-target * diff, float(margin)).clamp_min(0)
    return _apply_reduction(out, reduction)


@_autocast.casts("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    from .distance import pairwise_distance
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = torchish.min(d_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction(torchish.clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")
    if distance_function is None:
        from .distance import pairwise_distance as distance_function
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = torchish.minimum(d_neg, distance_function(positive, negative))
    return _apply_reduction(torchish.clamp_min(margin + d_pos - d_neg, 0), reduction)


@_autocast.casts("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    zeros = torchish.zeros_like(input)
    # ATen's C++ `margin - self` fills a tensor of self's dtype with the margin, then
    # subtracts (SubBackward0; an integer input stays integer, a bool one is refused)
    margin_clamp = (torchish.full_like(input, margin) - input).clamp_min(0)
    out = torchish.where(target != 1, margin_clamp, zeros) + \
        torchish.where(target != -1, input, zeros)
    return _apply_reduction(out, reduction)


@_autocast.casts("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    # ATen computes in place into a tensor of input's dtype: neg, mul_(target), exp_, log1p_
    if input.dtype is torchish.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if not (input.is_floating_point() or input.is_complex()):
        result = torchish.promote_types(input.dtype, target.dtype)
        if not (result.is_floating_point or result.is_complex):
            result = torchish.get_default_dtype()
        raise RuntimeError(f"result type {result._legacy} can't be cast to the desired output "
                           f"type {input.dtype._legacy}")
    return _nn._soft_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    from torchish.nn.functional import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    return _apply_reduction(loss, reduction)


@_autocast.casts("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _margin_shape_check(input)
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    _long_targets(target, dim, "target out of range")
    return _nn._multi_margin_loss(input, target, weight, int(p), float(margin), reduction)


@_autocast.casts("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(reduction, size_average, reduce)
    nframe, dim = _margin_shape_check(input)
    if not (target.ndim <= 1 and target.numel() == dim if input.ndim <= 1 else
            tuple(target.shape) == (nframe, dim)):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _long_targets(target, dim, "argument #2 'target' is out of range", -1)
    return _nn._multilabel_margin_loss(input, target, reduction)


def _margin_shape_check(input):
    """(samples, classes) of a multi(label) margin loss input, as ATen's shape check."""
    shape = tuple(input.shape)
    if not ((len(shape) == 2 and shape[1]) or (len(shape) == 1 and shape[0]) or not shape):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(shape)}")
    return (shape[0] if len(shape) == 2 else 1), (shape[-1] if shape else 1)


def _long_targets(target, dim, message, low=0):
    """The margin losses' kernels: int64 class indices in [low, dim)."""
    if target.dtype is not torchish.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._legacy}")
    t = _concrete(target)
    if t is not None and t.size and ((t < low) | (t >= dim)).any():
        raise RuntimeError(message)


def _check_ctc_args(log_probs, targets, il, tl, blank):
    """ATen's argument checks for ctc_loss (values only where concrete); an unbatched call is
    checked as a batch of one (its 1-D targets as concatenated ones)."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    batched = log_probs.ndim == 3
    lp_dim = log_probs.ndim + (0 if batched else 1)
    tg_dim = targets.ndim
    if lp_dim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp_dim}-dimensional tensor "
                           f"for argument #1 'log_probs'{where}")
    if not 1 <= tg_dim <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tg_dim}-dimensional tensor "
                           f"for argument #2 'targets'{where}")
    n = log_probs.shape[1] if batched else 1
    t_max, labels = log_probs.shape[0], log_probs.shape[-1]
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if il.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    il_v, tl_v = _concrete(il), _concrete(tl)
    if tl_v is not None:
        for v in tl_v.tolist():
            if v < 0:
                raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                                   f"value {v}{where}")
        if tg_dim == 1:
            total = int(tl_v.sum())
            if targets.shape[0] != total:
                raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                                   f"size {targets.shape[0]} for argument #2 'targets'{where}")
        else:
            rows, width = targets.shape
            if rows != n:
                raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got "
                                   f"size {rows} for argument #2 'targets'{where}")
            longest = max(tl_v.tolist(), default=0)
            if width < longest:
                raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension "
                                   f"1, but got size {width} for argument #2 'targets'{where}")
    if il_v is not None:
        for v in il_v.tolist():
            if v < 0:
                raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                                   f"value {v}{where}")
            if v > t_max:
                raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but "
                                   f"got value {v}{where}")


@_autocast.casts("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    reduction = _reduction(reduction)
    # PyTorch binds lengths as both tensors or both int sequences: its `int[]` (no size) takes
    # no bare int, which the signature table cannot tell from `int[1]`, so checked here
    kinds = {isinstance(v, torchish.Tensor) or isinstance(v, (tuple, list)) and "seq"
             for v in (input_lengths, target_lengths)}
    if kinds not in ({True}, {"seq"}):
        from ..._ops.overloads import _invalid_combination, table
        raise _invalid_combination("ctc_loss", table("ctc_loss", False), (
            log_probs, targets, input_lengths, target_lengths, blank,
            ("none", "mean", "sum").index(reduction), zero_infinity), {})
    as_tensor = lambda v: v if isinstance(v, torchish.Tensor) else torchish.tensor(
        list(v) if not isinstance(v, int) else [v], dtype=torchish.int64)
    il, tl = as_tensor(input_lengths), as_tensor(target_lengths)
    for name, t in (("input_lengths", il), ("target_lengths", tl)):
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torchish.bool:
            raise RuntimeError(f"{name} must be integral")
    il, tl = il.reshape(-1), tl.reshape(-1)  # 0-d (unbatched) or any shape: flattened
    _check_ctc_args(log_probs, targets, il, tl, blank)
    concat = targets.ndim == 1 and log_probs.ndim == 3
    nll = _nn._ctc_loss(log_probs, targets, il, tl, int(blank), bool(zero_infinity), concat)
    if zero_infinity:  # the op leaves inf values (with zero gradient); ATen's where
        nll = torchish.where(torchish.isinf(nll), torchish.zeros((), dtype=nll.dtype), nll)
    if reduction == "mean":
        denom = tl.clamp_min(1).to(nll.dtype)
        return (nll / (denom if log_probs.ndim == 3 else denom.reshape(()))).mean()
    if reduction == "sum":
        return nll.sum()
    return nll
