"""`clip_grad_norm_` and `clip_grad_value_` (PyTorch's per-tensor CPU path)."""
import functools
import types
import warnings

import torchish

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with torchish.no_grad():
            return func(*args, **kwargs)
    return wrapper


def _vector_norm(t, norm_type):
    if t.is_sparse:   # (PyTorch's refusal: no sparse kernel)
        return torchish.linalg.vector_norm(t, norm_type)
    return torchish.norm(t.reshape(-1), norm_type)


@_no_grad
def _get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    tensors = [tensors] if isinstance(tensors, torchish.Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return torchish.tensor(0.0)
    first_device = tensors[0].device
    missing = next((i for i, t in enumerate(tensors) if t is None), None)
    if missing is not None:   # (the words of PyTorch's foreach kernels' check)
        raise RuntimeError(f"Tensors of the first list of nested Tensor lists are supposed to "
                           f"be defined but the {missing}-th Tensor is not.")
    norms = [_vector_norm(g, norm_type) for g in tensors]
    total_norm = _vector_norm(torchish.stack([n.to(first_device) for n in norms]), norm_type)
    if error_if_nonfinite and bool(torchish.logical_or(total_norm.isnan(),
                                                       total_norm.isinf())):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    if isinstance(parameters, torchish.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    clip_coef_clamped = torchish.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    if isinstance(parameters, torchish.Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    if isinstance(parameters, torchish.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        # PyTorch groups the grads by device before clamping, and its grouping helper
        # rejects an empty list: no grads at all (or no parameters) is an error there.
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    for g in grads:
        g.clamp_(min=-clip_value, max=clip_value)
