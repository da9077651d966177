"""`F.embedding`, `F.embedding_bag`, `F.one_hot`."""
import jax
import numpy as np

import torchish
from ..._ops import nn_ops as _nn
from ..._ops.declare import parsed as _parsed
from ...autograd import sparse_grad as _sparse_grad

__all__ = ["embedding", "embedding_bag", "one_hot"]


def _concrete(t):
    data = t._data   # (traced or meta data: no values to check)
    return None if isinstance(data, (jax.core.Tracer, jax.ShapeDtypeStruct)) else \
        np.asarray(data)


def _check_index(input, num):
    idx = _concrete(input)
    if idx is not None and idx.size and ((idx < 0) | (idx >= num)).any():
        raise IndexError("index out of range in self")


def _check_bag_index(input, num):
    idx = _concrete(input)
    if idx is None:
        return
    flat = idx.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= num))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {flat[bad[0]]} which is not in "
                           f"the valid range [0, {num})")


def _check_offsets(input, offsets, bags_given, weight=None, mode="mean",
                   include_last_offset=False, padding_idx=None):
    """ATen's embedding_bag checks of the indices' type and the bag offsets' values."""
    for t in (input, offsets):
        if t.is_floating_point() or t.is_complex():
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"{torchish._dtype.type_name(t.dtype)} instead (while checking "
                               "arguments for embedding_bag)")
    if not bags_given:
        return
    off = _concrete(offsets)
    if off is None or not off.size:
        return
    if off[0] != 0:
        # (ATen appends the empty tensor it formats the value from)
        kind = "Long" if torchish.int64 in (input.dtype, offsets.dtype) else "Int"
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got {off[0]}\n"
                           f"[ torch.{kind}Tensor{{}} ]")
    n = input.numel()
    if off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                           f"{n} but got offsets[-1] of {off[-1]}")
    n_bags = off.size - (1 if include_last_offset else 0)
    starts = off[1:n_bags]
    # ATen's float/half kernel for sum and mean walks the offsets itself; the other kernels
    # (and mean's bag sizes) mark the bag starts in an n + 1 slot tensor (index_add_'s check)
    fast = weight is not None and padding_idx is None and mode != "max" and \
        weight.dtype in (torchish.float32, torchish.float16, torchish.bfloat16)
    if (mode != "sum" or not fast) and ((starts < 0) | (starts > n)).any():
        raise IndexError("index out of range in self")
    bounds = off if include_last_offset else np.append(off, n)
    if fast and ((np.diff(bounds) < 0).any() or (bounds > n).any()):
        # the float/half kernel walks the bags in order and fails; its diagnosis (per thread
        # chunk) names the last offset first when the caller gave it
        if include_last_offset and off[-1] != n:
            raise RuntimeError("Your input appears to be incorrect: the last offset value "
                               "should be the size of the indices tensor, but it seems not to "
                               "be the case.")
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """`torch.embedding_renorm_`: rows used by `input` with norm > max_norm are rescaled."""
    idx = _concrete(input)
    if idx is None:
        _traced_renorm_(weight, input, max_norm, norm_type)
        return
    w = np.asarray(weight.detach()._data)
    rows = np.unique(idx.reshape(-1))
    n = w.shape[0]
    bad = rows[(rows < -n) | (rows >= n)]
    if bad.size:   # ATen selects each row in turn, in sorted order
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size "
                         f"[{', '.join(map(str, w.shape))}] at dimension 0")
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    over = norms > max_norm
    if not over.any():
        return
    scale = (max_norm / (norms[over] + 1e-7)).astype(w.dtype)
    new = w.copy()
    new[rows[over]] = w[rows[over]] * scale[:, None]
    with torchish.no_grad():
        weight.copy_(torchish.from_numpy(new))


def _traced_renorm_(weight, input, max_norm, norm_type):
    """The renorm in traced code (torchish.compile): no index values to check or deduplicate; a
    row used twice is written twice with the same value."""
    rows = input.reshape(-1)
    with torchish.no_grad():
        used = weight[rows]
        norms = torchish.linalg.vector_norm(used, ord=norm_type, dim=1, keepdim=True)
        scale = torchish.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = used * scale


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (torchish.int64, torchish.int32):
        # (with max_norm, embedding_renorm_ checks first: its indices are argument #2)
        where = ("#2 'indices'", "embedding_renorm_") if max_norm is not None else \
            ("#1 'indices'", "embedding")
        raise RuntimeError(f"Expected tensor for argument {where[0]} to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{torchish._dtype.type_name(input.dtype)} instead (while checking "
                           f"arguments for {where[1]})")
    if max_norm is not None:
        _embedding_renorm_(weight, input.contiguous(), max_norm, norm_type)
    _check_index(input, weight.shape[0])
    out = _nn._embedding(weight, input, padding_idx, bool(scale_grad_by_freq))
    if sparse:
        _sparse_grad.embedding(out, weight, _concrete(input), padding_idx, scale_grad_by_freq)
    return out


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype == torchish.int64 and input.is_floating_point():
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    bags_given = input.ndim == 1
    if input.ndim == 2:
        if offsets is not None:
            type_str = "<class 'torch.Tensor'>" if isinstance(offsets, torchish.Tensor) \
                else str(type(offsets))
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type_str}")
        offsets = torchish.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if padding_idx is not None and padding_idx < 0:
        padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    # (PyTorch's Python layer refuses this before ATen checks anything)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    _check_offsets(input, offsets, bags_given, weight, mode, include_last_offset, padding_idx)
    _check_bag_index(input, weight.shape[0])
    n_bags = offsets.numel() - (1 if include_last_offset else 0)
    out = _nn._embedding_bag(weight, input, offsets, per_sample_weights, mode, padding_idx,
                             int(n_bags), bool(scale_grad_by_freq))
    if sparse:
        _sparse_grad.embedding_bag(out, weight, _concrete(input), _concrete(offsets),
                                   per_sample_weights, mode, padding_idx, scale_grad_by_freq)
    return out


def _one_hot_argument_error(input, num_classes):
    """PyTorch's parser TypeError for `one_hot(input: Tensor, num_classes: int)`; None when
    both are what it takes (a 0-d integer Tensor is an int to it, a bool is not)."""
    from ..._ops.argcheck import _is_index
    from ..._ops.errors import _entry_name, _keywords_of_call, type_name
    if not isinstance(input, torchish.Tensor):
        name, position, value, want = "input", 1, input, "Tensor"
    elif isinstance(num_classes, torchish.Tensor):
        d = num_classes.dtype
        if num_classes.ndim == 0 and not (d.is_floating_point or d.is_complex or
                                          d is torchish.bool):
            return None
        name, position, value, want = "num_classes", 2, num_classes, "int"
    elif not _is_index(num_classes):
        name, position, value, want = "num_classes", 2, num_classes, "int"
    else:
        return None
    where = "" if name in _keywords_of_call(_entry_name()[1]) else f" (position {position})"
    return TypeError(f"one_hot(): argument '{name}'{where} must be {want}, not "
                     f"{type_name(type(value))}")


def one_hot(input, num_classes=-1):
    if num_classes.__class__ is not int or input.__class__ is not torchish.Tensor:
        error = _one_hot_argument_error(input, num_classes)
        if error is not None:
            raise error
        num_classes = int(num_classes)
    tensor = input
    if tensor.dtype is not torchish.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    values = _concrete(tensor)
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1 if values is not None else num_classes
    if values is not None and values.size:
        if values.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if values.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = torchish.arange(num_classes, dtype=torchish.int64, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


one_hot = _parsed(one_hot)   # (PyTorch binds it in C++: its parser's TypeErrors)
