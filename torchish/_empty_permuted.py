"""`torch.empty_permuted`: a new tensor whose dims lie in memory in a given order."""
from ._ops.creation import empty
from ._views import contiguous_strides
from ._memory_layout import lay_out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but got "
                f"{d} at index {i}).  NB: negative dims not currently supported; file an issue "
                "if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    physical = contiguous_strides(tuple(size[d] for d in order))
    stride = [0] * len(size)
    for d, s in zip(order, physical):
        stride[d] = s
    t = empty(size, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    lay_out(t, tuple(stride))
    return t.requires_grad_() if requires_grad else t
