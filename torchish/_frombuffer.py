"""`torch.frombuffer`: a 1-D tensor over the bytes of a Python buffer (bytes, bytearray,
array.array, memoryview). A copy here, as `from_numpy` (see README): writes to the tensor do
not reach the buffer."""
import warnings

import numpy as np

from ._device import CPU
from ._warnings import user_stacklevel

_WARNED = [False]


def frombuffer(buffer, *, dtype=None, count=-1, offset=0, requires_grad=False):
    from ._ops.creation_data import _leaf
    if dtype is None:
        raise TypeError('frombuffer() missing 1 required positional arguments: "dtype"')
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    size = view.nbytes
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({size} bytes) minus 1")
    item = dtype.itemsize
    if count < 0:
        if (size - offset) % item:
            raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({item})")
        count = (size - offset) // item
    elif offset + count * item > size:
        raise ValueError(f"requested buffer length ({count} * {item} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    if view.readonly and not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.", UserWarning, stacklevel=user_stacklevel())
    raw = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * item, offset=offset)
    return _leaf(raw.view(dtype.np).copy(), CPU, requires_grad)
