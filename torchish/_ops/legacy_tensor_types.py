"""`torch.FloatTensor` and kin (the legacy tensor types): constructors, and isinstance checks
by dtype and device type; `torch.cuda.*Tensor` are made here too."""
from .. import _dtype as dt
from .._tensor import Tensor
from .creation import empty
from .creation_data import tensor


class _LegacyTensorType(type):
    """`torch.FloatTensor`, `torch.cuda.FloatTensor` and kin: constructors, and isinstance
    checks by dtype and device type."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls.device_type

    def __call__(cls, *args, device=None):
        if cls.device_type == "cuda":
            from .. import cuda
            if not cuda.is_available():
                raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch "
                                "not compiled with CUDA enabled.")
            device = "cuda" if device is None else device
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(cls.dtype)
            return tensor(data, dtype=cls.dtype, device=device)
        return empty(*(args or (0,)), dtype=cls.dtype, device=device)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_types(module="torch", device_type="cpu"):
    out = {}
    for d in dt.ALL:
        if d in dt.SHELL:   # PyTorch has no UInt16Tensor/... classes (type strings work)
            continue
        name = d._legacy + "Tensor"
        out[name] = _LegacyTensorType(name, (), {"dtype": d, "__module__": module,
                                                 "device_type": device_type})
    return out


_LEGACY = _legacy_types()
globals().update(_LEGACY)

PLAIN = list(_LEGACY)
