"""`write_checkpoint`: an object tree holding `TensorRecord`s written as `torch.save` writes it,
in the zip layout (caffe2's PyTorchStreamWriter + miniz) or the legacy format."""
import contextlib
import io
import os
import pickle
import random
import struct
import sys
import zlib

import numpy as np

from .format import _DTYPES, _MAGIC_NUMBER, _PROTOCOL_VERSION, _np_dtype
from .records import _UNTYPED, StorageRecord, _Global, _StorageRef


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
        if type(obj) is StorageRecord:
            return self._on_storage(obj)
        return None


def _storage_type(rec):
    """(storage class name or None for UntypedStorage, dtype kept for the one-dtype-per-storage
    check, numel written in the persistent id) for a TensorRecord or StorageRecord."""
    flat = rec.storage
    if type(rec) is StorageRecord:
        if not rec.typed:
            return None, "uint8", flat.nbytes
        legacy = _DTYPES.get(rec.dtype, (None, None))[1]
        if legacy is None:   # (TypedStorage._pickle_storage_type's error)
            raise KeyError(f"dtype torch.{rec.dtype} is not recognized")
        return legacy, rec.dtype, flat.nbytes // _np_dtype(rec.dtype).itemsize
    legacy = _DTYPES.get(rec.dtype, (None, None))[1]
    # a tensor of a dtype without a storage class is saved over an UntypedStorage (uint8)
    return (legacy, rec.dtype, flat.size) if legacy else (None, "uint8", flat.nbytes)


def _check_dtype(dtypes, key, dtype, flat):
    # one dtype per saved storage; an empty one (address 0 in PyTorch) is not checked
    if flat.size and dtypes.setdefault(key, dtype) != dtype:
        raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                           "data as different types")


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
        flat = rec.storage
        legacy, dtype, numel = _storage_type(rec)
        _check_dtype(dtypes, rec.storage_key, dtype, flat)
        key = keys.get(rec.storage_key)
        if key is None:
            key = keys[rec.storage_key] = str(len(keys))
            storages.append((key, flat))
        return ("storage", _Global("torch", legacy) if legacy else _UNTYPED, key, rec.location,
                numel)

    buf = io.BytesIO()
    try:
        _Pickler(buf, pickle_protocol, convert, on_storage).dump(obj)
    except BaseException:
        # PyTorch pickles into an archive it has already opened: a failed save leaves one that
        # holds only the records its writer adds on closing (no data.pkl)
        with _open_for(f, "wb") as fh:
            zw = _ZipWriter(fh, _archive_name(f))
            zw.write_record("version", b"3\n")
            if not _disable_byteorder_record:
                zw.write_record("byteorder", b"little")
            _finish(zw, _serialization_id)
        raise
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
        _finish(zw, _serialization_id)


def _finish(zw, serialization_id):
    sid = serialization_id or "%020d%020d" % (random.getrandbits(64) % 10 ** 20,
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


# ---- the legacy format ---------------------------------------------------------------------
def _write_legacy(obj, f, protocol, convert):
    keys, datas, dtypes = {}, {}, {}

    def on_storage(rec):
        flat = rec.storage
        legacy, dtype, numel = _storage_type(rec)
        _check_dtype(dtypes, rec.storage_key, dtype, flat)
        key = keys.get(rec.storage_key)
        if key is None:
            key = keys[rec.storage_key] = str(len(keys))
            # the data section counts elements of the first saver's dtype: a dtype without a
            # typed storage class (uint16, float8, ...) and an UntypedStorage count bytes
            datas[key] = np.ascontiguousarray(flat).reshape(-1).view(np.uint8).view(
                _np_dtype(dtype))
        return ("storage", _Global("torch", legacy) if legacy else _UNTYPED, key, rec.location,
                numel, None)

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
