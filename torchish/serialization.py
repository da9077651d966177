"""`torchish.save` / `torchish.load` in PyTorch's checkpoint format, both ways.

Two layers:

* The **format layer** works on NumPy only. In a checkpoint a tensor is a `TensorRecord` (flat
  storage array, storage key, dtype name, offset, size, stride, requires_grad, is_parameter);
  `write_checkpoint` pickles a Python object tree holding records into the zip layout
  `torch.save` writes (miniz's record order and 64-byte data alignment, `data.pkl` with pickle
  protocol 2, persistent ids `('storage', torch.<Type>Storage, key, location, numel)`,
  `data/<key>` little-endian bytes, `byteorder`, `version`, `.data/serialization_id`), and
  `read_checkpoint` reads zip and legacy (non-zip) checkpoints back, by default through a
  restricted unpickler that allows what PyTorch's `weights_only` unpickler allows and refuses
  every other global before anything runs.
* The **Tensor bridge** (`save` / `load`) turns torchish tensors into records while pickling
  (tensors sharing a `_storage` share one storage record) and rebuilds tensors on load: one base
  tensor per storage, every tensor a view of it, so aliasing survives the round trip.
"""
import codecs
import contextlib
import io
import mmap as _mmap
import os
import pickle
import random
import struct
import sys
import zipfile
import zlib
from collections import Counter, OrderedDict

import ml_dtypes
import numpy as np

__all__ = ["save", "load", "TensorRecord", "LoadedStorage", "write_checkpoint",
           "read_checkpoint", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

# ---- dtypes ----------------------------------------------------------------------------------
# dtype name -> (NumPy dtype, legacy storage class). Dtypes without a legacy class are pickled
# as `torch.storage.UntypedStorage` plus the dtype and rebuilt by `_rebuild_tensor_v3`, as
# PyTorch does for its `_new_dtypes()`.
_DTYPES = {
    "float16": (np.float16, "HalfStorage"), "bfloat16": (ml_dtypes.bfloat16, "BFloat16Storage"),
    "float32": (np.float32, "FloatStorage"), "float64": (np.float64, "DoubleStorage"),
    "complex64": (np.complex64, "ComplexFloatStorage"),
    "complex128": (np.complex128, "ComplexDoubleStorage"),
    "uint8": (np.uint8, "ByteStorage"), "int8": (np.int8, "CharStorage"),
    "int16": (np.int16, "ShortStorage"), "int32": (np.int32, "IntStorage"),
    "int64": (np.int64, "LongStorage"), "bool": (np.bool_, "BoolStorage"),
    "qint8": (np.int8, "QInt8Storage"), "qint32": (np.int32, "QInt32Storage"),
    "quint8": (np.uint8, "QUInt8Storage"), "quint4x2": (np.uint8, "QUInt4x2Storage"),
    "quint2x4": (np.uint8, "QUInt2x4Storage"),
    "uint16": (np.uint16, None), "uint32": (np.uint32, None), "uint64": (np.uint64, None),
    "complex32": (ml_dtypes.complex32, None), "float8_e5m2": (ml_dtypes.float8_e5m2, None),
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, None),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, None),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, None),
    "float8_e8m0fnu": (ml_dtypes.float8_e8m0fnu, None), "float4_e2m1fn_x2": (np.uint8, None),
    "bits8": (np.uint8, None), "bits16": (np.uint16, None), "bits1x8": (np.uint8, None),
    "bits2x4": (np.uint8, None), "bits4x2": (np.uint8, None),
}
_STORAGE_DTYPE = {cls: name for name, (_, cls) in _DTYPES.items() if cls}


def _np_dtype(name):
    try:
        return np.dtype(_DTYPES[name][0])
    except KeyError:
        raise TypeError(f"dtype torch.{name} can't be stored in a checkpoint") from None


def _swap_unit(np_dtype):
    # Complex numbers are byte-swapped per component, as c10 does.
    return np_dtype.itemsize // 2 if np_dtype.kind == "c" else np_dtype.itemsize


def _from_bytes(buf, np_dtype, big_endian=False, offset=0, count=-1):
    arr = np.frombuffer(buf, dtype=np.uint8, count=count * np_dtype.itemsize if count >= 0
                        else -1, offset=offset)
    unit = _swap_unit(np_dtype)
    if big_endian and unit > 1:
        arr = arr.view(f">u{unit}").astype(f"<u{unit}").view(np.uint8)
    return arr.view(np_dtype)


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

    `storage` is the flat NumPy array of the whole storage; records with the same `storage_key`
    (any hashable) share one `data/<n>` entry. `size`, `stride` and `storage_offset` are in
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
        stride = _contiguous_strides(size)
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


def _contiguous_strides(size):
    strides, acc = [], 1
    for n in reversed(size):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


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


def _record_reduce(rec):
    """How torch pickles a tensor (`Tensor._reduce_ex_internal`, `Parameter.__reduce_ex__`)."""
    dtype = rec.dtype
    legacy = _DTYPES[dtype][1] if dtype in _DTYPES else None
    args = (_StorageRef(rec), rec.storage_offset, tuple(rec.size), tuple(rec.stride),
            False if rec.is_parameter else bool(rec.requires_grad), OrderedDict())
    if legacy is None:
        func, args = _REBUILD_V3, args + (_Global("torch", dtype),)
    else:
        func = _REBUILD_V2
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


# ---- the zip writer (what caffe2's PyTorchStreamWriter + miniz produce) ---------------------
_U32 = 0xFFFFFFFF
_ALIGN = 64


class _ZipWriter:
    """Stored (uncompressed) zip records laid out byte for byte as `torch.save` lays them.

    Every local header carries an `FB` extra field padding the data to 64 bytes, sizes go in a
    data descriptor, and the archive always ends with zip64 end records: `torch.load(mmap=True)`
    computes storage offsets from this layout, so it must match.
    """

    def __init__(self, f, archive_name):
        self.f, self.prefix, self.pos, self.entries = f, archive_name + "/", 0, []
        self.crc_combined = 0

    def _write(self, data):
        self.f.write(data)
        self.pos += len(data) if not isinstance(data, memoryview) else data.nbytes

    def write_record(self, name, data):
        name = (self.prefix + name).encode("utf-8")
        data = memoryview(data).cast("B")
        size, ofs = data.nbytes, self.pos
        big_size, big_ofs = size >= _U32, ofs >= _U32
        zip64 = b""
        if big_size or big_ofs:
            fields = (struct.pack("<QQ", size, size) if big_size else b"") + \
                (struct.pack("<Q", ofs) if big_ofs else b"")
            zip64 = struct.pack("<HH", 1, len(fields)) + fields
        start = ofs + 30 + len(name) + len(zip64) + 4
        pad = (-start) % _ALIGN
        extra = zip64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800  # UTF-8 names; descriptor only for non-empty
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, flags, 0, 0, 0, 0, 0, 0,
                                len(name), len(extra)) + name + extra)
        crc = 0
        for i in range(0, size, 1 << 26):
            chunk = data[i:i + (1 << 26)]
            crc = zlib.crc32(chunk, crc)
            self._write(chunk)
        if size:
            if zip64:
                self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
            else:
                self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self.crc_combined = (self.crc_combined * 1000003 ^ crc) & 0xFFFFFFFFFFFFFFFF
        self.entries.append((name, flags, crc, size, ofs, zip64))

    def finish(self):
        cd_ofs = self.pos
        for name, flags, crc, size, ofs, zip64 in self.entries:
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, flags, 0, 0, 0,
                                    crc, min(size, _U32), min(size, _U32), len(name),
                                    len(zip64), 0, 0, 0, 0, min(ofs, _U32)) + name + zip64)
        n, cd_size, eocd64 = len(self.entries), self.pos - cd_ofs, self.pos
        self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x002D, 0, 0, n, n,
                                cd_size, cd_ofs))
        self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF),
                                min(n, 0xFFFF), min(cd_size, _U32), min(cd_ofs, _U32), 0))


def _archive_name(f):
    # PyTorchStreamWriter names the archive after the file, extension dropped; buffers get
    # "archive".
    if not isinstance(f, (str, os.PathLike)):
        return "archive"
    base = os.path.basename(os.fspath(f))
    dot = base.rfind(".")
    name = base[:dot] if dot >= 0 else base
    if not name:
        raise RuntimeError(f"invalid file name: {os.fspath(f)}")
    return name


class _Pickler(pickle._Pickler):
    """The pure-Python pickler (it lets us emit `GLOBAL` for torch names torchish can't import).

    `convert` maps library objects (torchish tensors, dtypes...) to records / refs on the fly.
    """

    def __init__(self, file, protocol, convert, on_storage):
        super().__init__(file, protocol)
        self._convert, self._on_storage = convert, on_storage

    def save(self, obj, save_persistent_id=True):
        if self._convert is not None:
            rep = self._convert(obj)
            if rep is not None:
                obj = rep
        if type(obj) is _Global:
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return self._on_storage(obj.record)
        return None


def write_checkpoint(obj, f, *, convert=None, pickle_protocol=2,
                     _use_new_zipfile_serialization=True, _disable_byteorder_record=False,
                     _serialization_id=None):
    """Write `obj` (records inside) to `f` (path or binary file) as `torch.save` would.

    `convert(x)` may return a record / reference standing for a library object `x`.
    """
    if not _use_new_zipfile_serialization:
        return _write_legacy(obj, f, pickle_protocol, convert)
    keys, storages, dtypes = {}, [], {}

    def on_storage(rec):
        key = keys.get(rec.storage_key)
        flat = rec.storage
        legacy = _DTYPES.get(rec.dtype, (None, None))[1]
        if key is None:
            key = keys[rec.storage_key] = str(len(keys))
            storages.append((key, flat))
            dtypes[key] = rec.dtype if legacy else "uint8"
        elif dtypes[key] != (rec.dtype if legacy else "uint8"):
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        if legacy is None:
            return ("storage", _UNTYPED, key, rec.location, flat.size * flat.itemsize)
        return ("storage", _Global("torch", legacy), key, rec.location, flat.size)

    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, convert, on_storage).dump(obj)
    with _open_for(f, "wb") as fh:
        zw = _ZipWriter(fh, _archive_name(f))
        zw.write_record("data.pkl", buf.getbuffer())
        zw.write_record(".format_version", b"1")
        zw.write_record(".storage_alignment", str(_ALIGN).encode())
        if not _disable_byteorder_record:
            zw.write_record("byteorder", b"little")
        for key, flat in storages:
            flat = np.ascontiguousarray(flat)
            if flat.dtype.byteorder == ">" or (flat.dtype.byteorder == "=" and
                                               sys.byteorder == "big"):
                flat = flat.astype(flat.dtype.newbyteorder("<"))
            zw.write_record(f"data/{key}", flat.reshape(-1).view(np.uint8))
        zw.write_record("version", b"3\n")
        sid = _serialization_id or "%020d%020d" % (random.getrandbits(64) % 10 ** 20,
                                                   zw.crc_combined % 10 ** 20)
        zw.write_record(".data/serialization_id", sid.encode())
        zw.finish()


@contextlib.contextmanager
def _open_for(f, mode):
    if isinstance(f, (str, os.PathLike)):
        with open(f, mode) as fh:
            yield fh
    else:
        yield f
        if hasattr(f, "flush"):
            f.flush()


# ---- reading ---------------------------------------------------------------------------------
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

    def tensor(self, storage, offset, size, stride, requires_grad, dtype, metadata=None):
        if storage.dtype != dtype:
            data = storage.data.view(_np_dtype(dtype))
        else:
            data = storage.data
        _check_bounds(size, stride, offset, data.size)
        return TensorRecord(data, storage.key, dtype, offset, size, stride, requires_grad,
                            location=storage.device, metadata=metadata)

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


def _unsupported(what):
    def fn(*args):
        raise RuntimeError(f"torchish can't load {what} from a checkpoint")
    fn.__name__ = fn.__qualname__ = what
    return fn


def _rebuild_functions(b):
    """torch._utils' rebuild functions by full name, building through backend `b`."""
    def dtype_of(d):
        return d if isinstance(d, str) else b.dtype_name(d)

    def v1(storage, offset, size, stride):
        return b.tensor(storage, offset, size, stride, False, storage.dtype)

    def v2(storage, offset, size, stride, requires_grad, backward_hooks, metadata=None):
        return b.tensor(storage, offset, size, stride, requires_grad, storage.dtype,
                        metadata)

    def v3(storage, offset, size, stride, requires_grad, backward_hooks, dtype,
           metadata=None):
        return b.tensor(storage, offset, size, stride, requires_grad, dtype_of(dtype),
                        metadata)

    def param(data, requires_grad, backward_hooks):
        return b.parameter(data, requires_grad)

    def param_state(data, requires_grad, backward_hooks, state):
        return b.set_state(b.parameter(data, requires_grad), state)

    def from_type(func, new_type, args, state):
        ret = func(*args)
        if new_type is not b.tensor_class and not (isinstance(new_type, type) and
                                                   isinstance(ret, new_type)):
            raise RuntimeError(f"torchish can't rebuild a tensor of type {new_type}")
        return b.set_state(ret, state)

    def from_cpu(data, dtype, device, requires_grad):
        return b.from_cpu(data, dtype_of(dtype), device, requires_grad)

    table = {
        "torch._utils._rebuild_tensor": v1, "torch._utils._rebuild_tensor_v2": v2,
        "torch._utils._rebuild_tensor_v3": v3, "torch._utils._rebuild_parameter": param,
        "torch._utils._rebuild_parameter_with_state": param_state,
        "torch._tensor._rebuild_from_type_v2": from_type,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": from_cpu,
    }
    for what in ("_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_nested_tensor",
                 "_rebuild_meta_tensor_no_storage", "_rebuild_wrapper_subclass",
                 "_rebuild_device_tensor_from_numpy"):
        table["torch._utils." + what] = _unsupported(what)
    return table


_DTYPE_GLOBALS = [n for n in _DTYPES] + [f"uint{i}" for i in range(1, 8)] + \
    [f"int{i}" for i in range(1, 8)]
_QSCHEMES = ["per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
             "per_channel_symmetric", "per_channel_affine_float_qparams"]


def _allowed_globals(backend):
    """PyTorch's `_get_allowed_globals()`, each name resolved to its torchish counterpart."""
    rc = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": backend.parameter_class or backend.parameter,
        "torch.serialization._get_layout": backend.layout, "torch.Size": backend.size,
        "torch.Tensor": backend.tensor_class, "torch.device": backend.device,
        "_codecs.encode": codecs.encode, "builtins.bytearray": bytearray,
        "builtins.set": set, "builtins.complex": complex,
    }
    for name in _DTYPE_GLOBALS:
        rc["torch." + name] = _LazyGlobal(backend.dtype, name)
    for cls, name in _STORAGE_DTYPE.items():
        rc["torch." + cls] = _StorageType(name)
        if not cls.startswith("Q"):
            rc["torch.cuda." + cls] = _StorageType(name)
    rc["torch.storage.UntypedStorage"] = _StorageType("uint8")
    rc["torch.storage.TypedStorage"] = _StorageType(None)
    for q in _QSCHEMES:
        rc["torch." + q] = _Global("torch", q)
    rc.update(_rebuild_functions(backend))
    return rc


class _LazyGlobal:
    """A dtype global resolved at first use, so files naming dtypes torchish lacks still load
    as long as no tensor needs them."""
    __slots__ = ("fn", "name")

    def __init__(self, fn, name):
        self.fn, self.name = fn, name


# user allowlist, as torch.serialization.add_safe_globals
_safe_globals = set()


def add_safe_globals(safe_globals):
    """Allow these globals (objects, or `(object, "module.name")` pairs) in weights_only loads."""
    _safe_globals.update(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_):
    added = set(globals_) - _safe_globals
    _safe_globals.update(added)
    try:
        yield
    finally:
        _safe_globals.difference_update(added)


def _user_globals():
    rc = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got {g!r}")
            rc[g[1]] = g[0]
        else:
            rc[f"{g.__module__}.{g.__qualname__}"] = g
    return rc


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
# the renames of Python 2 names that torch's weights-only unpickler applies (torch/_utils.py)
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue",
                   "repr": "reprlib", "_abcoll": "collections.abc", "UserDict": "collections",
                   "UserList": "collections", "UserString": "collections", "whichdb": "dbm",
                   "StringIO": "io", "cStringIO": "io"}
_NAME_MAPPING = {("__builtin__", "xrange"): ("builtins", "range"),
                 ("__builtin__", "reduce"): ("functools", "reduce"),
                 ("__builtin__", "intern"): ("sys", "intern"),
                 ("__builtin__", "unichr"): ("builtins", "chr"),
                 ("__builtin__", "unicode"): ("builtins", "str"),
                 ("__builtin__", "long"): ("builtins", "int"),
                 ("__builtin__", "basestring"): ("builtins", "str"),
                 ("exceptions", "StandardError"): ("builtins", "Exception")}


class _WeightsOnlyUnpickler:
    """A pickle interpreter that builds data only.

    Globals come from the allowlist (never imported), REDUCE/NEWOBJ call only allowlisted
    callables, BUILD touches only tensors, parameters, OrderedDicts and allowlisted types, and
    APPEND/SETITEM only lists/dicts: PyTorch's rules (torch/_weights_only_unpickler.py). It also
    accepts the pickle protocol 3-5 opcodes that only carry data.
    """

    def __init__(self, file, allowed, persistent_load, encoding="utf-8", backend=None):
        self.read, self.readline = file.read, file.readline
        self.allowed, self.persistent_load = allowed, persistent_load
        self.encoding, self.backend = encoding, backend
        self.user = _user_globals()
        self.callables = {id(v) for v in allowed.values()} | {id(v) for v in self.user.values()}
        self.param_ctor = allowed.get("torch.nn.parameter.Parameter")
        self.memo, self.stack, self.metastack = {}, [], []

    def _global(self, module, name):
        if (module, name) in _NAME_MAPPING:
            module, name = _NAME_MAPPING[(module, name)]
        elif module in _IMPORT_MAPPING:
            module = _IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self.allowed:
            obj = self.allowed[full]
            if type(obj) is _LazyGlobal:
                obj = obj.fn(obj.name)
                self.callables.add(id(obj))
            return obj
        if full in self.user:
            return self.user[full]
        if full.startswith("builtins"):
            rest = full[len("builtins"):]
            full = rest[1:] if rest.startswith(".") else "builtins" + rest
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{full}])` or the "
            f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function.")

    def pop_mark(self):
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def _allowed_type(self, t):
        return id(t) in self.callables

    def load(self):
        read, ops = self.read, _OPS
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = ops.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            if op(self) is _STOP:
                return self.stack.pop()


_STOP = object()


def _op_table():
    P = pickle
    u = struct.unpack
    t = {}

    def op(code):
        def deco(fn):
            t[code[0]] = fn
            return fn
        return deco

    t[P.NONE[0]] = lambda s: s.stack.append(None)
    t[P.NEWTRUE[0]] = lambda s: s.stack.append(True)
    t[P.NEWFALSE[0]] = lambda s: s.stack.append(False)
    t[P.EMPTY_TUPLE[0]] = lambda s: s.stack.append(())
    t[P.EMPTY_LIST[0]] = lambda s: s.stack.append([])
    t[P.EMPTY_DICT[0]] = lambda s: s.stack.append({})
    t[P.EMPTY_SET[0]] = lambda s: s.stack.append(set())
    t[P.BININT[0]] = lambda s: s.stack.append(u("<i", s.read(4))[0])
    t[P.BININT1[0]] = lambda s: s.stack.append(s.read(1)[0])
    t[P.BININT2[0]] = lambda s: s.stack.append(u("<H", s.read(2))[0])
    t[P.BINFLOAT[0]] = lambda s: s.stack.append(u(">d", s.read(8))[0])
    t[P.LONG1[0]] = lambda s: s.stack.append(P.decode_long(s.read(s.read(1)[0])))
    t[P.LONG4[0]] = lambda s: s.stack.append(P.decode_long(s.read(u("<i", s.read(4))[0])))
    t[P.BINUNICODE[0]] = lambda s: s.stack.append(
        str(s.read(u("<I", s.read(4))[0]), "utf-8", "surrogatepass"))
    t[P.SHORT_BINUNICODE[0]] = lambda s: s.stack.append(
        str(s.read(s.read(1)[0]), "utf-8", "surrogatepass"))
    t[P.BINUNICODE8[0]] = lambda s: s.stack.append(
        str(s.read(u("<Q", s.read(8))[0]), "utf-8", "surrogatepass"))
    t[P.SHORT_BINBYTES[0]] = lambda s: s.stack.append(bytes(s.read(s.read(1)[0])))
    t[P.BINBYTES[0]] = lambda s: s.stack.append(bytes(s.read(u("<I", s.read(4))[0])))
    t[P.BINBYTES8[0]] = lambda s: s.stack.append(bytes(s.read(u("<Q", s.read(8))[0])))
    t[P.BYTEARRAY8[0]] = lambda s: s.stack.append(bytearray(s.read(u("<Q", s.read(8))[0])))

    def binstring(s, n):
        data = s.read(n)
        s.stack.append(data if s.encoding == "bytes" else data.decode(s.encoding, "strict"))
    t[P.SHORT_BINSTRING[0]] = lambda s: binstring(s, s.read(1)[0])
    t[P.BINSTRING[0]] = lambda s: binstring(s, u("<i", s.read(4))[0])

    def mark(s):
        s.metastack.append(s.stack)
        s.stack = []
    t[P.MARK[0]] = mark

    def from_mark(make):  # pop the marked items *before* choosing the stack to push on
        def f(s):
            items = make(s.pop_mark())
            s.stack.append(items)
        return f
    t[P.TUPLE[0]], t[P.LIST[0]] = from_mark(tuple), from_mark(list)
    t[P.FROZENSET[0]] = from_mark(frozenset)

    def dict_(s):
        items = s.pop_mark()
        s.stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
    t[P.DICT[0]] = dict_

    def tupn(n):
        def f(s):
            s.stack[-n:] = [tuple(s.stack[-n:])]
        return f
    t[P.TUPLE1[0]], t[P.TUPLE2[0]], t[P.TUPLE3[0]] = tupn(1), tupn(2), tupn(3)
    t[P.POP[0]] = lambda s: s.pop_mark() if not s.stack else s.stack.pop()
    t[P.POP_MARK[0]] = lambda s: s.pop_mark()
    t[P.DUP[0]] = lambda s: s.stack.append(s.stack[-1])

    def get(s, i):
        s.stack.append(s.memo[i])

    def put(s, i):
        if i < 0:
            raise ValueError("negative argument")
        s.memo[i] = s.stack[-1]
    t[P.BINGET[0]] = lambda s: get(s, s.read(1)[0])
    t[P.LONG_BINGET[0]] = lambda s: get(s, u("<I", s.read(4))[0])
    t[P.BINPUT[0]] = lambda s: put(s, s.read(1)[0])
    t[P.LONG_BINPUT[0]] = lambda s: put(s, u("<I", s.read(4))[0])
    t[P.MEMOIZE[0]] = lambda s: put(s, len(s.memo))
    t[P.FRAME[0]] = lambda s: s.read(8) and None
    t[P.PROTO[0]] = lambda s: s.read(1) and None
    t[P.STOP[0]] = lambda s: _STOP

    def global_(s):
        module = s.readline()[:-1].decode("utf-8")
        name = s.readline()[:-1].decode("utf-8")
        s.stack.append(s._global(module, name))
    t[P.GLOBAL[0]] = global_

    def stack_global(s):
        name, module = s.stack.pop(), s.stack.pop()
        if type(name) is not str or type(module) is not str:
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        s.stack.append(s._global(module, name))
    t[P.STACK_GLOBAL[0]] = stack_global

    def reduce_(s):
        args = s.stack.pop()
        func = s.stack[-1]
        if not s._allowed_type(func):
            raise pickle.UnpicklingError(
                f"Trying to call reduce for unrecognized function {func}")
        s.stack[-1] = func(*args)
    t[P.REDUCE[0]] = reduce_

    def newobj(s, kwargs=None):
        args = s.stack.pop()
        cls = s.stack.pop()
        b = s.backend
        if cls is s.param_ctor and cls is not None:
            s.stack.append(b.parameter(*args, **(kwargs or {})))
        elif s._allowed_type(cls) and isinstance(cls, type):
            s.stack.append(cls.__new__(cls, *args, **(kwargs or {})))
        else:
            raise pickle.UnpicklingError(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls}")
    t[P.NEWOBJ[0]] = newobj

    def newobj_ex(s):
        newobj(s, s.stack.pop())
    t[P.NEWOBJ_EX[0]] = newobj_ex

    def build(s):
        state = s.stack.pop()
        inst = s.stack[-1]
        b = s.backend
        if type(inst) is OrderedDict:
            inst.__dict__.update(state)
        elif isinstance(inst, b.tensor_class) or (b.parameter_class is not None and
                                                  isinstance(inst, b.parameter_class)):
            b.set_state(inst, state)
        elif s._allowed_type(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                _set_obj_state(inst, state)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")
    t[P.BUILD[0]] = build

    def append(s):
        item = s.stack.pop()
        if type(s.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(s.stack[-1])}")
        s.stack[-1].append(item)
    t[P.APPEND[0]] = append

    def appends(s):
        items = s.pop_mark()
        if type(s.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(s.stack[-1])}")
        s.stack[-1].extend(items)
    t[P.APPENDS[0]] = appends

    def additems(s):
        items = s.pop_mark()
        if type(s.stack[-1]) is not set:
            raise pickle.UnpicklingError(f"Can only add to sets, but got {type(s.stack[-1])}")
        s.stack[-1].update(items)
    t[P.ADDITEMS[0]] = additems

    def check_target(s, opcode):
        if type(s.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(s.stack[-1])}")

    def setitem(s):
        v, k = s.stack.pop(), s.stack.pop()
        check_target(s, "SETITEM")
        s.stack[-1][k] = v
    t[P.SETITEM[0]] = setitem

    def setitems(s):
        items = s.pop_mark()
        check_target(s, "SETITEMS")
        d = s.stack[-1]
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]
    t[P.SETITEMS[0]] = setitems

    def binpersid(s):
        pid = s.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        s.stack.append(s.persistent_load(pid))
    t[P.BINPERSID[0]] = binpersid
    return t


_OPS = _op_table()


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


# ---- checkpoint readers ----------------------------------------------------------------------
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
                 "default with weights_only https://pytorch.org/docs/stable/generated/"
                 "torch.load.html.")
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.")


def _weights_only_message(message):
    # The wording of torch.load's `_get_wo_message`, so users see the error they know.
    if "was not an allowed global by default." in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    out = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += ("Please file an issue with the following so that we can make "
                "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, with `torch.*` names resolved to torchish."""

    def __init__(self, file, table, backend, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._table, self._backend, self._pload = table, backend, persistent_load

    def persistent_load(self, pid):
        return self._pload(pid)

    def find_class(self, module, name):
        full = f"{module}.{name}"
        obj = self._table.get(full)
        if obj is not None:
            return obj.fn(obj.name) if type(obj) is _LazyGlobal else obj
        if module == "torch" or module.startswith("torch."):
            if name in _STORAGE_DTYPE:  # torch.FloatStorage, torch.cuda.FloatStorage...
                return _StorageType(_STORAGE_DTYPE[name])
            return self._backend.find_class(module, name)
        return super().find_class(module, name)


def _unpickle(file, weights_only, backend, persistent_load, encoding):
    table = _allowed_globals(backend)
    if not weights_only:
        return _FullUnpickler(file, table, backend, persistent_load, encoding=encoding).load()
    try:
        return _WeightsOnlyUnpickler(file, table, persistent_load, encoding, backend).load()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(_weights_only_message(str(e))) from None


def _is_zip(fh):
    start = fh.tell()
    magic = fh.read(4)
    fh.seek(start)
    return magic == b"PK\x03\x04"


def read_checkpoint(f, *, weights_only=True, backend=None, mmap=False, encoding="utf-8"):
    """Read a `torch.save` checkpoint. With the default backend tensors come back as
    `TensorRecord`s whose `storage` arrays are shared per storage (NumPy only)."""
    backend = backend or RecordBackend()
    path = f if isinstance(f, (str, os.PathLike)) else None
    with (open(f, "rb") if path is not None else contextlib.nullcontext(f)) as fh:
        if _is_zip(fh):
            return _read_zip(fh, path, weights_only, backend, mmap, encoding)
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use mmap.")
        return _read_legacy(fh, weights_only, backend, encoding)


def _read_zip(fh, path, weights_only, backend, use_mmap, encoding):
    zf = zipfile.ZipFile(fh)
    names = zf.namelist()
    prefix = names[0].split("/", 1)[0] + "/" if names else ""
    if prefix + "constants.pkl" in names:
        raise RuntimeError("torchish.load can't load TorchScript archives (torch.jit.save).")
    if prefix + "data.pkl" not in names:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    big = False
    if prefix + "byteorder" in names:
        order = zf.read(prefix + "byteorder")
        if order not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + order.decode())
        big = order == b"big"
    mm = None
    if use_mmap:
        if path is None:
            raise ValueError("f must be a file path in order to use the mmap argument")
        mm = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_READ)
    loaded = {}

    def read_storage(key, np_dtype, numel):
        name = f"{prefix}data/{key}"
        if mm is None:
            raw, offset = zf.read(name), 0
        else:
            info = zf.getinfo(name)
            n, e = struct.unpack("<HH", mm[info.header_offset + 26:info.header_offset + 30])
            raw, offset = mm, info.header_offset + 30 + n + e
        if (len(raw) - offset) < numel * np_dtype.itemsize:
            raise RuntimeError(f"storage data/{key} is truncated")
        return _from_bytes(raw, np_dtype, big, offset, numel)

    def persistent_load(pid):
        _, storage_type, key, location, numel = pid
        key, location = _ascii(key), _ascii(location)
        if key in loaded:
            return loaded[key]
        dtype = _storage_dtype(storage_type)
        data = read_storage(key, _np_dtype(dtype), numel)
        st = loaded[key] = backend.restore(LoadedStorage(key, dtype, data, location))
        return st

    pkl = io.BytesIO(zf.read(prefix + "data.pkl"))
    return _unpickle(pkl, weights_only, backend, persistent_load, encoding)


def _storage_dtype(storage_type):
    dtype = getattr(storage_type, "dtype", None)
    if not isinstance(dtype, str):
        raise pickle.UnpicklingError(f"unknown storage type {storage_type!r}")
    return dtype


_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_PROTOCOL_VERSION = 1001


def _read_legacy(fh, weights_only, backend, encoding):
    """The pre-1.6 format: magic, version, sys_info pickles, the object pickle, the sorted
    storage keys, then each storage as int64 numel + raw bytes (filled in after unpickling,
    like torch's `_set_from_file`)."""
    def small_pickle():
        return _WeightsOnlyUnpickler(fh, {}, None, encoding, backend).load()
    try:
        magic = small_pickle()
    except (pickle.UnpicklingError, EOFError, KeyError, IndexError) as e:
        raise RuntimeError(f"Invalid magic number; corrupt file? ({e})") from None
    if magic != _MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    if small_pickle() != _PROTOCOL_VERSION:
        raise RuntimeError("Invalid protocol version")
    sys_info = small_pickle()
    storages = {}

    def persistent_load(pid):
        kind = _ascii(pid[0])
        if kind == "module":
            if weights_only:
                raise pickle.UnpicklingError("Only persistent_load of storage is allowed")
            return pid[1]
        _, storage_type, key, location, numel, view = pid
        if view is not None:
            raise RuntimeError("torchish can't load legacy storage views")
        key = _ascii(key)
        if key not in storages:
            dtype = _storage_dtype(storage_type)
            st = LoadedStorage(key, dtype, np.zeros(numel, _np_dtype(dtype)), _ascii(location),
                               pending=True)
            storages[key] = backend.restore(st)
        return storages[key]

    result = _unpickle(fh, weights_only, backend, persistent_load, encoding)
    keys = small_pickle()
    big = not sys_info.get("little_endian", True)
    for key in keys:
        st = storages[key]
        (numel,) = struct.unpack("<q" if not big else ">q", fh.read(8))
        np_dtype = st.data.dtype
        values = _from_bytes(fh.read(numel * np_dtype.itemsize), np_dtype, big)
        st.data[...] = values
        st.pending = False
        backend.fill(st)
    return result


def get_unsafe_globals_in_checkpoint(f):
    """The globals a checkpoint names that weights_only loading would refuse."""
    import pickletools
    with (open(f, "rb") if isinstance(f, (str, os.PathLike)) else
          contextlib.nullcontext(f)) as fh:
        if not _is_zip(fh):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        zf = zipfile.ZipFile(fh)
        pkl = zf.read(zf.namelist()[0].split("/", 1)[0] + "/data.pkl")
    allowed = set(_allowed_globals(RecordBackend())) | \
        set(_user_globals())
    found = set()
    for op, arg, _ in pickletools.genops(pkl):
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            module, name = _NAME_MAPPING.get((module, name), (module, name))
            found.add(f"{_IMPORT_MAPPING.get(module, module)}.{name}")
    return sorted(found - allowed)


# ---- the Tensor bridge -----------------------------------------------------------------------
_CPU = "cpu"


def _torchish():
    import torchish
    return torchish


def _parameter_class(T):
    nn = getattr(T, "nn", None)
    return getattr(nn, "Parameter", None)


def _location_tag(device):
    if device.type == "cpu":
        return _CPU
    return f"{device.type}:{device.index or 0}"


def _make_converter():
    T = _torchish()
    param_cls = _parameter_class(T)
    cache, keep, flats = {}, [], {}
    size_fn, device_fn = _Global("torch", "Size"), _Global("torch", "device")

    def record(t):
        st = t._storage
        flat = flats.get(id(st))
        if flat is None:
            flat = flats[id(st)] = np.asarray(st.data).reshape(-1)
            keep.append(st)
        key, offset, stride = id(st), t.storage_offset(), tuple(t.stride())
        if flat.dtype != t.dtype.np:  # a reinterpreting view: save its values on their own
            flat, key, offset = np.asarray(t._data).reshape(-1), object(), 0
            stride = _contiguous_strides(tuple(t.shape))
            keep.append(key)
        state = getattr(t, "__dict__", None) or None
        return TensorRecord(flat, key, t.dtype.name, offset, tuple(t.shape), stride,
                            bool(t.requires_grad),
                            param_cls is not None and isinstance(t, param_cls),
                            _location_tag(t.device), dict(state) if state else None)

    def convert(obj):
        t = type(obj)
        if t is int or t is str or t is float:
            return None
        rep = cache.get(id(obj))
        if rep is not None:
            return rep
        if isinstance(obj, T.Tensor):
            rep = record(obj)
        elif t is T.dtype:
            return _Global("torch", obj.name)
        elif t is T.Size:
            rep = _Reduce(size_fn, (tuple(obj),))
        elif t is T.device:
            rep = _Reduce(device_fn, (obj.type,) if obj.index is None else
                          (obj.type, obj.index))
        else:
            return None
        cache[id(obj)] = rep
        keep.append(obj)
        return rep
    return convert


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` to `f` (a path or a writable binary file) in PyTorch's checkpoint format.

    Tensors and Parameters anywhere in `obj` become PyTorch tensors in the file (aliasing kept);
    torchish dtypes, `Size` and `device` become their torch counterparts, so `torch.load` reads
    the file with `weights_only=True`.
    """
    if pickle_module is not pickle:
        raise NotImplementedError("torchish.save supports only the standard pickle module")
    write_checkpoint(obj, f, convert=_make_converter(), pickle_protocol=pickle_protocol,
                     _use_new_zipfile_serialization=_use_new_zipfile_serialization,
                     _disable_byteorder_record=_disable_byteorder_record)


def _write_legacy(obj, f, protocol, convert):
    keys, datas = {}, {}

    def on_storage(rec):
        key = keys.get(rec.storage_key)
        if key is None:
            key = keys[rec.storage_key] = str(len(keys))
            datas[key] = rec.storage
        legacy = _DTYPES[rec.dtype][1]
        if legacy is None:
            raise RuntimeError(f"the legacy format can't store dtype torch.{rec.dtype}")
        return ("storage", _Global("torch", legacy), key, rec.location, rec.storage.size, None)

    with _open_for(f, "wb") as fh:
        for header in (_MAGIC_NUMBER, _PROTOCOL_VERSION,
                       {"protocol_version": _PROTOCOL_VERSION, "little_endian": True,
                        "type_sizes": {"short": 2, "int": 4, "long": 4}}):
            pickle.dump(header, fh, protocol=protocol)
        _Pickler(fh, protocol, convert, on_storage).dump(obj)
        pickle.dump(sorted(datas), fh, protocol=protocol)
        for key in sorted(datas):
            flat = np.ascontiguousarray(datas[key]).reshape(-1)
            flat = flat.astype(flat.dtype.newbyteorder("<")) if flat.dtype.byteorder == ">" \
                else flat
            fh.write(struct.pack("<q", flat.size))
            fh.write(flat.view(np.uint8).tobytes())


class _TorchishBackend(RecordBackend):
    """Builds torchish objects: one base tensor per storage, each tensor a view of it."""

    def __init__(self, map_location):
        self.T = T = _torchish()
        self.tensor_class = T.Tensor
        self.parameter_class = _parameter_class(T)
        self.map_location = map_location

    def dtype(self, name):
        d = getattr(self.T, name, None)
        return d if isinstance(d, self.T.dtype) else _Global("torch", name)

    def size(self, sizes=()):
        return self.T.Size(sizes)

    def device(self, type, index=None):
        return self.T.device(type, index)

    def layout(self, name):
        return getattr(self.T, str(name).rpartition(".")[2], name)

    def _target(self, location):
        """Where `map_location` (when not a callable) sends a storage saved at `location`."""
        ml = self.map_location
        if ml is None or callable(ml) and not isinstance(ml, self.T.device):
            return location
        if isinstance(ml, dict):
            return ml.get(location, location)
        return _ascii(ml) if isinstance(ml, (str, bytes)) else str(ml)

    def restore(self, storage):
        ml = self.map_location
        if ml is None or not callable(ml) or isinstance(ml, self.T.device):
            target = self._target(storage.location)
            return storage if target == storage.location else storage.to(target)
        result = ml(storage, storage.location)
        if result is None:
            return storage
        if not isinstance(result, LoadedStorage):
            raise TypeError("map_location callables must return None or the storage they were "
                            f"given (or storage.cpu() / .cuda() / .to()), got {type(result)}")
        return result

    def _device(self, location):
        T = self.T
        dev = T.device(location)
        if dev.type == "cuda":  # torch.serialization._validate_device's checks and words
            cuda = getattr(T, "cuda", None)
            if cuda is not None and not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "torch.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use torch.load with map_location=torch.device('cpu') "
                    "to map your storages to the CPU.")
            count = cuda.device_count() if hasattr(cuda, "device_count") else None
            if count is not None and (dev.index or 0) >= count:
                raise RuntimeError(
                    f"Attempting to deserialize object on CUDA device {dev.index or 0} but "
                    f"torch.cuda.device_count() is {count}. Please use torch.load with "
                    "map_location to map your storages to an existing device.")
        return dev

    def _base(self, storage, dtype, data, shape):
        T = self.T
        if isinstance(self.dtype(dtype), _Global):
            raise TypeError(f"torchish has no dtype torch.{dtype}; can't load this tensor")
        data = data.reshape(shape)
        # legacy storages are zeros until their bytes are read: never let JAX alias them
        base = T.from_numpy(np.array(data) if storage.pending else data)
        dev = self._device(storage.device)
        if base.device != dev:
            base = base.to(dev)
        storage._tensors[dtype] = base
        return base

    def tensor(self, storage, offset, size, stride, requires_grad, dtype, metadata=None):
        T = self.T
        size, stride = tuple(size), tuple(stride)
        data = storage.data if storage.dtype == dtype else storage.data.view(_np_dtype(dtype))
        _check_bounds(size, stride, offset, data.size)
        base = storage._tensors.get(dtype)
        if base is None and offset == 0 and int(np.prod(size)) == data.size and \
                (stride == _contiguous_strides(size) or data.size <= 1):
            t = self._base(storage, dtype, data, size)  # the common case: the tensor owns it
        else:
            if base is None:
                base = self._base(storage, dtype, data, (data.size,))
            with T.no_grad():
                t = base.as_strided(size, stride, offset)
        if metadata:
            if metadata.get("conj"):
                t = t.conj()
            if metadata.get("neg"):
                t = t.neg()
        if requires_grad:
            t.requires_grad_(True)
        return t

    def parameter(self, data, requires_grad=True):
        return self.parameter_class(data, requires_grad)

    def set_state(self, obj, state):
        return _set_obj_state(obj, state)

    def fill(self, storage):
        for dtype, base in storage._tensors.items():
            values = storage.data if storage.dtype == dtype else \
                storage.data.view(_np_dtype(dtype))
            base._set_data(np.array(values.reshape(tuple(base.shape))))

    def from_cpu(self, data, dtype, device, requires_grad):
        t = data.to(dtype=self.dtype(dtype), device=self._device(self._target(str(device))))
        t.requires_grad_(bool(requires_grad))
        return t

    def find_class(self, module, name):
        import importlib
        parts = ("torchish" + module[len("torch"):]).split(".")
        # the same module path under torchish, else the nearest parent exporting the name
        # (torch.nn.modules.linear.Linear -> torchish.nn.Linear)
        for i in range(len(parts), 0, -1):
            try:
                return getattr(importlib.import_module(".".join(parts[:i])), name)
            except (ImportError, AttributeError):
                continue
        raise pickle.UnpicklingError(f"torchish has no counterpart for {module}.{name}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by `torch.save` or `torchish.save` from a path or binary file.

    `weights_only` defaults to True (as in PyTorch 2.6+): only tensors, containers, numbers,
    strings and the other types PyTorch allows can be loaded, and nothing in the file runs.
    `map_location` is a device / string, a dict from saved to wanted locations, or a callable
    `(storage, location) -> storage | None`.
    """
    true_values = ("1", "y", "yes", "true")
    if os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values:
        weights_only = True
    elif weights_only is None and \
            os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values:
        weights_only = False
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    backend = _TorchishBackend(map_location)
    return read_checkpoint(f, weights_only=weights_only, backend=backend, mmap=bool(mmap),
                           encoding=pickle_load_args.get("encoding", "utf-8"))
