"""Turn JAX's errors (raised while tracing an op) into the errors PyTorch raises.

The dispatcher hands every TypeError/ValueError from a compiled forward to `translate`. Only
errors raised inside JAX (or NumPy/ml_dtypes under it) are rewritten, as a RuntimeError,
PyTorch's type for a kernel's failure: a broadcasting failure gets PyTorch's exact message, any
other keeps JAX's first line after the op's name. An error raised by torchish's own code (an op
body or a helper checking its arguments, with PyTorch's type and text) is the intended one and
goes through unchanged, as does JAX's complaint about a concrete value needed under tracing,
which is a bug in an op body and must stay visible.
"""
import math
import os
import warnings

import jax
import jaxlib
import ml_dtypes
import numpy

from .. import _dtype as dt

_FOREIGN = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (jax, jaxlib, numpy, ml_dtypes))


def broadcast_error(shapes):
    """PyTorch's message for the first pair of shapes that do not broadcast, or None."""
    result = []
    for shape in shapes:
        shape = tuple(shape)
        n = max(len(result), len(shape))
        a = [1] * (n - len(result)) + list(result)
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return (f"The size of tensor a ({a[i]}) must match the size of tensor b "
                        f"({b[i]}) at non-singleton dimension {i}")
        result = [max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b)]
    return None


def _raised_by_jax(exc):
    """Whether the innermost frame of `exc`'s traceback is JAX's (or NumPy's) code."""
    cause = exc.__cause__
    # JAX_TRACEBACK_FILTERING=remove_frames keeps the full traceback on an attached cause
    full = cause if type(cause).__name__ == "UnfilteredStackTrace" else exc
    tb = full.__traceback__ or exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_FOREIGN)


def translate(plan, leaves, exc):
    """The exception to raise for `exc`, raised while running `plan` on `leaves`."""
    if not _raised_by_jax(exc) or isinstance(exc, jax.errors.ConcretizationTypeError):
        return exc
    text = str(exc)
    if "broadcast" in text or "incompatible shapes" in text:
        shapes = [getattr(x, "shape", ()) for x in leaves]
        msg = broadcast_error(shapes)
        if msg:
            return RuntimeError(msg)
    return RuntimeError(f"{plan.op.name}: {text.splitlines()[0] if text else type(exc).__name__}")


def on_one_device(leaves):
    """`leaves` with 0-dim CPU arrays moved to the one other device the rest are on (PyTorch
    takes a 0-dim CPU tensor with CUDA tensors as a scalar); RuntimeError, as PyTorch, when
    the operands are on two devices otherwise. Called only after a jitted call refused them."""
    from .._device import from_jax_device
    arrays = [x for x in jax.tree_util.tree_leaves(leaves) if isinstance(x, jax.Array)]
    found = []
    for x in arrays:
        for d in x.devices():
            if d not in found:
                found.append(d)
    names = [from_jax_device(d) for d in found]
    others = [d for d, n in zip(found, names) if n.type != "cpu"]
    cpu_scalars_only = all(x.ndim == 0 for x in arrays
                           if from_jax_device(next(iter(x.devices()))).type == "cpu")
    if len(others) != 1 or len(found) > 2 or not cpu_scalars_only:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {names[0]} and {names[1]}!")
    return jax.tree_util.tree_map(
        lambda x: jax.device_put(x, others[0]) if isinstance(x, jax.Array) else x, leaves)


# ---- a Python number converted to a tensor's dtype ----------------------------------------

# c10's names for the types a Scalar is converted to
_SCALAR_CTYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int",
                  "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t",
                  "uint64": "uint64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "float32": "float", "float64": "double",
                  "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _scalar_limits(dtype):
    """(c10 type name, whether floating, lowest, largest) for a dtype a Scalar converts to, or
    None (bool takes any number)."""
    try:
        return _LIMITS[dtype]
    except KeyError:
        limits = _LIMITS[dtype] = _compute_limits(dtype)
        return limits


_LIMITS = {None: None}


def _compute_limits(dtype):
    ctype = _SCALAR_CTYPES.get(dtype.name)
    if ctype is None:
        return None
    if dtype.is_floating_point or dtype.is_complex:
        limit = float(ml_dtypes.finfo(dtype.np).max)
        return ctype, True, -limit, limit
    info = numpy.iinfo(dtype.np)
    return ctype, False, int(info.min), int(info.max)


def scalar_overflow(value, dtype):
    """PyTorch's error for a Python (or NumPy) number that does not fit `dtype` where a kernel
    converts a Scalar argument to the tensor's type (`fill_`, `masked_fill`, `clamp`'s bounds,
    `where`'s scalar), or None. Integer types take an integer from -max (unsigned: c10 lets a
    negative one wrap) to max and refuse any out-of-range or non-finite float; floating types
    refuse a finite value beyond their largest; bool takes anything. Tensors (0-d values) are
    not checked (PyTorch reads them without the check, or with a host sync we do not pay)."""
    if dtype in dt.FLOAT8:   # (range and infinities differ per float8 type)
        from . import float8
        return float8.scalar_overflow(value, dtype.np)
    kind = type(value)
    if kind is not float and kind is not int and (
            kind is bool or isinstance(value, numpy.bool_) or
            not isinstance(value, (complex, numpy.number))):
        return None
    limits = _scalar_limits(dtype)
    if limits is None:
        return None
    ctype, floating, low, high = limits
    if (kind is int or (kind is float and floating)) and low <= value <= high:   # (common)
        return None
    if isinstance(value, (complex, numpy.complexfloating)):
        if dtype.is_complex:
            fits = not any(math.isfinite(v) and abs(v) > high for v in (value.real, value.imag))
        else:
            fits = value.imag == 0 and _fits(value.real, floating, low, high)
    else:
        fits = _fits(value, floating, low, high)
    return None if fits else RuntimeError(f"value cannot be converted to type {ctype} "
                                          "without overflow")


def _fits(value, floating, low, high):
    if floating:
        return low <= value <= high or not math.isfinite(value)
    if isinstance(value, (int, numpy.integer)):
        return (-high if low == 0 else low) <= value <= high
    return low <= value <= high   # (NaN fails)


# ---- argument type errors (PyTorch's python argument parser) ------------------------------

def type_name(cls):
    """A type as PyTorch's argument parser names it (its C name): `list`, `NoneType`,
    `numpy.ndarray`, a class defined in Python by its name, torchish's as PyTorch's."""
    if cls.__module__ == "builtins":
        return cls.__name__
    if cls.__module__.startswith("torchish"):
        return _TORCH_TYPES.get(cls.__name__, cls.__name__)
    if cls.__flags__ & _HEAP_TYPE:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAP_TYPE = 1 << 9
# torchish's classes that are C types in PyTorch
_TORCH_TYPES = {n: "torch." + n for n in ("dtype", "device", "layout", "memory_format", "Size",
                                          "finfo", "iinfo")}
_TORCH_TYPES["_LegacyTensorType"] = "torch.tensortype"   # (the class of torch.FloatTensor)
_TORCH_TYPES["Generator"] = "torch._C.Generator"


def int_list_error(name, param, got, index, where):
    """PyTorch's parser's TypeError for an `int[]` argument `param` of `name` of type `got`
    (index None) or whose element `index` is of type `got` (`where`: " (position N)" or ""):
    an element after the first is named without the position."""
    if index is None:
        return TypeError(f"{name}(): argument '{param}'{where} must be tuple of ints, not "
                         f"{type_name(got)}")
    if index == 0:
        return TypeError(f"{name}(): argument '{param}'{where} must be tuple of ints, but found "
                         f"element of type {type_name(got)} at pos 0")
    return TypeError(f"{name}(): argument '{param}' failed to unpack the object at pos "
                     f"{index + 1} with error \"type must be tuple of ints,but got "
                     f"{type_name(got)}\"")


def tensor_element_error(index, position, got):
    """PyTorch's parser's TypeError for element `index` of type `got` of a TensorList, the
    argument at `position` (counted from 0; None: unknown, left out)."""
    where = "" if position is None else f" {position}"
    return TypeError(f"expected Tensor as element {index} in argument{where}, but got "
                     f"{type_name(got)}")


class ArgumentTypeError(TypeError):
    """An operand of the wrong type, found while planning a public op (so the Tensor fast
    path never pays for the check); internal: the op's generated binding the user called turns
    it into PyTorch's plain TypeError (`finish`) with what only the binding knows: the name it
    was called by (an alias, `add_`) and whether it is a method, whose positions PyTorch
    counts without `self`."""

    def __init__(self, op, param, expected, got, form="must", index=None):
        super().__init__(op.name, param)
        self.op, self.param, self.expected, self.got, self.form = op, param, expected, got, form
        self.index = index   # the wrong-typed element of a list argument

    def finish(self, name, self_param=None, values=None, caller=None):
        """The TypeError to raise; `values`: the binding's arguments by parameter name (the
        operand itself tells a tuple from a list); `caller`: the frame that called the
        binding (which arguments it passed by keyword)."""
        if values is not None:   # (where PyTorch has overloads, its parser's word on them)
            from .overloads import parser_error
            error = parser_error(name, self_param is not None,
                                 *self._call(self_param, values, caller))
            if error is not None:
                return error
        got = self.got
        if self.form == "mixed":  # got: the operands' type names; a method's omits self
            return TypeError(self._mixed(name, self_param, values, caller))
        if values and self.param in values and self.form == "must" and self.index is None:
            got = type(values[self.param])
        got = type_name(got)
        if self.form == "combination":   # the argument fits no overload
            if caller is not None and self.param not in _keywords_of_call(caller):
                got = got if self_param else f"Tensor, {got}"   # passed by position
            else:
                got = f"{self.param}={got}, " if self_param else f"Tensor, {self.param}={got}"
            return TypeError(f"{name}() received an invalid combination of arguments - got "
                             f"({got})")
        names = [n for n in self.op.sig.parameters if n != self_param]
        if self.param == self.op.varargs and values:
            return self._varargs(name, names, values[self.param])
        # PyTorch gives the position of an argument passed by position only
        where = "" if self.param in _keywords_of_call(caller) else \
            f" (position {names.index(self.param) + 1})"
        # (by keyword: the sequence's type, where its first element is wrong; a later one's
        # "failed to unpack" message is the same either way)
        if self.index is None or not (where or self.index):
            if self.index is not None and values and self.param in values:
                got = type_name(type(values[self.param]))
            return TypeError(f"{name}(): argument '{self.param}'{where} must be "
                             f"{self.expected}, not {got}")
        return int_list_error(name, self.param, self.got, self.index, where)

    def _varargs(self, name, names, given):
        """PyTorch's parser on sizes given as separate arguments (`x.permute(True, 0)`) and
        as one sequence: the parameter takes one argument, an `int[]`."""
        before = names.index(self.param)
        if len(given) > 1 and self.index:   # (the first an int: all are the list's elements)
            return int_list_error(name, _VARARGS_NAMES.get(self.param, self.param), self.got,
                                  self.index, "")
        if len(given) > 1:
            return TypeError(f"{name}() takes {before + 1} positional argument"
                             f"{'s' if before else ''} but {before + len(given)} were given")
        shown = _VARARGS_NAMES.get(self.param, self.param)
        if isinstance(given[0], (list, tuple)):
            return int_list_error(name, shown, self.got, self.index, f" (position {before + 1})")
        return int_list_error(name, shown, type(given[0]), None, f" (position {before + 1})")

    def _call(self, self_param, values, caller):
        return call_arguments(self.op, self_param, values, caller)

    def _mixed(self, name, self_param, values, caller):
        """PyTorch's parser on arguments no overload takes together: what it got (keyword
        arguments last, in reverse order, as its dict of them iterates); ops PyTorch lists
        overloads of are answered by `finish` from `torch_signatures` first."""
        params = [n for n in self.op.sig.parameters if n != self_param] + ["out"]
        keywords = [k for k in _keywords_of_call(caller) if k in params][::-1]
        if values is None:
            positional = list(self.got[1:] if self_param else self.got)
        else:
            passed = [n for n in params if n not in keywords and n != "out"]
            defaults = self.op.sig.parameters   # (trailing defaults were not passed)
            while passed and values.get(passed[-1]) is defaults[passed[-1]].default:
                passed.pop()
            positional = [_parser_type(v) for n in passed for v in (
                values[n] if n == self.op.varargs else (values.get(n),))]
        named = [f"{k}={_parser_type(values.get(k))}" for k in keywords] if values else []
        got = ", ".join(positional + named) if positional else "".join(
            k + ", " for k in named)
        return f"{name}() received an invalid combination of arguments - got ({got})"

    def __str__(self):
        return str(self.finish(self.op.name))


class NumberArgumentError(ArgumentTypeError):
    """A number operand PyTorch's parser refuses with a plain message (a NumPy uint64 beyond
    int64: "an integer is required"). As an ArgumentTypeError its binding raises it as that
    TypeError, and a binary dunder returns NotImplemented instead (PyTorch's dunders turn
    parser errors into NotImplemented, so Python tries the other operand: NumPy's)."""

    def __init__(self, message):
        TypeError.__init__(self, message)
        self.op, self.message = None, message   # (`op`: set by the dispatcher)

    def finish(self, name, self_param=None, values=None, caller=None):
        return TypeError(self.message)

    def __str__(self):
        return self.message


def call_arguments(op, self_param, values, caller):
    """The call of `op`'s binding as (positional arguments, keyword arguments in call order),
    as far as the binding's values tell them (a trailing argument equal to its default is
    left out); `caller`: the calling frame, whose bytecode names the keywords."""
    params = [n for n in op.sig.parameters if n != self_param]
    keywords = [k for k in _keywords_of_call(caller) if k in values]
    passed = [n for n in params if n not in keywords]
    defaults = op.sig.parameters
    while passed and (passed[-1] not in values or   # (a required one left out)
                      values[passed[-1]] is defaults[passed[-1]].default):
        passed.pop()
    args = [v for n in passed for v in (values[n] if n == op.varargs else (values.get(n),))]
    return args, {k: values[k] for k in keywords}


def unexpected_keywords(op, name, self_param, values, extra, caller):
    """PyTorch's TypeError for the keyword arguments `extra` that no parameter of `op`'s
    binding `name` takes: a method without parameters takes no keywords at all; where PyTorch
    has overloads, its parser's word on the call; else that of its one overload's check,
    which finds a missing argument before an unknown keyword."""
    from .arg_parser import REQUIRED
    from .overloads import parser_error
    from .declare import _VARARGS_KEYWORD
    caller = _outside(caller)
    # (a parameter with a default is never missing, a marker one (`axis=REQUIRED`) included)
    missing = [n for n, p in op.sig.parameters.items()
               if values.get(n) is REQUIRED and n != op.varargs and p.default is p.empty]
    sizes = _VARARGS_KEYWORD.get(op.name)
    if values.get("_varargs") == () and values.get(sizes) is REQUIRED:
        missing.append(sizes)   # (`x.permute()`: no sizes, as separate ints or by keyword)
        values = dict(values, **{op.varargs: ()})
    binding_values = values
    values = {k: v for k, v in {**values, **extra}.items() if v is not REQUIRED}
    args, kwargs = call_arguments(op, self_param, values, caller)
    method = self_param is not None
    if method and not values.get("_more") and \
            positional_count_of_call(caller) == len(args) + 1:
        method, args = False, [values[self_param]] + args   # (`torch.abs_(x, foo=1)`)
    if method and values.get("_more") and positional_count_of_call(caller) == \
            len(args) + 1 + len(values["_more"]):   # (`torch.abs_(x, 1, foo=1)`: the
        # function form counts the positional arguments first)
        return too_many_positional(op, name, self_param, binding_values, caller)
    if method and len(op.sig.parameters) == 1:
        return TypeError(f"TensorBase.{name}() takes no keyword arguments")
    error = parser_error(name, method, args, kwargs) or \
        hidden_overloads_error(name, method, args, kwargs)
    if error is not None:
        return error
    missing = [n for n in missing if n != self_param or not method]
    error = earlier_type_error(op, name, self_param if method else None, binding_values,
                               caller, missing[0] if missing else None)
    if error is not None:
        return error
    if missing and missing[0] == sizes:
        return TypeError(f'{name}() missing 1 required positional arguments: "{sizes}"')
    if missing:
        return missing_error(op, name, self_param if method else None, missing[0])
    return TypeError(f"{name}() got an unexpected keyword argument '{next(iter(extra))}'")


def parser_refusal(op, name, self_param, values, caller):
    """PyTorch's TypeError for a call of a `declare.parsed` function that passed too many
    positional arguments (`values["_more"]`), unknown keywords (`values["_kw"]`) or left a
    required one out."""
    from .arg_parser import REQUIRED
    if values["_more"]:
        return too_many_positional(op, name, self_param, values, caller)
    if values["_kw"]:
        return unexpected_keywords(op, name, self_param, values, values["_kw"], caller)
    from .overloads import parser_error
    caller = _outside(caller)
    given = {k: v for k, v in values.items() if v is not REQUIRED}
    args, kwargs = call_arguments(op, self_param, given, caller)
    method = self_param is not None
    error = parser_error(name, method, args, kwargs) or \
        hidden_overloads_error(name, method, args, kwargs)
    if error is not None:
        return error
    first = next(n for n in op.sig.parameters if values.get(n) is REQUIRED)
    return earlier_type_error(op, name, self_param, values, caller, first) or \
        missing_error(op, name, self_param, first)


def earlier_type_error(op, name, self_param, values, caller, missing=None):
    """The TypeError PyTorch's parser raises for this call of `op`'s binding `name` before it
    reports the required parameter `missing` left out (or, `missing` None, an unknown
    keyword): it reads the parameters in order, checking each one's type, and only then the
    keywords left over. None where no argument before `missing` has the wrong type.
    (Asked on those error paths only.)"""
    from .arg_parser import REQUIRED
    order = list(op.sig.parameters)
    before = order[:order.index(missing)] if missing in order else order
    given = {k: v for k, v in values.items() if k in op.sig.parameters and v is not REQUIRED}
    if not any(k in given for k in before):
        return None
    fn = getattr(op, "fn", None)
    if fn is not None:   # (a Tensor parameter first: the probe would fail on it otherwise)
        error = _not_a_tensor(op, name, self_param, given, caller, before)
        if error is not None:
            return error
    try:
        if fn is not None:   # (a Python-level function: its own checks, run on the call)
            if not _probe_safe(name):
                return None
            with warnings.catch_warnings():   # (its warnings are not the call's)
                warnings.simplefilter("ignore")
                fn(**{k: values.get(k, REQUIRED) for k in order})
        elif getattr(op, "argcheck", None) is not None and op.varargs is None:
            from .argcheck import _check_arguments
            from .dispatch import _collect_for
            # (a tensor left out stands as one: its own check is not the one looked for)
            from .._tensor import Tensor
            targs = tuple(given[n] if n in given else
                          Tensor.__new__(Tensor) if values.get(n) is REQUIRED else None
                          for n in op.tensors)
            _check_arguments(op, tuple(values.get(n, REQUIRED) for n in op.statics),
                             _collect_for(op, targs)[0])
    except ArgumentTypeError as exc:
        if exc.op is op and exc.param in before:
            return exc.finish(name, self_param, given, caller)
    except TypeError as exc:
        text, head = str(exc), f"{name}(): argument '"
        if text.startswith(head) and text[len(head):].partition("'")[0] in before:
            return exc
    except Exception:   # (whatever else the probe finds is no parser error)
        pass
    return None


def not_a_tensor(op, name, self_param, values, caller):
    """For a `declare.parsed` function whose body failed (AttributeError, TypeError): PyTorch's
    TypeError where an argument PyTorch types `Tensor` is none (`torch.flatten("a")`), where
    it has overloads the "invalid combination" none takes, or None (the body's own error
    stands)."""
    from .arg_parser import REQUIRED
    from .overloads import parser_error, table
    given = {k: v for k, v in values.items() if k in op.sig.parameters and v is not REQUIRED}
    if table(name, self_param is not None) is not None:   # (its overloads' word, if none fits)
        return parser_error(name, self_param is not None,
                            *call_arguments(op, self_param, given, _outside(caller)))
    return _not_a_tensor(op, name, self_param, given, caller, list(op.sig.parameters))


def _not_a_tensor(op, name, self_param, given, caller, names):
    from .._tensor import Tensor
    bad = next((k for k in names if k in _TENSOR_PARAMS and k in given and
                not isinstance(given[k], Tensor)), None)
    if bad is None:
        return None
    named = [k for k in op.sig.parameters if k != self_param]
    where = "" if bad in _keywords_of_call(_outside(caller)) else \
        f" (position {named.index(bad) + 1})"
    return TypeError(f"{name}(): argument '{_shown(bad, self_param)}'{where} must be "
                     f"Tensor, not {_parser_type(given[bad])}")


# the parameters PyTorch types `Tensor` of the Python-level functions here that its parser
# reads (`declare.parsed`): a value of another type there is its TypeError
_TENSOR_PARAMS = frozenset({"input", "x1", "x2", "other", "LU_data", "LU_pivots", "mask", "A",
                            "the_template", "input2", "count", "prob", "self"})


def _probe_safe(name):
    """Whether `earlier_type_error` may run the Python-level function `name` on the call's
    arguments: not where it writes a tensor in place or draws random numbers."""
    return not name.endswith("_") and not any(
        w in name for w in ("rand", "binomial", "multinomial", "poisson", "bernoulli"))


def inplace_self_error(op, name, self_param, values, caller):
    """PyTorch's TypeError for an in-place method's `self` that is no Tensor: called as the
    function PyTorch also binds (`torch.abs_("a")`), whose first argument is `input`."""
    from .arg_parser import REQUIRED
    from .overloads import parser_error
    given = {k: v for k, v in values.items() if k in op.sig.parameters and v is not REQUIRED}
    args, kwargs = call_arguments(op, None, given, _outside(caller))
    error = parser_error(name, False, args, kwargs) or \
        hidden_overloads_error(name, False, args, kwargs)
    if error is not None:
        return error
    where = "" if self_param in kwargs else " (position 1)"
    return TypeError(f"{name}(): argument '{_shown(self_param, None)}'{where} must be Tensor, "
                     f"not {_parser_type(values[self_param])}")


def missing_error(op, name, self_param, first):
    """The parser's TypeError for required parameter `first` of `op`'s binding left out: it
    names every required parameter from there on (passed by keyword or not), with the plural
    the wrong way round."""
    from .declare import _VARARGS_KEYWORD
    sizes = _VARARGS_KEYWORD.get(op.name)   # (sizes as varargs: PyTorch's one `int[]`)
    params = [p for p in op.sig.parameters.values()
              if p.name != self_param and (p.kind is not p.VAR_POSITIONAL or sizes)]
    at = [p.name for p in params].index(first)
    # (a function's `self` is "input" in PyTorch's signatures)
    names = [f'"{sizes if p.kind is p.VAR_POSITIONAL else _shown(p.name, self_param)}"'
             for p in params[at:] if p.default is p.empty]
    return TypeError(f"{name}() missing {len(names)} required positional argument"
                     f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")


def _shown(param, self_param):
    return "input" if param == "self" and self_param is None else param


# PyTorch's functions and methods with one overload it lists and deprecated ones it does not
# (its deprecated.yaml): their calls go its several-overload way, so an argument count the
# listed one cannot take is "invalid combination" (as printed by PyTorch 2.13 for a call
# without arguments), not a missing argument or an unexpected keyword.
_HIDDEN_OVERLOADS = {
    ("add", False): "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
    ("sub", False): "Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None",
    ("addcmul", False): "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
                        "Tensor out = None",
    ("addcdiv", False): "Tensor input, Tensor tensor1, Tensor tensor2, *, Number value = 1, "
                        "Tensor out = None",
    ("addmv", False): "Tensor input, Tensor mat, Tensor vec, *, Number beta = 1, "
                      "Number alpha = 1, Tensor out = None",
    ("addmv_", False): "Tensor input, Tensor mat, Tensor vec, *, Number beta = 1, "
                       "Number alpha = 1",
    ("addr", False): "Tensor input, Tensor vec1, Tensor vec2, *, Number beta = 1, "
                     "Number alpha = 1, Tensor out = None",
    ("addbmm", False): "Tensor input, Tensor batch1, Tensor batch2, *, Number beta = 1, "
                       "Number alpha = 1, Tensor out = None",
    ("sspaddmm", False): "Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, "
                         "Number alpha = 1, Tensor out = None",
    ("saddmm", False): "Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, "
                       "Number alpha = 1, Tensor out = None",
}
for _name, _text in (("add", "Tensor other, *, Number alpha = 1"),
                     ("sub", "Tensor other, *, Number alpha = 1"),
                     ("addcmul", "Tensor tensor1, Tensor tensor2, *, Number value = 1"),
                     ("addcdiv", "Tensor tensor1, Tensor tensor2, *, Number value = 1"),
                     ("addmv", "Tensor mat, Tensor vec, *, Number beta = 1, Number alpha = 1"),
                     ("addr", "Tensor vec1, Tensor vec2, *, Number beta = 1, Number alpha = 1"),
                     ("addbmm", "Tensor batch1, Tensor batch2, *, Number beta = 1, "
                                "Number alpha = 1"),
                     ("baddbmm", "Tensor batch1, Tensor batch2, *, Number beta = 1, "
                                 "Number alpha = 1"),
                     ("addmm", "Tensor mat1, Tensor mat2, *, Number beta = 1, Number alpha = 1"),
                     ("sspaddmm", "Tensor mat1, Tensor mat2, *, Number beta = 1, "
                                  "Number alpha = 1")):
    _HIDDEN_OVERLOADS[_name, True] = _HIDDEN_OVERLOADS[_name + "_", True] = _text
del _HIDDEN_OVERLOADS["sspaddmm_", True]


def hidden_overloads(name, method):
    return (name, method) in _HIDDEN_OVERLOADS


def hidden_overloads_error(name, method, args, kwargs):
    """For an op of `_HIDDEN_OVERLOADS`, the parser's TypeError where the listed overload
    cannot take as many arguments as the call passes (its message then lists the keyword
    arguments its formatter does not recognize, last first, if any); None otherwise (its
    check of that overload speaks, as for an op with one)."""
    from .overloads import Signature, _described, _matches, _slot
    text = _HIDDEN_OVERLOADS.get((name, method))
    if text is None:
        return None
    sig = Signature(text)
    if sig.min_args <= len(args) + len(kwargs) <= sig.max_args:
        return None
    head = f"{name}() received an invalid combination of arguments - got "
    slots = [_slot(item) for item in sig.items]
    # (the formatter names a slot by its last word: `Number alpha = 1` is "1", so a keyword
    # for a parameter with a default is "unrecognized" too)
    unknown = [k for k in list(kwargs)[::-1] if k not in {n for _, n in slots}]
    if unknown:
        return TypeError(head + "unrecognized keyword arguments: " + ", ".join(unknown))

    def shown(kind, value, desc):   # (the formatter marks mismatches only where the call
        # has as many arguments as the overload's text has slots)
        return desc if len(args) + len(kwargs) != len(sig.items) or (
            kind is not None and _matches(kind, value)) else f"!{desc}!"
    positional = [shown(slots[i][0] if i < len(slots) else None, v, _parser_type(v))
                  for i, v in enumerate(args)]
    by_name = {n: k for k, n in slots}
    named = [shown(by_name.get(k), v, f"{k}={_parser_type(v)}")
             for k, v in list(kwargs.items())[::-1]]
    return TypeError(head + f"({_described(positional, named)}), but expected {sig.text}")


def too_many_positional(op, name, self_param, values, caller):
    """PyTorch's TypeError for a call of `op`'s binding `name` passing more positional
    arguments than it takes (`values["_more"]`: the extra ones): where PyTorch has overloads,
    its parser's word on the call; else its count of the one overload's arguments (Python's
    own message would count from 0, the bindings' required parameters having a default, and
    count a method's self)."""
    from .overloads import parser_error
    caller = _outside(caller)
    params = [p for p in op.sig.parameters.values()
              if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != self_param]
    args = [values[p.name] for p in params] + list(values["_more"])
    kwargs = {k: values[k] for k in _keywords_of_call(caller) if k in values}
    kwargs.update(values.get("_kw") or {})   # (unknown keywords count too)
    method = self_param is not None
    if method and positional_count_of_call(caller) == len(args) + 1:
        method, args = False, [values[self_param]] + args   # (`torch.abs_(x, 1)`)
        params = [op.sig.parameters[self_param]] + params
    error = parser_error(name, method, args, kwargs) or \
        hidden_overloads_error(name, method, args, kwargs)
    if error is not None:
        return error
    if method and not params:
        return TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)")
    most = len(params)
    least = sum(p.default is p.empty for p in op.sig.parameters.values()
                if p.name != self_param or not method)
    takes = f"{most} positional argument{'s' * (most != 1)}" if least == most else \
        f"from {least} to {most} positional arguments"
    return TypeError(f"{name}() takes {takes} but {len(args)} were given")


# the names PyTorch's signatures give varargs parameters whose body name differs
_VARARGS_NAMES = {"dim_args": "dims", "shape": "size"}


def _parser_type(value):
    from .._tensor import Tensor
    return "Tensor" if isinstance(value, Tensor) else type_name(type(value))


def argument_error(op, param, expected, got, form="must", index=None):
    """The error to raise for a wrong-typed argument of `op` (or element `index` of it): for a
    public op, the internal ArgumentTypeError its binding finishes; for a private one behind a
    Python-level function (`max` over `_max_all`), PyTorch's TypeError naming that function."""
    error = ArgumentTypeError(op, param, expected, got, form, index)
    if op.bound:
        return error
    name, caller = _entry_name()
    return error.finish(name or op.name.lstrip("_"), caller=caller)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# wrappers' own names (`functools.wraps` keeps the code's): not the name the user called
_WRAPPERS = frozenset({"with_out", "wrapper", "wrapped", "inner", "fn", "method", "binding",
                       "<lambda>"})


def _entry_name():
    """(The name of the torchish function the user called, the caller's frame), found on the
    stack: the outermost frame of torchish's code (generated bindings included) before the
    caller's own, past generic wrappers."""
    import sys
    frame, name = sys._getframe(1), None
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(_PACKAGE) or (
                code.co_filename == "<string>" and "_op" in frame.f_globals):
            if code.co_name not in _WRAPPERS and not code.co_name.startswith("_"):
                name = code.co_name
        elif name is not None:
            break
        frame = frame.f_back
    return name, frame


def called_as_method(frame):
    """Whether a Python-level function here that is also a Tensor method (`narrow`, `select`)
    was called as the method, `frame` being its caller's: a `declare.parsed` wrapper was made
    for one form; otherwise torchish's own code calls the function form (`torch.narrow` goes
    through `overrides.entry`), the user the method."""
    method = frame.f_globals.get("_parsed_method")
    if method is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        return method
    return not frame.f_code.co_filename.startswith(_PACKAGE)


def user_frame(depth):
    """The first frame outside torchish's code, from the one `depth` frames above the
    caller up (past wrappers: the user's call)."""
    import sys
    return _outside(sys._getframe(depth + 1))


def _outside(frame):
    # (past torchish's code, generated bindings and `overrides.entry`'s wrappers of them)
    while frame.f_back is not None and (frame.f_code.co_filename.startswith(_PACKAGE) or (
            frame.f_code.co_filename == "<string>" and (
                "_op" in frame.f_globals or "route" in frame.f_globals))):
        frame = frame.f_back
    return frame


def _keywords_of_call(frame):
    """The names `frame`'s current call passes by keyword (read from its bytecode: a Python
    function cannot tell otherwise); empty when unknown (`f(*args, **kwargs)`)."""
    if frame is None:
        return ()
    import dis
    try:
        code = frame.f_code
        previous = [ins for ins in dis.get_instructions(code) if ins.offset <= frame.f_lasti]
        call = next((i for i in reversed(previous) if i.opname.startswith("CALL")), None)
        if call is None:
            return ()
        before = previous[:previous.index(call)]
        if call.opname == "CALL_KW":   # 3.13+: the names are the constant loaded last
            names = code.co_consts[before[-1].arg] if before[-1].opname == "LOAD_CONST" else ()
        else:                          # 3.11/3.12: KW_NAMES before PRECALL/CALL
            kw = next((i for i in reversed(before[-2:]) if i.opname == "KW_NAMES"), None)
            names = () if kw is None else code.co_consts[kw.arg]
        return names if isinstance(names, tuple) else ()
    except Exception:   # a best effort for a message: never fail the error itself
        return ()


def positional_count_of_call(frame):
    """How many positional arguments `frame`'s current call passes, a method call's receiver
    not counted (read from its bytecode, as `_keywords_of_call`); None when unknown."""
    if frame is None:
        return None
    import dis
    try:
        previous = [ins for ins in dis.get_instructions(frame.f_code)
                    if ins.offset <= frame.f_lasti]
        call = next((i for i in reversed(previous) if i.opname.startswith("CALL")), None)
        if call is None or call.opname == "CALL_FUNCTION_EX":
            return None
        return call.arg - len(_keywords_of_call(frame))
    except Exception:   # a best effort for a message: never fail the error itself
        return None
