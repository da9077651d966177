"""`torch._utils`: the private helpers that training code imports directly, e.g. gradient
bucketing's `_flatten_dense_tensors` / `_unflatten_dense_tensors` (one flat buffer for many
gradients, as DDP and apex do) and `_get_device_index`. Checkpoints' `torch._utils._rebuild_*`
names are resolved by torchish's unpickler itself (torchish/_serialization)."""
from ._device import device as _device


def _flatten_dense_tensors(tensors):
    """One 1-D tensor holding every tensor's elements in order (a view for a single one)."""
    from . import cat
    tensors = list(tensors)
    if len(tensors) == 1:
        return tensors[0].contiguous().view(-1)
    return cat([t.contiguous().view(-1) for t in tensors])


def _unflatten_dense_tensors(flat, tensors):
    """Views of `flat` shaped like `tensors` (the inverse of _flatten_dense_tensors)."""
    outputs, offset = [], 0
    for t in tensors:
        n = t.numel()
        outputs.append(flat.narrow(0, offset, n).view_as(t))
        offset += n
    return tuple(outputs)


def _get_device_index(device, optional=False, allow_cpu=False):
    """The index of a device given as an int, a string or a torch.device: -1 for the CPU
    (when allowed); a device without an index is None where `optional` (no accelerator is
    current here)."""
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        if device.type == "cpu":
            if not allow_cpu:
                raise ValueError(f"Expected a non cpu device, but got: {device}")
            return -1
        index = device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    if index is None:
        if optional and isinstance(device, _device):
            return None
        if optional and device is None:
            return None
        raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                         f"but got:{device}")
    return index


__all__ = []   # private helpers, as PyTorch's: imported by name
