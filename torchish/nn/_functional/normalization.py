"""Normalisation in `torch.nn.functional`: the Python-level checks PyTorch makes (as
ValueErrors) around the registry's ops, the running-statistics update of batch norm, and
instance norm composed from batch norm over a (1, N*C, ...) view as ATen does."""
import warnings

import torchish
from ..._ops import nn_norm as _norm
from ..._ops.out_arg import _C_NAMES
from ..._ops.pointwise import _add_scalar
from ..._ops.recording import records as _records
from ..._warnings import user_stacklevel

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm"]


_RMS_MIXED_WARNED = [False]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if isinstance(normalized_shape, (list, tuple)):   # ATen's checks, in its order
        if not normalized_shape:
            raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                               "containing at least one element, but got normalized_shape = []")
        if isinstance(weight, torchish.Tensor) and \
                tuple(weight.shape) != tuple(normalized_shape):
            raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but "
                               f"got weight of shape {list(weight.shape)} and normalized_shape "
                               f"= {list(normalized_shape)}")
    dims = _norm._normalized_axes(input, normalized_shape, "")   # (before the warning)
    # (a complex input takes the composite path without this warning)
    if weight is not None and weight.dtype is not input.dtype and not input.is_complex() \
            and not _RMS_MIXED_WARNED[0]:
        _RMS_MIXED_WARNED[0] = True   # (TORCH_WARN_ONCE)
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = "
                      f"{_C_NAMES[input.dtype.name]}, weight dtype = {_C_NAMES[weight.dtype.name]}"
                      f", Cannot dispatch to fused implementation.", UserWarning,
                      stacklevel=user_stacklevel())
    if not _records(input, weight):
        return _norm.rms_norm(input, normalized_shape, weight, eps)
    # PyTorch's composite, op by op: x * rsqrt(mean(x ** 2) + eps) (* weight), in float32
    # for a half-precision input
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{input.dtype._legacy}\'')
    x = input.float() if input.dtype in (torchish.bfloat16, torchish.float16) else input
    if eps is None:
        eps = torchish.finfo(x.dtype).eps
    out = x.mul(_add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt())
    if weight is not None:
        out = out.mul(weight)
    return out if out.dtype is input.dtype else out.to(input.dtype)

_REDUCED = ("torch.bfloat16", "torch.float16")


def _check_batch_norm_dtypes(input, weight, bias, running_mean, running_var, training):
    """PyTorch's CPU batch norm: parameters whose first defined one has the input's dtype must
    all have it (its kernel checks weight, then the running stats before bias when training,
    after it otherwise); else they must all be float32, with a bfloat16/float16 input."""
    params = (weight, bias, running_mean, running_var)
    first = next((p.dtype for p in params if p is not None), None)
    if first is not None and first is not input.dtype:
        _check_mixed_params(input, *params)
        return
    if input.dim() < 2:   # (its kernel reads dim 1 before comparing these)
        return
    order = (weight, running_mean, running_var, bias) if training else params
    for p in order:
        if p is not None and p.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {input.dtype._legacy} but found "
                               f"{p.dtype._legacy}")


def _check_mixed_params(input, *params):
    if any(p is not None and p.dtype is not torchish.float32 for p in params):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if str(input.dtype) not in _REDUCED:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    # (the op makes PyTorch's dtype checks, in its order among the shape checks)
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def _verify_spatial_size(size):
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input "
                         f"size {size}")


def _fails_shape_checks(input, params, training):
    """Whether the batch norm op will raise one of its own checks (rank, missing running stats
    in eval mode, per-channel sizes), which PyTorch runs before its dtype dispatch."""
    # (a 0-d/1-d input counts no channels; training reads its dim 1 before the dtype
    # dispatch, evaluation after it)
    if input.dim() < 2 and training:
        return True
    if not training and (params[0] is None or params[1] is None):
        return True
    c = input.shape[1] if input.dim() >= 2 else 0
    return any(p is not None and p.numel() != c for p in params)


def _generic_layout(input):
    """A half input neither contiguous nor channels-last: PyTorch's batch norm takes its generic
    kernel then, rounding every step to the half type (other dtypes: the same numbers)."""
    if input.dtype not in (torchish.float16, torchish.bfloat16) or input.is_contiguous():
        return False
    last = {4: torchish.channels_last, 5: torchish.channels_last_3d}.get(input.ndim)
    return last is None or not input.is_contiguous(memory_format=last)


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                       eps):
    """torch.batch_norm: normalise, and when training update the running statistics in
    place (`momentum * batch + (1 - momentum) * running`, unbiased variance)."""
    update = training and (running_mean is not None or running_var is not None)
    if momentum is None:
        raise TypeError("batch_norm(): argument 'momentum' must be float, not NoneType")
    # PyTorch runs the op's shape checks (raised by the op below) before any dtype check
    if not _fails_shape_checks(input, (running_mean, running_var, weight, bias), training):
        if not input.is_floating_point():   # no integer/bool/complex kernel
            raise NotImplementedError(
                f'"batch_norm" not implemented for \'{input.dtype._legacy}\'')
        _check_batch_norm_dtypes(input, weight, bias, running_mean, running_var, training)
    out = _norm._batch_norm(input, weight, bias, running_mean, running_var,
                            float(momentum) if update else 0.0, bool(training), float(eps),
                            strided=_generic_layout(input))
    if not update:
        return out
    out, mean, var = out
    for stat, value in ((running_mean, mean), (running_var, var)):
        if stat is not None:
            stat._set_data(value._data)
            stat._vc[0] -= 1   # PyTorch's kernel writes them without bumping their version
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-05):
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training,
                              momentum, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-05):
    if use_input_stats:
        _verify_spatial_size(input.size())
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    x = input.contiguous().view(1, b * c, *input.shape[2:])

    def rep(t):
        return None if t is None else t.repeat(b)
    rm, rv = rep(running_mean), rep(running_var)
    out = _native_batch_norm(x, rep(weight), rep(bias), rm, rv, use_input_stats, momentum,
                             eps)
    with torchish.no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] +
                       list(input.size()[2:]))
    return _norm.group_norm(input, num_groups, weight, bias, eps)


def local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if input.is_complex():   # (PyTorch's window average has no complex kernel)
        kernel = "avg_pool2d" if dim == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype._legacy}\'')
    if _records(input):
        return _local_response_norm_steps(input, size, alpha, beta, k)
    out = _norm._local_response_norm(input, size, alpha, beta, k)
    if not (input.is_floating_point() or input.is_complex()):
        # PyTorch's integer window average times a float alpha: the default dtype
        out = out.to(torchish.get_default_dtype())
    return out


def _local_response_norm_steps(input, size, alpha, beta, k):
    """PyTorch's local_response_norm op by op: the squares averaged over a window of
    channels (a zero-padded avg_pool over a channel dim made spatial), scaled, raised."""
    from .. import functional as F
    div = input.mul(input)
    if input.dim() == 3:
        div = F.pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)
