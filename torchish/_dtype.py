"""torchish dtypes, PyTorch's type-promotion rules and the default dtype.

Promotion follows PyTorch's `ResultTypeState`: operands are split into three tiers (tensors with
dims, 0-dim tensors, Python scalars); a lower tier only matters when its *category*
(bool < integer < floating < complex) is higher than every tier above it.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = ["dtype", "promote_types", "result_type", "can_cast", "get_default_dtype",
           "set_default_dtype", "from_np"]


def missing_attribute(type_name):
    """A `__getattr__` (Python calls it only for a missing attribute) raising PyTorch's text,
    which names its C++ class as `torch.dtype`, not `dtype`."""
    def __getattr__(self, name):
        raise AttributeError(f"'{type_name}' object has no attribute '{name}'")
    return __getattr__


def read_only(type_name):
    """A `__setattr__` refusing every assignment with PyTorch's texts."""
    def __setattr__(self, name, value):
        if hasattr(self, name):
            raise AttributeError(f"attribute '{name}' of '{type_name}' objects is not writable")
        raise AttributeError(f"'{type_name}' object has no attribute '{name}'")
    return __setattr__


class dtype:
    """A PyTorch dtype; `np` is the NumPy dtype of the JAX arrays that carry it."""
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_legacy")

    def __init__(self, name, np_dtype, category, legacy):
        set_ = object.__setattr__   # (instances are read-only afterwards)
        set_(self, "name", name)
        set_(self, "np", np.dtype(np_dtype))
        set_(self, "itemsize", self.np.itemsize)
        set_(self, "is_floating_point", category == 2)
        set_(self, "is_complex", category == 3)
        set_(self, "is_signed", not name.startswith("uint") and name not in ("bool",
                                                                                "float8_e8m0fnu"))
        set_(self, "_category", category)
        set_(self, "_legacy", legacy)  # "Float" in `torch.FloatTensor`, also in error messages

    __getattr__ = missing_attribute("torch.dtype")
    __setattr__ = read_only("torch.dtype")

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        if not (self.is_floating_point or self.is_complex) or self in FLOAT8:
            # (PyTorch's toComplexType refuses; float8 types have no complex kin)
            raise RuntimeError(f"Unknown Complex ScalarType for {self._legacy}")
        return {"float32": complex64, "float64": complex128, "float16": complex64,
                "bfloat16": complex64}.get(self.name, self)

    @property
    def is_inference(self):
        return False


bool = dtype("bool", np.bool_, 0, "Bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte")
int8 = dtype("int8", np.int8, 1, "Char")
int16 = dtype("int16", np.int16, 1, "Short")
int32 = dtype("int32", np.int32, 1, "Int")
int64 = dtype("int64", np.int64, 1, "Long")
float16 = dtype("float16", np.float16, 2, "Half")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, "BFloat16")
float32 = dtype("float32", np.float32, 2, "Float")
float64 = dtype("float64", np.float64, 2, "Double")
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloat")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDouble")
# PyTorch's "shell" unsigned types: few CPU kernels, no promotion with other integers (the
# refused kernels are listed in _ops/unsigned_support.py)
uint16 = dtype("uint16", np.uint16, 1, "UInt16")
uint32 = dtype("uint32", np.uint32, 1, "UInt32")
uint64 = dtype("uint64", np.uint64, 1, "UInt64")
SHELL = frozenset((uint16, uint32, uint64))
# float8 types: storage, copies, casts and a handful of kernels; PyTorch promotes them with no
# other type (the refused kernels: _ops/dtype_refusals.py, the casts: _ops/float8.py)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 2, "Float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, 2, "Float8_e5m2")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 2, "Float8_e4m3fnuz")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 2, "Float8_e5m2fnuz")
float8_e8m0fnu = dtype("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, 2, "Float8_e8m0fnu")
FLOAT8 = frozenset((float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
                    float8_e8m0fnu))
# dtypes whose refusals code outside the dispatcher asks for (_ops/dtype_refusals.refuse)
FEW_KERNELS = SHELL | FLOAT8

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
       complex64, complex128, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2,
       float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}
ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
           "short": int16, "cfloat": complex64, "cdouble": complex128, "uint8": uint8,
           "uint16": uint16, "uint32": uint32, "uint64": uint64,
           **{d.name: d for d in FLOAT8}}


def _by_name(name):
    return _BY_NAME[name]


def from_np(np_dtype):
    """The torchish dtype of a NumPy/JAX dtype (unsupported widths map to their torch kin)."""
    d = np.dtype(np_dtype)
    try:
        return _BY_NP[d]
    except KeyError:
        pass
    raise TypeError(f"can't convert np.ndarray of type numpy.{d.type.__name__}. The only "
                    "supported types are: float64, float32, float16, complex64, complex128, "
                    "int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool.")


# PyTorch's promotion lattice among same-category types, plus the cross-category rules.
_INT_ORDER = [uint8, int8, int16, int32, int64]


def _promote_pair(a, b):
    if a is b:
        return a
    ca, cb = a._category, b._category
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if hi.is_complex and lo.is_floating_point and lo is float64:
            return complex128
        if hi.is_floating_point or hi.is_complex or lo is bool:
            return hi
        return hi
    if ca == 1:
        if uint8 in (a, b):  # uint8 with a signed int widens to the next signed type
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return max(a, b, key=_INT_ORDER.index)
    if ca == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return max(a, b, key=lambda d: d.itemsize)
    if ca == 3:
        return complex128
    return a


class _PromotionTable(dict):
    """The promotion of every pair; a float8 type with any other type, or a shell unsigned type
    with another integer, bool or complex type, is missing, and looking it up raises PyTorch's
    error (the float8 one first)."""
    def __missing__(self, pair):
        a, b = pair
        if not (isinstance(a, dtype) and isinstance(b, dtype)):
            raise KeyError(pair)
        if a in FLOAT8 or b in FLOAT8:
            raise RuntimeError("Promotion for Float8 Types is not supported, attempted to "
                               f"promote {a._legacy} and {b._legacy}")
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a._legacy} and {b._legacy}")


_PROMOTE = _PromotionTable(
    ((a, b), _promote_pair(a, b)) for a in ALL for b in ALL
    if a is b or not (FLOAT8 & {a, b}) and (
        not (SHELL & {a, b}) or a.is_floating_point or b.is_floating_point))


def promote_types(type1, type2):
    return _PROMOTE[(type1, type2)]


_default_float = [float32]


def get_default_dtype():
    return _default_float[0]


def set_default_dtype(d):
    if d in FLOAT8:   # (PyTorch looks for the type's legacy storage class first)
        raise TypeError(f"couldn't find storage object {d._legacy}Storage")
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def default_complex():
    return complex128 if _default_float[0] is float64 else complex64


def from_python_type(d):
    """A `dtype=` argument as PyTorch's parser takes it: the Python types `bool`, `int`,
    `float`, `complex` stand for bool, int64, float64, complex128; anything else unchanged."""
    if isinstance(d, type):
        return _PYTHON_TYPES.get(d, d)
    return d


def python_scalar(value):
    """A NumPy scalar as PyTorch's argument parser reads it where a Number is expected: an
    integer as int, anything else through `float()` (np.bool_ -> 1.0; a complex loses its
    imaginary part, with NumPy's ComplexWarning). A NumPy uint64 above int64's range is refused:
    PyTorch's parser reads an unsigned 64-bit Scalar only from a Python int."""
    if isinstance(value, np.integer):
        value = builtins.int(value)
        if value > 2 ** 63 - 1:
            raise TypeError("an integer is required")
        return value
    return builtins.float(value)


def scalar_dtype(value):
    """The dtype a Python scalar takes as a wrapped number (its category's default)."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default_float[0]
    if isinstance(value, builtins.complex):
        return default_complex()
    if isinstance(value, np.generic):
        return from_np(value.dtype)
    raise TypeError(f"unsupported scalar {value!r}")


def _combine_categories(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        # a float operand of the higher tier keeps its precision and only moves to the
        # complex category: float32 tensor + complex128 0-dim -> complex64, float64 + 1j ->
        # complex128 (float16 would be complex32, which torchish lacks: complex64); an
        # integer/bool higher tier takes the lower tier's complex type
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return _PROMOTE[(higher, lower)]
    return higher


def _tier_fold(acc, d):
    return d if acc is None else _PROMOTE[(acc, d)]


def result_dtype(dim_dtypes, zero_dim_dtypes, scalar_dtypes):
    """PyTorch's result type from the three tiers of operands (lists of dtypes)."""
    dim = zero = wrapped = None
    for d in dim_dtypes:
        dim = _tier_fold(dim, d)
    for d in zero_dim_dtypes:
        zero = _tier_fold(zero, d)
    for d in scalar_dtypes:
        wrapped = _tier_fold(wrapped, d)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def result_type(tensor1, tensor2):
    from ._tensor import Tensor
    tiers = ([], [], [])
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            tiers[0 if x.ndim else 1].append(x.dtype)
        else:
            tiers[2].append(scalar_dtype(x))
    return result_dtype(*tiers)


def can_cast(from_, to):
    """PyTorch's `can_cast`: no casting to a lower category."""
    if from_._category > to._category:
        return False
    return not (from_ is not bool and to is bool)


def type_name(d):
    """`torch.FloatTensor` style name used in autograd error messages."""
    return f"torch.{d._legacy}Tensor"


_PYTHON_TYPES = {builtins.bool: bool, builtins.int: int64, builtins.float: float64,
                 builtins.complex: complex128}
