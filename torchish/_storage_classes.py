"""The public storage classes: `torch.UntypedStorage` (the internal `_storage.Storage`
itself), `torch.TypedStorage` (defined here, also `_storage.TypedStorage`) and the legacy ones
(`torch.FloatStorage`, ...): constructing one of those makes a TypedStorage of its dtype, and
an `isinstance` check reads the instance's dtype, as in PyTorch. Importing this also makes
`torch.storage` (the module PyTorch names these classes by) reachable."""
import jax
import numpy as np

from . import _dtype as dt
from ._storage import Storage, _ShownAs, storage_device

UntypedStorage = Storage


class TypedStorage(metaclass=_ShownAs):
    """torch.TypedStorage (deprecated in PyTorch), what `Tensor.storage()` returns: an
    UntypedStorage read as elements of `dtype`. Internal code builds one as
    `TypedStorage(untyped, dtype)`."""
    _shown_as = "TypedStorage"
    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if len(args) == 2 and isinstance(args[0], Storage):   # the internal form
            wrap_storage, dtype = args
            _internal = True
        if not _internal:
            from ._tensor import _warn_typed_storage
            _warn_typed_storage()
        if wrap_storage is None:
            dtype = dtype or dt.get_default_dtype()
            wrap_storage = _typed_contents(args, dtype, device)
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        return self._untyped_storage

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def size(self):
        return self.nbytes() // self.element_size()

    __len__ = size

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def _elements(self):
        storage = self._untyped_storage
        if hasattr(storage, "_of"):   # a handle (no array of its own): through its bytes
            data = storage._bytes()
        else:
            data = np.asarray(storage.data).reshape(-1)
        if data.dtype != self.dtype.np:
            data = data.view(np.uint8)[:self.size() * self.dtype.itemsize].view(self.dtype.np)
        return data

    def __getitem__(self, index):
        if not isinstance(index, (int, slice)):
            raise RuntimeError(f"can't index a {self.type()} with {type(index).__name__}")
        n = self.size()
        if isinstance(index, int) and not -n <= index < n:
            raise IndexError(f"index {index} out of range for storage of size {n}")
        return self._elements()[index].tolist()

    def __setitem__(self, index, value):
        values = np.array(self._elements())
        values[index] = value
        raw = np.array(self._untyped_storage._bytes())
        new = values.reshape(-1).view(np.uint8)
        raw[:new.size] = new
        self._untyped_storage._write_bytes(raw)

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements().tolist()

    def fill_(self, value):
        self[:] = value
        return self

    def copy_(self, source, non_blocking=None):
        self._untyped_storage.copy_(source.untyped() if isinstance(source, TypedStorage)
                                    else source)
        return self

    def clone(self):
        return TypedStorage(self._untyped_storage.clone(), self.dtype)

    def cpu(self):
        return self if self.device.type == "cpu" else \
            TypedStorage(self._untyped_storage.cpu(), self.dtype)

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self, device="cuda"):
        return False

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return legacy_name(self.dtype)
        raise NotImplementedError("TypedStorage.type(dtype) is not supported")

    def __repr__(self):
        info = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of "
                f"size {self.size()}]")
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __str__ = __repr__


def _converter(dtype_name):
    def convert(self):
        """This storage's elements cast to another dtype: a new storage (even of its own
        dtype, as PyTorch's)."""
        dtype = getattr(dt, dtype_name)
        values = self._elements().astype(dtype.np)
        storage = Storage(values.size * dtype.itemsize, self.device)
        storage.data = jax.device_put(values, storage_device(storage))
        return TypedStorage(storage, dtype)
    return convert


for _method, _name in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                       ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                       ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                       ("bool", "bool"), ("complex_float", "complex64"),
                       ("complex_double", "complex128")):
    setattr(TypedStorage, _method, _converter(_name))


def _typed_contents(args, dtype, device):
    """The UntypedStorage of TypedStorage(*args): () / (n) / (sequence) elements of dtype."""
    arg = args[0] if args else 0
    if len(args) > 1 or type(arg) is float or isinstance(arg, (str, bytes)):
        raise TypeError("TypedStorage.__new__ received an invalid combination of arguments."
                        " Expected one of:\n * no arguments\n * (int size)\n"
                        " * (Sequence data)\n * (*, UntypedStorage wrap_storage)\n"
                        f"Argument type not recognized: {type(arg)}")
    if isinstance(arg, int):
        n = arg * dtype.itemsize
        return Storage(n, device)
    value = np.asarray(list(arg), dtype.np).reshape(-1)
    storage = Storage(value.size * dtype.itemsize, device)
    if storage.device.type != "meta":
        storage.data = jax.device_put(value, storage_device(storage))
    return storage




class _LegacyMeta(_ShownAs):
    def __instancecheck__(cls, obj):
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


class _LegacyStorage(TypedStorage, metaclass=_LegacyMeta):
    dtype = None

    def __new__(cls, *args, wrap_storage=None, device=None):
        from ._tensor import _warn_typed_storage
        _warn_typed_storage()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("No positional arguments should be given when using "
                                   "'wrap_storage'")
            return TypedStorage(wrap_storage, cls.dtype)
        try:
            return TypedStorage(*args, dtype=cls.dtype, device=device)
        except TypeError as e:   # PyTorch names the legacy class in the message
            raise TypeError(str(e).replace("TypedStorage.__new__",
                                           f"{cls!r}.__new__", 1)) from None


TYPED = {}
for _name, _dtype in (("Float", "float32"), ("Double", "float64"), ("Half", "float16"),
                      ("BFloat16", "bfloat16"), ("Long", "int64"), ("Int", "int32"),
                      ("Short", "int16"), ("Char", "int8"), ("Byte", "uint8"),
                      ("Bool", "bool"), ("ComplexFloat", "complex64"),
                      ("ComplexDouble", "complex128")):
    _cls = _LegacyMeta(_name + "Storage", (_LegacyStorage,),
                       {"dtype": getattr(dt, _dtype), "__module__": "torch"})
    TYPED[_cls.dtype] = _cls
    globals()[_cls.__name__] = _cls


def legacy_name(dtype):
    """What TypedStorage.type() says: its legacy class's name."""
    cls = TYPED.get(dtype)
    return f"torch.{cls.__name__}" if cls is not None else "torch.storage.TypedStorage"


__all__ = ["UntypedStorage", "TypedStorage"] + [c.__name__ for c in TYPED.values()]

# (torch.storage, as an attribute of the package)
from . import storage as _storage_module  # noqa: E402
assert _storage_module.UntypedStorage is UntypedStorage
