"""`F.linear` and `F.bilinear`, decomposed exactly as ATen does so the graph has PyTorch's
nodes: 2-D input with bias -> addmm (AddmmBackward0); without bias -> matmul (MmBackward0);
other ranks fold the batch dims with a view around addmm (ViewBackward0) or use matmul.
"""
import torchish
from ... import _autocast
from ..._ops import nn_ops as _nn

__all__ = ["linear", "bilinear"]


def _check_dtypes(input, weight, bias):
    # addmm's checks (the dispatcher would otherwise promote)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{input.dtype._legacy} and {weight.dtype._legacy}")
    if bias.dtype is not weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{bias.dtype._legacy} and {weight.dtype._legacy}")


@_autocast.casts("linear")
def linear(input, weight, bias=None):
    wt = weight.t() if weight.ndim != 1 else weight   # (t() refuses a >2-D weight)
    if bias is None:
        return torchish.matmul(input, wt)
    _check_dtypes(input, weight, bias)
    if input.ndim == 2:   # (addmm's errors for a wrong bias or a 1-D weight)
        return torchish.addmm(bias, input, wt)
    if input.ndim >= 3 and weight.ndim == 2 and bias.ndim <= 1 and input.is_contiguous():
        out = torchish.addmm(bias, input.reshape(-1, input.shape[-1]), wt)
        return out.view(*input.shape[:-1], weight.shape[0])
    if input.ndim == 1 and weight.ndim == 2 and bias.ndim <= 1:
        out = torchish.addmm(bias, input.view(1, -1), wt)
        return out.view(weight.shape[0])
    return torchish.matmul(input, wt) + bias


@_autocast.casts("bilinear")
def bilinear(input1, input2, weight, bias=None):
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d in range(input1.ndim - 1):   # (names the first mismatching batch dim, as ATen does)
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    # ATen checks only the bias's first dim (a 0-d bias fails in size(0) with an IndexError);
    # other mismatches surface from the broadcasting add below
    if bias is not None and bias.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    batch = input1.shape[:-1]
    out = _nn._bilinear_core(input1.reshape(-1, input1.shape[-1]),
                             input2.reshape(-1, input2.shape[-1]), weight)
    out = out.view(*batch, weight.shape[0])
    return out if bias is None else out + bias
