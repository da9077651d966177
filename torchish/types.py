"""`torch.types`: the type aliases PyTorch code writes in annotations (`torch.types.Number`,
`torch.types.Device`, `_size`, ...).

Custom operators read these hints to build their schema (`m: torch.types.Number` is a
`Scalar`), so the aliases are the same typing objects PyTorch's are, spelt with torchish's
classes."""
import os
from collections.abc import Sequence
import typing

from ._tensor import Tensor, Size
from ._dtype import dtype as _dtype
from ._device import device as _device
from ._layout import layout
from . import SymInt, SymFloat, SymBool

Any, IO, Union = typing.Any, typing.IO, typing.Union   # PyTorch's module has them too
_layout = layout
_bool, _bytes, _complex, _float, _int, _str = bool, bytes, complex, float, int, str

# PyTorch writes these with `|`; Number stays a typing.Union (the same alias to every
# consumer) because torchish.library's schema inference reads only typing.Union as `Scalar`
Number = Union[int, float, bool]
_Number = (int, float, bool)
_dispatchkey = Union[str, object]   # torchish has no DispatchKey: dispatch keys are strings
Device = _device | str | int | None
IntLikeType = int | SymInt
FloatLikeType = float | SymFloat
BoolLikeType = bool | SymBool
PySymType = SymInt | SymFloat | SymBool
py_sym_types = (SymInt, SymFloat, SymBool)

_size = Size | list[int] | tuple[int, ...]
_symsize = Size | Sequence[int | SymInt]
_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]

FileLike = Union[str, os.PathLike[str], IO[bytes]]


class Storage:
    """The annotation-only storage protocol of `torch.types` (real storages are
    `torch.UntypedStorage`)."""
    _cdata: int
    device: _device
    dtype: _dtype


__all__ = ["Number", "Device", "FileLike", "Storage"]
