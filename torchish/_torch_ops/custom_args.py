"""Arguments of operators defined through `torch.library`: the checks and conversions
PyTorch's dispatcher makes when a Python call reaches such a schema (`SymInt n` refuses 1.5,
`float s` takes 1 and hands the kernel 1.0, a tuple for `Tensor[]` arrives as a list), with
its messages; and the schema text as PyTorch prints it back (`float s=1.`, `ScalarType d=6`)."""
import ast
import functools
import math
import re

import numpy as np

_PYBIND = ("Cast error details: Unable to cast Python instance of type {} to C++ type '?' "
           "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")

# c10::ScalarType's numbering: a ScalarType default prints, and may be passed, as its code
_SCALAR_TYPE_CODES = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                      "float32": 6, "float64": 7, "complex32": 8, "complex64": 9,
                      "complex128": 10, "bool": 11, "bfloat16": 15, "uint16": 27,
                      "uint32": 28, "uint64": 29}

# the Python type names PyTorch's messages give schema types
_PY_NAMES = {"SymInt": "int", "ScalarType": "int", "Scalar": "number", "Layout": "int",
             "MemoryFormat": "int"}


class _Refused(Exception):
    """A value the schema type does not take; `detail` is the message's last line."""


def _class_text(value):
    if _is_tensor(value):
        return "<class 'torch.Tensor'>"
    cls = type(value)
    return (f"<class '{cls.__qualname__}'>" if cls.__module__ == "builtins" else
            f"<class '{cls.__module__}.{cls.__qualname__}'>")


def _pybind(value):
    return _Refused(_PYBIND.format(_class_text(value)))


_TENSOR = []   # (the Tensor class, imported on first use: this module loads with torch.ops)


def _is_tensor(value):
    if not _TENSOR:
        from .._tensor import Tensor
        _TENSOR.append(Tensor)
    return isinstance(value, _TENSOR[0])


def _one_element(value, cast):
    # a one-element tensor passes for a number (its value; as is inside a trace, where it
    # has none)
    if value.numel() != 1:
        raise _pybind(value)
    try:
        return cast(value.item())
    except Exception:
        return value


def _to_int(value):
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)) and -2 ** 63 <= value < 2 ** 63:
        return int(value)
    if _is_tensor(value):
        return _one_element(value, int)
    raise _pybind(value)


def _to_float(value):
    if isinstance(value, (bool, int, float, np.integer, np.floating, np.bool_)):
        return float(value)
    if _is_tensor(value):
        return _one_element(value, float)
    raise _pybind(value)


def _to_bool(value):
    if value is None:
        return False
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return bool(value)
    if _is_tensor(value):
        return _one_element(value, bool)
    raise _pybind(value)


def _to_str(value):
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode()
    raise _pybind(value)


def _to_scalar(value):
    if isinstance(value, (bool, int, float, complex)):
        return value
    raise _Refused(f"Cast error details: Cannot cast {str(value)} to number")


def _to_tensor(value):
    if value is None or _is_tensor(value):   # (None stands for an undefined tensor)
        return value
    raise _Refused(f"Cast error details: Unable to cast {str(value)} to Tensor")


def _to_dtype(value):
    from .._dtype import dtype
    if isinstance(value, dtype):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        from .. import _dtype
        name = next((n for n, c in _SCALAR_TYPE_CODES.items() if c == value), None)
        if name is not None:
            return getattr(_dtype, name) if hasattr(_dtype, name) else value
    raise _pybind(value)


def _to_device(value):
    from .._device import device
    if isinstance(value, device):
        return value
    if isinstance(value, str):
        return device(value)
    raise _pybind(value)


_CONVERT = {"Tensor": _to_tensor, "SymInt": _to_int, "int": _to_int, "float": _to_float,
            "bool": _to_bool, "str": _to_str, "Scalar": _to_scalar,
            "ScalarType": _to_dtype, "Device": _to_device}


@functools.lru_cache(maxsize=None)
def _element_of(core):
    """`int` for `int[]`/`int[2]`; None for a type that is not a list."""
    match = re.fullmatch(r"(.+?)\[\d*\]", core)
    return match.group(1) if match else None


def _convert_list(element, value):
    if not isinstance(value, (list, tuple)):
        if element not in ("SymInt", "int", "Scalar") or hasattr(value, "__iter__"):
            raise _pybind(value)
        raise _Refused(f" Python error details: TypeError: '{type(value).__name__}' object "
                       f"is not iterable")
    if element == "Tensor":
        if not all(_is_tensor(v) for v in value):
            raise _pybind(value)
        return list(value)
    if element == "Tensor?":
        return [_to_tensor(v) for v in value]
    convert = _CONVERT.get(element)
    if convert is None:
        return list(value)
    try:
        return [convert(v) for v in value]
    except _Refused:
        if element == "float":   # (PyTorch names the list's type here, the element's else)
            raise _pybind(value) from None
        raise


def convert(arg, value):
    """`value` as the kernel receives it for schema argument `arg`; raises _Refused."""
    if value is None and arg.optional:
        return None
    element = _element_of(arg.core)
    if element is not None:
        return _convert_list(element, value)
    convert_one = _CONVERT.get(arg.core)
    return value if convert_one is None else convert_one(value)


def type_name(core, optional=False):
    """The Python spelling PyTorch's messages give a schema type: `Optional[List[int]]`."""
    element = _element_of(core)
    if element is not None:
        name = f"List[{type_name(element.rstrip('?'), element.endswith('?'))}]"
    else:
        name = _PY_NAMES.get(core, core)
    return f"Optional[{name}]" if optional else name


def refusal(arg, value):
    """None, or (expected type name, detail line) when `value` cannot be `arg`."""
    try:
        convert(arg, value)
    except _Refused as err:
        return type_name(arg.core, arg.optional), str(err)
    return None


# --- schema text as PyTorch prints it -------------------------------------------------------

def _cpp_float(value):
    # c10's printing of a double: integral values as `2.` (`-0.` reads back as `0.`),
    # others with 17 significant digits
    if math.isfinite(value) and value == int(value) and -2 ** 63 <= value < 2 ** 63:
        return f"{int(value)}."
    return "%.17g" % value


def _default_text(core, text):
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text
    if core == "ScalarType" and text in _SCALAR_TYPE_CODES:
        return str(_SCALAR_TYPE_CODES[text])
    if core == "Device" and isinstance(value, str):
        return value
    if isinstance(value, float) or (core == "float" and isinstance(value, int)
                                    and not isinstance(value, bool)):
        return _cpp_float(float(value))
    return text


def printed_schema(schema):
    """The text of a parsed FunctionSchema as PyTorch prints a definition back: arguments
    joined by `, `, defaults in C++'s spelling."""
    parts, keyword_only = [], False
    for arg in schema.arguments:
        if arg.kwarg_only and not keyword_only:
            parts.append("*")
            keyword_only = True
        parts.append(f"{arg.type} {arg.name}" + (
            f"={_default_text(arg.core, arg.default)}" if arg.has_default else ""))
    head, _, rest = str(schema).partition("(")
    returns = rest[_closing(rest):].strip()
    return f"{head}({', '.join(parts)}) {returns}" if returns else f"{head}({', '.join(parts)})"


def _closing(rest):
    depth, i = 1, 0
    while depth:
        depth += {"(": 1, ")": -1}.get(rest[i], 0)
        i += 1
    return i
