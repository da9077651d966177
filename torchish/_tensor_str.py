"""Tensor printing: ``repr``/``str`` of a tensor, byte for byte as PyTorch 2.13 prints it.

This mirrors the structure and the names of PyTorch's ``torch/_tensor_str.py`` (``PRINT_OPTS``,
``_Formatter``, ``_vector_str``, ``_tensor_str_with_formatter``, ``get_summarized_data``,
``_add_suffixes``, ``_str_intern``) so that diffs against it stay readable, but it works on
NumPy arrays and knows nothing of the Tensor class: the Tensor's ``__repr__`` hands over its
values (``np.asarray`` of its data), its dtype name and its autograd facts, and gets a string.

Every number is formatted from a Python scalar (a double, a complex of doubles, an int or a
bool), exactly as PyTorch formats the results of ``.item()`` / ``.tolist()``: float16, bfloat16
and float32 values are widened to doubles first, which is exact.
"""

import contextlib
import dataclasses
import math
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "PRINT_OPTS",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "format_tensor",
    "format_spec",
]


@dataclasses.dataclass
class __PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = __PrinterOptions()


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    r"""Set options for printing (PyTorch's ``torch.set_printoptions``).

    Args:
        precision: digits after the point for floating point output (default 4).
        threshold: number of elements above which the output is summarized (default 1000).
        edgeitems: items shown at the start and the end of each summarized dimension (default 3).
        linewidth: characters per line used to wrap 1-D rows and suffixes (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; the other arguments override it.
        sci_mode: ``True``/``False`` forces scientific notation on/off; ``None`` lets the
            formatter choose. Like PyTorch, this is assigned on every call, so any call that
            omits it resets it to ``None``.
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = math.inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    r"""The current print options, as a dict that can be passed to :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    r"""Context manager that temporarily changes the print options (same arguments as
    :func:`set_printoptions`)."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


# torch dtype name -> (NumPy storage dtype, kind). Kinds: "f" real floating, "e"
# float8_e8m0fnu, "c" complex, "i" integer, "b" bool.
_DTYPES = {
    "float16": (np.dtype(np.float16), "f"),
    "bfloat16": (np.dtype(ml_dtypes.bfloat16), "f"),
    "float32": (np.dtype(np.float32), "f"),
    "float64": (np.dtype(np.float64), "f"),
    # PyTorch prints float8 tensors through ``.half()``, which is exact: same as their values.
    "float8_e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), "f"),
    "float8_e5m2": (np.dtype(ml_dtypes.float8_e5m2), "f"),
    "float8_e4m3fnuz": (np.dtype(ml_dtypes.float8_e4m3fnuz), "f"),
    "float8_e5m2fnuz": (np.dtype(ml_dtypes.float8_e5m2fnuz), "f"),
    # (kind "e": real floating, with PyTorch's own choice of the elements that set the format)
    "float8_e8m0fnu": (np.dtype(ml_dtypes.float8_e8m0fnu), "e"),
    "complex64": (np.dtype(np.complex64), "c"),
    "complex128": (np.dtype(np.complex128), "c"),
    "uint8": (np.dtype(np.uint8), "i"),
    "uint16": (np.dtype(np.uint16), "i"),
    "uint32": (np.dtype(np.uint32), "i"),
    "uint64": (np.dtype(np.uint64), "i"),
    "int8": (np.dtype(np.int8), "i"),
    "int16": (np.dtype(np.int16), "i"),
    "int32": (np.dtype(np.int32), "i"),
    "int64": (np.dtype(np.int64), "i"),
    "bool": (np.dtype(np.bool_), "b"),
}


def _to_print_array(array, dtype_name):
    """The values as NumPy, rounded to ``dtype_name`` and widened to what ``.tolist()`` yields.

    Rounding first makes e.g. a bfloat16 tensor handed over as float32 values print from its
    bfloat16 values; widening floats to float64 (complex to complex128) is exact and gives the
    Python floats PyTorch formats.
    """
    try:
        np_dtype, kind = _DTYPES[dtype_name]
    except KeyError:
        raise TypeError(f"printing is not supported for dtype torch.{dtype_name}") from None
    array = np.asarray(array)
    if array.dtype != np_dtype:
        array = array.astype(np_dtype)
    if kind in "fe":
        array = array.astype(np.float64)
    elif kind == "c":
        array = array.astype(np.complex128)
    return array, kind


class _Formatter:
    """Chooses the notation (int_mode / sci_mode / fixed) and the common width of the elements.

    ``tensor`` is a NumPy array of float64 (``floating_dtype``), or of ints / bools.
    """

    def __init__(self, tensor, floating_dtype, e8m0=False):
        self.floating_dtype = floating_dtype
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        tensor_view = tensor.reshape(-1)

        if not self.floating_dtype:
            for value in tensor_view.tolist():
                value_str = f"{value}"
                self.max_width = max(self.max_width, len(value_str))

        else:
            if e8m0:
                # PyTorch's isfinite holds for every float8_e8m0fnu value, NaN too, and its
                # `!= 0` compares with 0 converted to the type: 2**-127. So NaN counts (no
                # scientific or integer notation then) and 2**-127 does not (printed "0.")
                nonzero_finite_vals = tensor_view[tensor_view != 2.0 ** -127]
            else:
                nonzero_finite_vals = tensor_view[np.isfinite(tensor_view) & (tensor_view != 0)]

            if nonzero_finite_vals.size == 0:
                # no valid number, do nothing
                return

            # PyTorch takes min/max of the absolute values in double, as here.
            nonzero_finite_abs = np.abs(nonzero_finite_vals)
            nonzero_finite_min = float(nonzero_finite_abs.min())
            nonzero_finite_max = float(nonzero_finite_abs.max())

            self.int_mode = bool(np.all(nonzero_finite_vals == np.ceil(nonzero_finite_vals)))

            self.sci_mode = (
                nonzero_finite_max / nonzero_finite_min > 1000.0
                or nonzero_finite_max > 1.0e8
                or nonzero_finite_min < 1.0e-4
                if PRINT_OPTS.sci_mode is None
                else PRINT_OPTS.sci_mode
            )

            values = nonzero_finite_vals.tolist()
            if self.sci_mode:
                fmt = f"{{:.{PRINT_OPTS.precision}e}}"
                for value in values:
                    self.max_width = max(self.max_width, len(fmt.format(value)))
            elif self.int_mode:
                # in int_mode for floats, all numbers are integers, and a decimal point is
                # appended to show the tensor is floating: add 1 to the length for it.
                for value in values:
                    self.max_width = max(self.max_width, len(f"{value:.0f}") + 1)
            else:
                fmt = f"{{:.{PRINT_OPTS.precision}f}}"
                for value in values:
                    self.max_width = max(self.max_width, len(fmt.format(value)))

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, formatter1, formatter2):
    real_str = formatter1.format(value.real)
    imag_str = (formatter2.format(value.imag) + "j").lstrip()
    # handles negative numbers, +0.0, -0.0
    if imag_str[0] == "+" or imag_str[0] == "-":
        return real_str + imag_str
    else:
        return real_str + "+" + imag_str


def _scalar_str(self, formatter1, formatter2=None):
    value = self.item()
    if formatter2 is not None:
        return _complex_str(value, formatter1, formatter2)
    return formatter1.format(value)


def _vector_str(self, indent, summarize, formatter1, formatter2=None):
    # length includes spaces and comma between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        # width for imag_formatter + an extra j for complex
        element_length += formatter2.width() + 1

    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (element_length)))

    def _val_formatter(val, formatter1=formatter1, formatter2=formatter2):
        if formatter2 is not None:
            return _complex_str(val, formatter1, formatter2)
        return formatter1.format(val)

    edgeitems = PRINT_OPTS.edgeitems
    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and self.shape[0] > 2 * edgeitems:
        data = (
            [_val_formatter(val) for val in self[:edgeitems].tolist()]
            + [" ..."]
            + [_val_formatter(val) for val in self[-edgeitems:].tolist()]
        )
    else:
        data = [_val_formatter(val) for val in self.tolist()]

    data_lines = [data[i : i + elements_per_line] for i in range(0, len(data), elements_per_line)]
    lines = [", ".join(line) for line in data_lines]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


# formatter2 is only used for complex tensors: formatter1 / formatter2 are then the formatters
# of the real and the imaginary parts.
def _tensor_str_with_formatter(self, indent, summarize, formatter1, formatter2=None):
    dim = self.ndim

    if dim == 0:
        return _scalar_str(self, formatter1, formatter2)

    if dim == 1:
        return _vector_str(self, indent, summarize, formatter1, formatter2)

    edgeitems = PRINT_OPTS.edgeitems
    if summarize and self.shape[0] > 2 * edgeitems:
        slices = (
            [
                _tensor_str_with_formatter(self[i], indent + 1, summarize, formatter1, formatter2)
                for i in range(edgeitems)
            ]
            + ["..."]
            + [
                _tensor_str_with_formatter(self[i], indent + 1, summarize, formatter1, formatter2)
                for i in range(len(self) - edgeitems, len(self))
            ]
        )
    else:
        slices = [
            _tensor_str_with_formatter(self[i], indent + 1, summarize, formatter1, formatter2)
            for i in range(self.shape[0])
        ]

    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _tensor_str(self, indent, kind):
    if self.size == 0:
        return "[]"

    summarize = self.size > PRINT_OPTS.threshold

    if kind == "c":
        real_formatter = _Formatter(
            get_summarized_data(self.real) if summarize else self.real, True
        )
        imag_formatter = _Formatter(
            get_summarized_data(self.imag) if summarize else self.imag, True
        )
        return _tensor_str_with_formatter(self, indent, summarize, real_formatter, imag_formatter)
    else:
        formatter = _Formatter(get_summarized_data(self) if summarize else self, kind in "fe",
                               e8m0=kind == "e")
        return _tensor_str_with_formatter(self, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline):
    tensor_strs = [tensor_str]
    # PyTorch's measure (one more than the last line's length + 1); kept as is.
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def get_summarized_data(self):
    """The elements the formatter sees when summarizing: edgeitems from each end of each dim."""
    dim = self.ndim
    edgeitems = PRINT_OPTS.edgeitems
    if dim == 0:
        return self
    if dim == 1:
        if self.shape[0] > 2 * edgeitems:
            # With edgeitems == 0, ``self[-0:]`` is the whole vector, as in PyTorch.
            return np.concatenate((self[:edgeitems], self[-edgeitems:]))
        else:
            return self
    if not edgeitems:
        return np.empty([0] * dim, dtype=self.dtype)
    elif self.shape[0] > 2 * edgeitems:
        start = [self[i] for i in range(edgeitems)]
        end = [self[i] for i in range(len(self) - edgeitems, len(self))]
        return np.stack([get_summarized_data(x) for x in (start + end)])
    else:
        return np.stack([get_summarized_data(x) for x in self])


def _default_complex_dtype(default_float_dtype):
    return "complex128" if default_float_dtype == "float64" else "complex64"


def format_tensor(
    array: np.ndarray,
    dtype_name: str,
    *,
    device: str | None = None,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    prefix: str = "tensor(",
    default_float_dtype: str = "float32",
    tangent: str | None = None,
    meta_shape: tuple | None = None,
) -> str:
    """The ``repr`` (== ``str``) PyTorch gives a dense strided tensor with these values.

    Args:
        array: the values (anything ``np.asarray`` accepts), in the tensor's shape.
        dtype_name: torch dtype name without ``torch.`` (``"float32"``, ``"bfloat16"``, ...);
            the values are rounded to it first.
        device: ``None`` or ``"cpu"`` for CPU, else the device string (``"cuda:0"``), printed
            as a ``device='...'`` suffix.
        requires_grad, grad_fn_name: a ``grad_fn=<Name>`` suffix if ``grad_fn_name`` is given,
            else ``requires_grad=True`` if ``requires_grad``.
        prefix: ``"tensor("``; subclasses print ``f"{type(t).__name__}("``.
        default_float_dtype: ``torch.get_default_dtype()``'s name; that dtype and its complex
            counterpart print no ``dtype=`` suffix (nor do int64 and bool, unless empty).
        tangent: a dual tensor's tangent, printed (``repr``) as a ``tangent=`` suffix.
        meta_shape: a meta tensor's shape (``array`` is then ignored): it prints ``...``.
    """
    # This is PyTorch's _str_intern, reduced to dense tensors.
    dtype_name = getattr(dtype_name, "name", dtype_name)  # also accept a torchish.dtype
    indent = len(prefix)
    suffixes = []

    # Note [Print tensor device]: only a device other than the default (CPU) is printed.
    if device is not None and str(device) != "cpu":
        suffixes.append("device='" + str(device) + "'")

    if meta_shape is not None:   # no values; any dtype but the default float one is named
        suffixes.append("size=" + str(tuple(int(s) for s in meta_shape)))
        if dtype_name != default_float_dtype:
            suffixes.append("dtype=torch." + dtype_name)
        return _finish(prefix + "...", suffixes, indent, requires_grad, grad_fn_name, tangent)
    self, kind = _to_print_array(array, dtype_name)

    has_default_dtype = dtype_name in (
        default_float_dtype,
        _default_complex_dtype(default_float_dtype),
        "int64",
        "bool",
    )
    shape_str = str(tuple(int(s) for s in self.shape))
    if self.size == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if self.ndim != 1:
            suffixes.append("size=" + shape_str)
        # An empty tensor has no elements to tell an int64 one apart: only the default float
        # dtype goes without a suffix.
        if dtype_name != default_float_dtype:
            suffixes.append("dtype=torch." + dtype_name)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + shape_str)
        if not has_default_dtype:
            suffixes.append("dtype=torch." + dtype_name)
        tensor_str = _tensor_str(self, indent, kind)
    return _finish(prefix + tensor_str, suffixes, indent, requires_grad, grad_fn_name, tangent)


def _finish(text, suffixes, indent, requires_grad, grad_fn_name, tangent):
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _add_suffixes(text, suffixes, indent, force_newline=False)


def format_spec(array: np.ndarray, dtype_name: str, spec: str, **kwargs) -> str:
    """``Tensor.__format__``: a 0-dim tensor formats its ``item()`` with ``spec``; any other
    tensor accepts only an empty spec and gives its ``repr`` (``kwargs`` go to
    :func:`format_tensor`)."""
    dtype_name = getattr(dtype_name, "name", dtype_name)
    values, _ = _to_print_array(array, dtype_name)
    if values.ndim == 0:
        return format(values.item(), spec)
    if spec:
        # object.__format__'s error, as PyTorch falls back to it
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return format_tensor(array, dtype_name, **kwargs)
