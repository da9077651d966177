"""Dropout family, drawing exactly what PyTorch's CPU `_dropout_impl` draws.

ATen (Dropout.cpp) on CPU: `noise = empty_like(input).bernoulli_(1 - p)` (per feature map for
the feature variants), then `noise /= 1 - p` and `input * noise` (MulBackward0); alpha dropout
rescales with SELU's constants and adds a shift (AddBackward0). Eval mode or p == 0 returns the
input itself.
"""
import math
import warnings

import torchish
from .loss import _caller_stacklevel

__all__ = ["dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
           "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766  # SELU's alpha * scale


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = torchish.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (input.shape[0], input.shape[1]) + (1,) * (input.ndim - 2)
        noise = torchish.empty(shape, dtype=input.dtype, device=input.device)
    else:
        noise = torchish.empty_like(input)
    with torchish.no_grad():
        noise.bernoulli_(1 - p)
        if alpha:
            a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
            b = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
            noise.mul_(a)
        else:
            noise.div_(1 - p)
    if alpha:
        return input.mul_(noise).add_(b) if inplace else (input * noise).add_(b)
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, False, False, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _dropout_impl(input, p, training, True, True, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched(input, p, training, inplace, input.ndim == 3)


def _unbatched(input, p, training, inplace, is_batched):
    if is_batched:
        return _dropout_impl(input, p, training, True, False, inplace)
    if inplace:
        # in place on an unsqueezed view writes through to `input`
        _dropout_impl(input.unsqueeze(0), p, training, True, False, True)
        return input
    return _dropout_impl(input.unsqueeze(0), p, training, True, False, False).squeeze(0)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that "
                      "dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=_caller_stacklevel())
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change in "
                      "a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.",
                      stacklevel=_caller_stacklevel())
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    nd = input.ndim
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=_caller_stacklevel())
    return _unbatched(input, p, training, inplace, nd == 5)
