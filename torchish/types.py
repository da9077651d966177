"""`torch.types`: the type aliases PyTorch's annotations use (`Number`, `Device`, `_size`)."""
from typing import Sequence, Tuple, Union

from ._device import device as _device_cls
from ._dtype import dtype as _dtype_cls
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "Storage", "_TensorOrTensors", "_size", "_int", "_float",
           "_bool", "_complex", "_dtype", "_device", "_layout", "_dispatchkey", "IntLikeType",
           "FloatLikeType", "BoolLikeType", "PySymType", "py_sym_types"]

_int, _float, _bool, _complex = int, float, bool, complex
_dtype = _dtype_cls
_device = _device_cls
_size = Union[Size, Sequence[int]]
_layout = object
_dispatchkey = Union[str, object]
Number = Union[int, float, bool]
Device = Union[_device_cls, str, int, None]
Storage = object
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
PySymType = Union[int, float, bool]
py_sym_types = (int, float, bool)
_TupleOfInts = Tuple[int, ...]
