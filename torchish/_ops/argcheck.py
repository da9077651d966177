"""Argument types, as PyTorch's python argument parser checks them: what `op` derives from a
declaration (`_argcheck`) and the check a new plan runs (`_check_arguments`)."""
import inspect

import numpy

from .arg_parser import _PYTHON_LEVEL
from .errors import argument_error, int_list_error, tensor_element_error
from .opdef import DIM_NAMES, LIST_NAMES, Omitted, given

# static parameters PyTorch types `int` besides the dims (no float, no bool)
INT_NAMES = frozenset({"k", "chunks", "diagonal", "offset", "start_dim", "end_dim", "n",
                       "bins", "dimension", "dims", "shifts", "source", "destination"})
# static parameters PyTorch types `bool` (an int or a str there is its TypeError)
BOOL_NAMES = frozenset({"keepdim", "largest", "sorted", "descending", "stable", "unbiased",
                        "upper", "hermitian", "return_inverse", "return_counts", "left",
                        "right", "out_int32", "unitriangular", "transpose", "some", "eigenvectors",
                        "implicit", "cudnn_enable", "cudnn_enabled"})
# ops whose `dim` PyTorch types `int[]` (besides those whose default here is a tuple)
_INT_LIST_DIMS = frozenset({"logsumexp", "nansum", "nanmean"})
# ops whose overloads (other than by an `omitted` default) make a wrong-typed dim the
# parser's "invalid combination" error
_OVERLOADED = frozenset({"sort", "argsort", "all", "any", "count_nonzero", "movedim",
                         "moveaxis", "split", "tensor_split", "narrow", "repeat_interleave",
                         "index_fill", "scatter", "squeeze", "hsplit", "vsplit", "dsplit",
                         "view", "conv1d", "conv2d", "conv3d"})
# ops' geometry statics PyTorch types `int[]` though their defaults here are ints;
# a convolution's `padding` may also be a str ('same', 'valid': its other overload)
_GEOMETRY = {**{f"conv{n}d": ("stride", "padding", "dilation") for n in (1, 2, 3)},
             **{f"conv_transpose{n}d": ("stride", "padding", "output_padding", "dilation")
                for n in (1, 2, 3)},
             **{f"max_pool{n}d": ("kernel_size", "stride", "padding", "dilation")
                for n in (2, 3)},
             **{f"avg_pool{n}d": ("kernel_size", "stride", "padding") for n in (2, 3)}}
# ... and those PyTorch types `int`
_INTS = {**{f"conv{t}{n}d": ("groups",) for t in ("", "_transpose") for n in (1, 2, 3)},
         "pixel_shuffle": ("upscale_factor",), "pixel_unshuffle": ("downscale_factor",),
         "unfold": ("size", "step")}
_STR_OK = frozenset({("conv1d", "padding"), ("conv2d", "padding"), ("conv3d", "padding")})
# ops' statics PyTorch types `Number` (a str or None there is its TypeError)
_NUMBERS = {"histc": ("min", "max")}


def _argcheck(opname, params, dyn, statics, scalar_operands, public):
    """What `_check_arguments` needs, from the declaration; None: the op is not checked."""
    if scalar_operands is None:
        if not public or opname.startswith("_"):
            return None
        scalar_operands = False
    numbers = frozenset(dyn if scalar_operands is True else scalar_operands or ())
    unknown = numbers - set(dyn)
    if unknown:
        raise ValueError(f"{opname}: scalar_operands names no dynamic parameter: {unknown}")
    required = {p.name for p in params if p.default is inspect.Parameter.empty}
    defaults = {p.name: p.default for p in params}
    varargs = {p.name for p in params if p.kind is p.VAR_POSITIONAL}   # (sizes, dims)
    # (position, whether PyTorch has overloads without it (its default is `omitted`),
    # whether None is a valid value, the type PyTorch names)
    overloaded = opname in _OVERLOADED
    dims = tuple((i, overloaded or isinstance(defaults[p], Omitted),
                  p not in required and getattr(defaults[p], "nullable", True),
                  _int_type(opname, p, defaults[p], varargs))
                 for i, p in enumerate(statics) if p in DIM_NAMES or (
                     opname not in _PYTHON_LEVEL and (p in INT_NAMES or p in varargs))
                 or p in _GEOMETRY.get(opname, ()) or p in _INTS.get(opname, ()))
    bools = tuple((i, defaults[p] is None or p == "stable")   # (PyTorch's `bool? stable`)
                  for i, p in enumerate(statics) if p in BOOL_NAMES)
    scalars = tuple(i for i, p in enumerate(statics) if p in _NUMBERS.get(opname, ()))
    return numbers, LIST_NAMES.intersection(dyn), required.intersection(dyn), dims, bools, \
        scalars


def _check_arguments(definition, statics, kinds):
    """Raise PyTorch's TypeError for an operand its signature refuses (see `op`'s
    `scalar_operands`); asked when a plan is made, so valid calls never pay for it."""
    numbers, lists, required, dims, bools, scalars = definition.argcheck
    for pname, kind in zip(definition.tensors, kinds):
        if pname in lists and (kind is None or isinstance(kind, type) or kind[0] not in ("L", "?")):
            from .._tensor import Tensor   # (a Tensor, a number or None where a list goes)
            raise argument_error(definition, pname, "tuple of Tensors",
                                 kind if isinstance(kind, type) else type(None) if kind is None
                                 else Tensor)
        if kind is None:
            if pname in required:
                raise argument_error(definition, pname, "Tensor", type(None))
        elif isinstance(kind, type):
            if pname not in numbers:
                raise argument_error(definition, pname, "Tensor", kind)
        elif kind[0] == "?":
            if len(kind) == 4 and pname in lists:   # (PyTorch counts arguments from 0 here)
                raise tensor_element_error(
                    kind[2], list(definition.sig.parameters).index(pname), kind[3])
            raise argument_error(definition, pname, "Tensor", kind[1])
        elif kind[0] == "L" and pname not in lists:
            raise argument_error(definition, pname, "Tensor", list)
        elif kind[0] == "L":   # (a number in a list of Tensors)
            bad = next((i for i, k in enumerate(kind[1]) if isinstance(k, type)), None)
            if bad is not None:
                raise tensor_element_error(
                    bad, list(definition.sig.parameters).index(pname), kind[1][bad])
    if definition.joint_scalars and any(isinstance(k, type) for k in kinds) and any(
            isinstance(k, tuple) and not k[1] for k in kinds[1:]):
        got = ["NoneType" if k is None else k.__name__ if isinstance(k, type) else "Tensor"
               for k in kinds]
        raise argument_error(definition, None, None, got, "mixed")
    check_dims(definition, statics)
    for i, nullable in bools:
        value = statics[i]
        if value.__class__ is not bool and given(value) and not (value is None and nullable):
            raise argument_error(definition, definition.statics[i], "bool", type(value))
    for i in scalars:
        value = statics[i]
        if not _is_number(value):
            raise argument_error(definition, definition.statics[i], "Number", type(value))
    for name, needs in definition.given_with.items():
        value = statics[definition.statics.index(name)]
        if given(value) and not given(statics[definition.statics.index(needs)]):
            raise argument_error(definition, name, None, type(value), "combination")


def check_dims(definition, statics):
    """PyTorch's TypeError for a dim, size or other `int` (or `int[]`) static of the wrong
    type. Also called by the binding for a sequence whose first element is no int: as a plan
    key, (True, 0) is (1, 0)."""
    for i, overloaded, nullable, expected in definition.argcheck[3]:
        value = statics[i]
        if (value is None and nullable) or _is_index(value) or not given(value) or (
                value.__class__ is str and (definition.name, definition.statics[i]) in _STR_OK):
            continue
        bad = None
        if isinstance(value, (list, tuple)):
            if definition.statics[i] == definition.varargs and len(value) == 1 and \
                    isinstance(value[0], (list, tuple)):   # (sizes given as one sequence)
                value = value[0]
            # (the parser reads only the first element's type: a later bool is an int)
            bad = next((j for j, v in enumerate(value)
                        if not (_is_index(v) or (j and isinstance(v, bool)))), None)
            if bad is None:
                continue
        if overloaded and not bad:   # (the binding lists the arguments the call passed; a
            # later element fails after the overload was picked by the first)
            raise argument_error(definition, definition.statics[i], None, (), "mixed")
        if bad is not None:
            raise argument_error(definition, definition.statics[i], "tuple of ints",
                                 type(value[bad]), index=bad)
        raise argument_error(definition, definition.statics[i], expected, type(value))


def bools_as_ints(definition, var, kw):
    """A new plan's `int[]` statics (`var`: the varargs) with a bool element (one after the
    first, which the parser takes) as the int PyTorch reads it, so sizes echoed in errors read
    1, not True; and as a plan key (2, True) is (2, 1): the plan serves both calls."""
    for i, _, _, expected in definition.argcheck[3]:
        name = definition.statics[i]
        if expected != "tuple of ints":
            continue
        if name == definition.varargs:
            var = _no_bools(var)
        elif isinstance(kw.get(name), (list, tuple)):
            kw[name] = _no_bools(kw[name])
    return var, kw


def _no_bools(values):
    if not isinstance(values, (list, tuple)) or not any(
            v.__class__ is bool or isinstance(v, (list, tuple)) for v in values):
        return values
    return type(values)(int(v) if v.__class__ is bool else _no_bools(v) for v in values)


def _int_type(opname, name, default, varargs):
    if name in ("dims", "shifts") or name in varargs or opname in _INT_LIST_DIMS or \
            name in _GEOMETRY.get(opname, ()) or \
            isinstance(getattr(default, "value", default), (tuple, list)):
        return "tuple of ints"
    return "int"


def _is_number(value):
    """A value PyTorch's parser takes for a `Number`: a Python or NumPy number (a bool
    included) or a 0-d Tensor."""
    from .._tensor import Tensor
    return isinstance(value, (int, float, complex, numpy.number, numpy.bool_)) or (
        isinstance(value, Tensor) and value.ndim == 0)


def _is_index(value):
    """An int as PyTorch's parser takes one: an integer, not a bool. (A plan's key holds the
    statics' types: `dim=True` never finds the plan made for `dim=1`.)"""
    return hasattr(type(value), "__index__") and not isinstance(value, bool)


def sequence_dims(definition):
    """The static parameters (not varargs) `check_dims` checks: the binding asks it about a
    sequence given for one of them whose first element is no int."""
    return tuple(definition.statics[i] for i, _, _, _ in definition.argcheck[3]
                 if definition.statics[i] != definition.varargs)


def varargs_check(definition, sizes):
    """The plan's check of sizes given as varargs whose first is no int, made on every such
    call: as a plan key, (True, 0) is (1, 0). (The parser reads the first size's type only.)"""
    first = sizes[0]
    if isinstance(first, (list, tuple)):
        if not first:
            return
        first = first[0]
    if isinstance(first, (bool, float)):
        if definition.name in _OVERLOADED:
            raise argument_error(definition, definition.varargs, None, (), "mixed")
        raise argument_error(definition, definition.varargs, "tuple of ints", type(first),
                             index=0)
    # integer 0-d tensors stand for their values (PyTorch's SymInt parsing): given as ints,
    # so the plan sees static sizes
    from .._tensor import Tensor
    whole = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)) else sizes
    if any(isinstance(s, Tensor) for s in whole):
        ints = tuple(s.__index__() if isinstance(s, Tensor) else s for s in whole)
        return (ints,) if whole is not sizes else ints


def python_level_ints(name, names, values, input=None):
    """PyTorch's TypeError for a bool or float among `values`, the `int` arguments `names` of
    a Python-level function here that PyTorch's parser reads (`select`, `narrow`); called only
    when one of them is no int. As a Tensor method (called from outside torchish), positions
    are counted without self. `input`: given where PyTorch has overloads (its error lists
    them)."""
    bad = next((i for i, v in enumerate(values) if not _is_index(v)), None)
    if bad is None:
        return
    import sys
    from .errors import _entry_name, _keywords_of_call, called_as_method, type_name
    method = called_as_method(sys._getframe(2))
    keywords = _keywords_of_call(_entry_name()[1])
    if input is not None:
        from .overloads import parser_error
        args = [v for n, v in zip(names, values) if n not in keywords]
        error = parser_error(name, method, args if method else [input] + args,
                             {k: values[names.index(k)] for k in keywords if k in names})
        if error is not None:
            raise error
    where = "" if names[bad] in keywords else f" (position {bad + 1 + (not method)})"
    raise TypeError(f"{name}(): argument '{names[bad]}'{where} must be int, not "
                    f"{type_name(type(values[bad]))}")


def int_list(name, param, value, position, keyword=False, scalar=True, symint=False):
    """`value` read as PyTorch's parser reads the `int[]` argument `param` of `name` (its
    `position`, from 1; `keyword`: the call named it), for a Python-level function here that
    calls such a binding (`F.pad`, the adaptive pools): a list or tuple of ints (after the
    first, a bool is an int; a one-element integer or bool Tensor is one), or with `scalar` an
    int standing for all - as ints; else the parser's TypeError. `symint`: PyTorch types it
    `SymInt[]`, whose reading of a bool Tensor element is a RuntimeError. Callers test the
    common all-int case by class first, so valid calls never come here."""
    where = "" if keyword else f" (position {position})"
    if isinstance(value, (list, tuple)):
        bad = next((j for j, v in enumerate(value) if not _int_element(v, j)), None)
        if bad is None:
            return tuple(_as_int(v, symint) for v in value)
        if keyword and bad == 0:   # (the parser then names the sequence's type)
            raise int_list_error(name, param, type(value), None, where)
        raise int_list_error(name, param, type(value[bad]), bad, where)
    if scalar and _int_element(value, 0):
        return int(value)
    raise int_list_error(name, param, type(value), None, where)


def _int_element(value, index):
    from .._tensor import Tensor
    if isinstance(value, Tensor):   # (the parser takes a one-element integer one, any shape)
        return value.numel() == 1 and not (
            value.dtype.is_floating_point or value.dtype.is_complex)
    return _is_index(value) or (index and isinstance(value, bool))


def _as_int(value, symint):
    from .. import _dtype as dt
    from .._tensor import Tensor
    if value.__class__ is int or not isinstance(value, Tensor):
        return int(value)
    if symint and value.dtype is dt.bool:   # (a SymInt is read from it as a non-bool integer)
        raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return int(value.item())
