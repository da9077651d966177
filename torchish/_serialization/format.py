"""What a checkpoint stores: dtype names, their NumPy dtypes and legacy storage classes, the
bytes of a storage, and the legacy (pre-1.6) format's magic numbers."""
import ml_dtypes
import numpy as np

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


def _ascii(s):  # loaded with encoding='bytes', a Python 2 pickle's strings are bytes
    return s.decode("ascii") if isinstance(s, bytes) else s


# the first two pickles of a legacy (pre-1.6) checkpoint
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_PROTOCOL_VERSION = 1001
