"""Tensors as a checkpoint stores them (`TensorRecord`), the stand-ins for the PyTorch globals a
checkpoint names, and what reading builds: `LoadedStorage`, `RecordBackend`."""
import pickle
from collections import OrderedDict

import numpy as np

from .._views import contiguous_strides
from .format import _DTYPES, _np_dtype


# ---- references to PyTorch globals -----------------------------------------------------------
class _Global:
    """A PyTorch global such as `torch.FloatStorage`, pickled as `GLOBAL 'module name'`.

    torchish must not import torch, so these stand-ins are written by hand (see `_Pickler`).
    """
    __slots__ = ("module", "name")
    _table = {}

    def __new__(cls, module, name):
        key = (module, name)
        self = cls._table.get(key)
        if self is None:
            self = cls._table[key] = object.__new__(cls)
            self.module, self.name = module, name
        return self

    def __call__(self, *args):  # pickle insists that a reduce callable is callable
        raise TypeError(f"{self!r} is a reference to a PyTorch object, not callable here")

    def __repr__(self):
        return f"{self.module}.{self.name}"


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAM_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")
_REBUILD_META = _Global("torch._utils", "_rebuild_meta_tensor_no_storage")
_TORCH_TENSOR = _Global("torch", "Tensor")
_UNTYPED = _Global("torch.storage", "UntypedStorage")


class _Reduce:
    """An object pickled as `func(*args)` (torch.Size, torch.device...)."""
    __slots__ = ("func", "args")

    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


# ---- records ---------------------------------------------------------------------------------
class TensorRecord:
    """One tensor as a checkpoint stores it.

    `storage` is the flat NumPy array of the whole storage (None for a meta tensor, which has
    none); records with the same `storage_key` (any hashable) share one `data/<n>` entry. `size`, `stride` and `storage_offset` are in
    elements, as `Tensor.stride()`. `state` holds Python attributes set on the tensor.
    """
    __slots__ = ("storage", "storage_key", "dtype", "storage_offset", "size", "stride",
                 "requires_grad", "is_parameter", "location", "state", "metadata")

    def __init__(self, storage, storage_key, dtype, storage_offset, size, stride,
                 requires_grad=False, is_parameter=False, location="cpu", state=None,
                 metadata=None):
        self.storage, self.storage_key, self.dtype = storage, storage_key, dtype
        self.storage_offset, self.size, self.stride = storage_offset, tuple(size), tuple(stride)
        self.requires_grad, self.is_parameter = requires_grad, is_parameter
        self.location, self.state, self.metadata = location, state, metadata

    @classmethod
    def from_array(cls, array, requires_grad=False, is_parameter=False):
        """A record owning a fresh contiguous storage holding `array` (dtype from NumPy)."""
        array = np.asarray(array, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        name = next(n for n, (d, _) in _DTYPES.items() if np.dtype(d) == array.dtype)
        size = array.shape
        stride = contiguous_strides(size)
        return cls(array.reshape(-1), object(), name, 0, size, stride, requires_grad,
                   is_parameter)

    def numpy(self):
        """The tensor's values as a new NumPy array."""
        item = self.storage.itemsize
        flat = self.storage[self.storage_offset:]
        if 0 in self.size:
            return np.zeros(self.size, self.storage.dtype)
        view = np.lib.stride_tricks.as_strided(
            flat, self.size, tuple(s * item for s in self.stride), writeable=False)
        return np.array(view)

    def __reduce__(self):
        return _record_reduce(self)

    def __repr__(self):
        kind = "Parameter" if self.is_parameter else "Tensor"
        return (f"TensorRecord({kind}, dtype={self.dtype}, size={self.size}, "
                f"stride={self.stride}, offset={self.storage_offset}, key={self.storage_key!r})")


def _check_bounds(size, stride, offset, numel):
    if 0 in size:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if offset < 0 or last >= numel:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset} are out of bounds for storage of size {numel}")


class _StorageRef:
    """Stands for a record's storage inside the pickle; turned into a persistent id."""
    __slots__ = ("record",)

    def __init__(self, record):
        self.record = record


class StorageRecord:
    """A bare storage in a checkpoint (`torch.save(t.untyped_storage())`, `t.storage()`): it
    pickles as its persistent id alone, sharing `data/<n>` with tensors of the same
    `storage_key`. `storage` is the flat NumPy array of its bytes (any dtype), `dtype` the
    TypedStorage's dtype name ("uint8" for an UntypedStorage, `typed` False)."""
    __slots__ = ("storage", "storage_key", "dtype", "location", "typed")

    def __init__(self, storage, storage_key, dtype, location="cpu", typed=False):
        self.storage, self.storage_key, self.dtype = storage, storage_key, dtype
        self.location, self.typed = location, typed

    def __repr__(self):
        kind = f"TypedStorage(dtype={self.dtype})" if self.typed else "UntypedStorage"
        return f"StorageRecord({kind}, nbytes={self.storage.nbytes}, key={self.storage_key!r})"


def _record_reduce(rec):
    """How torch pickles a tensor (`Tensor._reduce_ex_internal`, `Parameter.__reduce_ex__`)."""
    dtype = rec.dtype
    legacy = _DTYPES[dtype][1] if dtype in _DTYPES else None
    requires_grad = False if rec.is_parameter else bool(rec.requires_grad)
    if rec.storage is None:   # a meta tensor: no storage
        func, args = _REBUILD_META, (_Global("torch", dtype), tuple(rec.size),
                                     tuple(rec.stride), requires_grad)
    elif legacy is None:
        func = _REBUILD_V3
        args = (_StorageRef(rec), rec.storage_offset, tuple(rec.size), tuple(rec.stride),
                requires_grad, OrderedDict(), _Global("torch", dtype))
    else:
        func = _REBUILD_V2
        args = (_StorageRef(rec), rec.storage_offset, tuple(rec.size), tuple(rec.stride),
                requires_grad, OrderedDict())
    if rec.metadata:
        args = args + (rec.metadata,)
    if rec.is_parameter:
        data = _Reduce(func, args)
        if rec.state:
            return (_REBUILD_PARAM_STATE,
                    (data, bool(rec.requires_grad), OrderedDict(), rec.state))
        return (_REBUILD_PARAM, (data, bool(rec.requires_grad), OrderedDict()))
    if rec.state:
        return (_REBUILD_FROM_TYPE, (func, _TORCH_TENSOR, args, rec.state))
    return (func, args)


# ---- what reading builds ------------------------------------------------------------------------
class LoadedStorage:
    """One storage read back: flat NumPy `data` plus where it was saved and is to be placed.

    `map_location` callables receive it with its location tag and may return `storage.cuda()`,
    `storage.cpu()`, `storage.to(device)` or the storage itself.
    """
    __slots__ = ("key", "dtype", "data", "location", "device", "pending", "_tensors")

    def __init__(self, key, dtype, data, location, device=None, pending=False):
        self.key, self.dtype, self.data, self.location = key, dtype, data, location
        self.device = location if device is None else device
        self.pending = pending  # legacy files: data arrives after the object pickle
        self._tensors = {}

    def to(self, device):
        return LoadedStorage(self.key, self.dtype, self.data, self.location, str(device),
                             self.pending)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else
                       device if isinstance(device, str) else f"cuda:{int(device)}")

    def size(self):
        return self.data.size

    def __len__(self):
        return self.data.size

    def nbytes(self):
        return self.data.nbytes

    def __repr__(self):
        return f"LoadedStorage(key={self.key!r}, dtype={self.dtype}, numel={self.data.size}, " \
               f"device={self.device!r})"


class _StorageType:
    """What `torch.FloatStorage` etc. unpickle to: only its dtype matters."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"StorageType(dtype=torch.{self.dtype})"


class RecordBackend:
    """Builds the NumPy-level results of `read_checkpoint`: records instead of tensors."""

    def dtype(self, name):
        return _Global("torch", name)

    def dtype_name(self, dtype):
        return dtype.name

    def size(self, sizes=()):
        return tuple(sizes)

    def device(self, type, index=None):
        return str(type) if index is None else f"{type}:{index}"

    def layout(self, name):
        return name

    def restore(self, storage):
        return storage

    # What a storage's persistent id unpickles to (`wrap`), the LoadedStorage back from that
    # (`unwrap`, for the rebuild functions), and `finish`, called once the pickle is read (and a
    # legacy file's data filled in): a backend may complete the wrapped storages there.
    def wrap(self, storage):
        return storage

    def unwrap(self, storage):
        return storage

    def finish(self):
        pass

    def tensor(self, storage, offset, size, stride, requires_grad, dtype, metadata=None):
        if storage.dtype != dtype:
            data = storage.data.view(_np_dtype(dtype))
        else:
            data = storage.data
        _check_bounds(size, stride, offset, data.size)
        return TensorRecord(data, storage.key, dtype, offset, size, stride, requires_grad,
                            location=storage.device, metadata=metadata)

    def meta(self, dtype, size, stride, requires_grad):
        return TensorRecord(None, None, dtype, 0, size, stride, requires_grad, location="meta")

    def parameter(self, data, requires_grad=True):
        rec = TensorRecord(data.storage, data.storage_key, data.dtype, data.storage_offset,
                           data.size, data.stride, requires_grad, True, data.location,
                           data.state, data.metadata)
        return rec

    def set_state(self, obj, state):
        if isinstance(obj, TensorRecord):
            obj.state = _state_dict(state)
            return obj
        return _set_obj_state(obj, state)

    tensor_class = TensorRecord
    parameter_class = None

    def fill(self, storage):
        """Legacy files: `storage.data` has just been filled in place."""

    def from_cpu(self, data, dtype, device, requires_grad):
        return data

    def find_class(self, module, name):  # weights_only=False: where do `torch.*` names go?
        raise pickle.UnpicklingError(f"can't resolve {module}.{name} without torchish")


def _state_dict(state):
    if isinstance(state, tuple) and len(state) == 2:
        merged = dict(state[0] or {})
        merged.update(state[1] or {})
        return merged
    return dict(state or {})


def _set_obj_state(obj, state):
    for k, v in _state_dict(state).items():
        setattr(obj, k, v)
    return obj
