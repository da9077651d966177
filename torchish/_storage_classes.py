"""The public storage classes: `torch.UntypedStorage`, `torch.TypedStorage` and the legacy
typed ones (`torch.FloatStorage`, ...). Their instances are the internal storages
(`_storage.Storage` and its subclasses, `_storage.TypedStorage`); constructing one makes such
a storage on the CPU, and `isinstance` checks read the instance (a legacy class matches a
TypedStorage of its dtype, as in PyTorch)."""
import jax.numpy as jnp
import numpy as np

from . import _dtype as dt
from ._device import CPU
from ._storage import Storage, TypedStorage as _Typed


def _array(args, np_dtype, name):
    if len(args) != 1:
        raise TypeError(f"{name}(): expected one argument (a size or a sequence), got "
                        f"{len(args)}")
    arg = args[0]
    if isinstance(arg, int):
        return jnp.zeros((arg,), np_dtype)   # (PyTorch's are uninitialized)
    return jnp.asarray(np.asarray(list(arg), np_dtype))


class _StorageMeta(type):
    def __instancecheck__(cls, obj):
        return cls._check(obj)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


class UntypedStorage(metaclass=_StorageMeta):
    __module__ = "torch.storage"

    def __new__(cls, *args, device=None):
        data = _array(args or (0,), np.uint8, "UntypedStorage")
        return Storage(data, CPU)

    @staticmethod
    def _check(obj):
        return isinstance(obj, Storage)


class TypedStorage(metaclass=_StorageMeta):
    __module__ = "torch.storage"
    dtype = None

    def __new__(cls, *args, dtype=None, device=None):
        from ._tensor import _warn_typed_storage
        _warn_typed_storage()
        dtype = cls.dtype or dtype or dt.get_default_dtype()
        data = _array(args or (0,), dtype.np, cls.__name__)
        return _Typed(Storage(data, CPU), dtype)

    @classmethod
    def _check(cls, obj):
        return isinstance(obj, _Typed) and (cls.dtype is None or obj.dtype is cls.dtype)


TYPED = {}
for _name, _dtype in (("Float", "float32"), ("Double", "float64"), ("Half", "float16"),
                      ("BFloat16", "bfloat16"), ("Long", "int64"), ("Int", "int32"),
                      ("Short", "int16"), ("Char", "int8"), ("Byte", "uint8"),
                      ("Bool", "bool"), ("ComplexFloat", "complex64"),
                      ("ComplexDouble", "complex128")):
    _cls = _StorageMeta(_name + "Storage", (TypedStorage,),
                        {"dtype": getattr(dt, _dtype), "__module__": "torch"})
    TYPED[_cls.dtype] = _cls
    globals()[_cls.__name__] = _cls

__all__ = ["UntypedStorage", "TypedStorage"] + [c.__name__ for c in TYPED.values()]
