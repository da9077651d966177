"""``torch.utils.dlpack``: exchange tensors with other array libraries through DLPack.

JAX arrays are immutable, so unlike PyTorch an imported array is not a writable alias of the
producer's memory: a later in-place change on either side is not seen by the other.
"""
import ctypes
import enum

import jax
import jax.dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


_INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
    "once, so you might have already constructed a tensor from it once.")


def to_dlpack(tensor):
    """A DLPack capsule of `tensor`'s data (PyTorch allows this even when it requires grad)."""
    return tensor._data.__dlpack__()


class _Capsule:
    """Presents a bare `dltensor` capsule through the `__dlpack__` protocol JAX consumes."""

    def __init__(self, capsule):
        api = ctypes.pythonapi
        api.PyCapsule_IsValid.restype = ctypes.c_int
        api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
        if not api.PyCapsule_IsValid(capsule, b"dltensor"):
            raise RuntimeError(_INVALID_CAPSULE)
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        ptr = api.PyCapsule_GetPointer(capsule, b"dltensor")
        # DLManagedTensor starts with DLTensor {void *data; DLDevice {int32 type, int32 id}; ...}
        device = (ctypes.c_int32 * 2).from_address(ptr + ctypes.sizeof(ctypes.c_void_p))
        self._device = (int(device[0]), int(device[1]))
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor from any object with `__dlpack__` (NumPy, JAX, PyTorch, CuPy...) or a capsule."""
    from .._ops.creation_data import from_jax
    from .._tensor import Tensor
    if isinstance(ext_tensor, Tensor):
        ext_tensor.__dlpack__()  # PyTorch's BufferError for tensors that require grad
        out = ext_tensor.detach()
    else:
        if not hasattr(ext_tensor, "__dlpack__"):
            if type(ext_tensor).__name__ != "PyCapsule":
                raise RuntimeError(_INVALID_CAPSULE)
            ext_tensor = _Capsule(ext_tensor)
        out = from_jax(jax.dlpack.from_dlpack(ext_tensor))
    if device is not None:
        out = out.to(device)
    return out.clone() if copy else out
