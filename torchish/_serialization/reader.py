"""`read_checkpoint`: zip and legacy (pre-1.6) checkpoints read back through a backend, with the
weights-only unpickler by default and torch.load's error texts."""
import contextlib
import io
import mmap as _mmap
import os
import pickle
import struct
import zipfile

import numpy as np

from .allowlist import _IMPORT_MAPPING, _NAME_MAPPING, _LazyGlobal, _allowed_globals, _user_globals
from .format import (_MAGIC_NUMBER, _PROTOCOL_VERSION, _STORAGE_DTYPE, _ascii, _from_bytes,
                     _np_dtype)
from .records import LoadedStorage, RecordBackend, _StorageType
from .unpickler import _WeightsOnlyUnpickler


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


# PyTorch's zip reader (miniz) appends this to every archive error
_MINIZ = (". This is an internal miniz error. If you are seeing this error, there is a high "
          "likelihood that your checkpoint file is corrupted. This can happen if the checkpoint "
          "was not saved properly, was transferred incorrectly, or the file was modified after "
          "saving.")


def _missing(name):
    return RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found"
                        + _MINIZ)


def _read_zip(fh, path, weights_only, backend, use_mmap, encoding):
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile:
        # (miniz calls anything shorter than an end-of-central-directory record no archive)
        what = "not a ZIP archive" if fh.seek(0, 2) < 22 else "failed finding central directory"
        raise RuntimeError("PytorchStreamReader failed reading zip archive: " + what
                           + _MINIZ) from None
    names = zf.namelist()
    if names and "/" not in names[0]:   # (the first name gives PyTorch the archive's folder)
        raise RuntimeError("[enforce fail at inline_container.cc:180] . file in archive is not "
                           f"in a subdirectory: {names[0]}")
    prefix = names[0].split("/", 1)[0] + "/" if names else ""
    if prefix + "constants.pkl" in names:
        raise RuntimeError("torchish.load can't load TorchScript archives (torch.jit.save).")
    # the archive's version record is read (and required) when PyTorch opens it
    if prefix + "version" not in names and prefix + ".data/version" not in names:
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could '
                           'this error message be improved?  If so, please report an '
                           'enhancement request to PyTorch.)')
    if prefix + "data.pkl" not in names:
        raise _missing("data.pkl")
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
        if name not in names:
            raise _missing(f"data/{key}")
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
        st = loaded[key] = backend.wrap(backend.restore(LoadedStorage(key, dtype, data,
                                                                      location)))
        return st

    pkl = io.BytesIO(zf.read(prefix + "data.pkl"))
    result = _unpickle(pkl, weights_only, backend, persistent_load, encoding)
    backend.finish()
    return result


def _storage_dtype(storage_type):
    dtype = getattr(storage_type, "dtype", None)
    if not isinstance(dtype, str):
        raise pickle.UnpicklingError(f"unknown storage type {storage_type!r}")
    return dtype


def _no_persistent_load(pid):
    raise pickle.UnpicklingError("A load persistent id instruction was encountered, but no "
                                 "persistent_load function was specified.")


def _read_legacy(fh, weights_only, backend, encoding):
    """The pre-1.6 format: magic, version, sys_info pickles, the object pickle, the sorted
    storage keys, then each storage as int64 numel + raw bytes (filled in after unpickling,
    like torch's `_set_from_file`)."""
    def small_pickle():
        return _WeightsOnlyUnpickler(fh, {}, None, encoding, backend).load()
    # as torch.load, the magic number goes through the chosen unpickler, whose errors (EOFError
    # for an empty file, UnpicklingError for junk) reach the caller unchanged
    magic = _unpickle(fh, weights_only, backend, _no_persistent_load, encoding)
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
            storages[key] = backend.wrap(backend.restore(st))
        return storages[key]

    result = _unpickle(fh, weights_only, backend, persistent_load, encoding)
    keys = small_pickle()
    big = not sys_info.get("little_endian", True)
    for key in keys:
        st = backend.unwrap(storages[key])
        (numel,) = struct.unpack("<q" if not big else ">q", fh.read(8))
        np_dtype = st.data.dtype
        values = _from_bytes(fh.read(numel * np_dtype.itemsize), np_dtype, big)
        st.data[...] = values
        st.pending = False
        backend.fill(st)
    backend.finish()
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
