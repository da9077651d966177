"""PyTorch's Python argument parser for ops with several overloads: the first overload the
arguments fit wins (`parse`, for `max`, `min`, `median`, `nanmedian`, whose overloads are
resolved in Python here); when none fits, the parser's TypeError, word for word
(`parser_error`: with one overload of a plausible argument count, why it failed; with
several, the list of overloads and, where the count matches, why each did not match, with
the quirks of PyTorch's formatter: it splits an overload's text at ", ", so `*` is an
argument slot, and a slot at its last space, so `bool keepdim = False` is named "False").
The overloads come from `torch_signatures`, generated from PyTorch."""
import operator

import numpy

from .. import _dtype
from .arg_parser import NUMPY_NAMES
from .errors import _parser_type

_REQUIRED = object()
# the other names PyTorch's parser reads a parameter under, where the call omits its own
_ALIASES = dict(NUMPY_NAMES, input=("x", "a", "x1"), other=("x2",))


class Signature:
    """One overload, from the text PyTorch prints for it (`Tensor input, int dim, bool keepdim
    = False, *, tuple of Tensors out = None`, parenthesized or not)."""

    def __init__(self, text):
        if text.startswith("("):
            text = text[1:-1]
        self.text = f"({text})"
        self.items = text.split(", ")   # what the message's argument count sees
        self.params = []   # (kind, name, default, keyword only)
        keyword_only = False
        for item in self.items:
            if item == "*":
                keyword_only = True
            elif item:
                head, _, default = item.partition(" = ")
                kind, _, name = head.rpartition(" ")
                self.params.append((kind, name, default or _REQUIRED, keyword_only))
        self.min_args = sum(d is _REQUIRED for _, _, d, _ in self.params)
        self.max_args = len(self.params)
        self.max_pos = sum(not k for _, _, _, k in self.params)


def _is_int(value):
    return isinstance(value, (int, numpy.integer)) and not isinstance(value, (bool, numpy.bool_))


def _fits(kind, value):
    """Whether the parser takes `value` for a parameter of type `kind` (its check)."""
    from .._tensor import Tensor
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("int", "float", "Number"):
        if isinstance(value, Tensor):   # a 0-d tensor (an integer one for `int`)
            return value.ndim == 0 and not value.requires_grad and (kind != "int" or not (
                value.dtype.is_floating_point or value.dtype.is_complex or
                value.dtype is _dtype.bool))
        if kind == "int":
            return _is_int(value)
        return isinstance(value, (int, float, numpy.number, numpy.bool_)) or (
            kind == "Number" and isinstance(value, complex))
    if kind.startswith("tuple of "):
        if not isinstance(value, (tuple, list)):   # (an `int[1]` takes one number; a float list
            # none)
            return kind not in ("tuple of Tensors", "tuple of floats") and \
                _fits(_ELEMENT[kind], value) or (
                kind == "tuple of ints" and isinstance(value, Tensor) and value.numel() == 1
                and _fits("int", value.reshape(())))
        return not value or _fits(_ELEMENT[kind], value[0]) and (
            kind != "tuple of Tensors" or all(_fits("Tensor", v) for v in value))
    if kind == "torch.device":
        return _is_int(value) or isinstance(value, str) or _parser_type(value) == kind
    if kind == "torch.dtype":
        return value in (bool, int, float, complex) or _parser_type(value) == kind
    if kind == "str":
        return isinstance(value, str)
    return kind == "object" or _parser_type(value) == kind


_ELEMENT = {"tuple of ints": "int", "tuple of floats": "float", "tuple of Scalars": "Number",
            "tuple of Tensors": "Tensor"}


def _bind(sig, name, args, kwargs, raise_error):
    """The overload's arguments by name, or None when they do not fit it (or, with
    `raise_error`, the TypeError saying why, as the parser's check of one overload)."""
    def fail(text):
        if raise_error:
            raise TypeError(text)
        return None
    # a single positional int list also takes its ints as separate arguments (`view(2, 3)`),
    # unless its first fits the list itself (a `dim`, an `int[1]`, takes one int)
    varargs = sig.max_pos == 1 and sig.params[0][0] == "tuple of ints" and len(args) > 1 and \
        sig.params[0][1] != "dim"
    if len(args) > sig.max_pos and not varargs:
        return fail(_extra_args(sig, name, len(args)))
    bound, used = {}, set()
    for i, (kind, param, default, keyword_only) in enumerate(sig.params):
        key = param if param in kwargs else next(
            (a for a in _ALIASES.get(param, ()) if a in kwargs), None)
        if i < (1 if varargs else len(args)):
            if keyword_only:
                return fail(_extra_args(sig, name, len(args)))
            if param in kwargs:   # (a NumPy name beside it is left over: unexpected)
                return fail(f"{name}() got multiple values for argument '{param}'")
            value, where = (args if varargs else args[i]), f" (position {i + 1})"
        elif key is not None:
            value, where = kwargs[key], ""
            used.add(key)
        elif default is _REQUIRED:
            return fail(f'{name}() missing 1 required positional arguments: "{param}"')
        else:
            continue
        if value is None and default == "None":
            bound[param] = None
            continue
        if not _fits(kind, value):
            if where and isinstance(value, (tuple, list)) and value and kind in _ELEMENT:
                return fail(f"{name}(): argument '{param}'{where} must be {kind}, but found "
                            f"element of type {_parser_type(value[0])} at pos 0")
            return fail(f"{name}(): argument '{param}'{where} must be {kind}, not "
                        f"{_parser_type(value)}")
        bound[param] = operator.index(value) if kind == "int" else value
    for key in kwargs:
        if key not in used:
            return fail(f"{name}() got an unexpected keyword argument '{key}'")
    return bound


def _extra_args(sig, name, given):
    if sig.min_args != sig.max_pos:
        return (f"{name}() takes from {sig.min_args} to {sig.max_pos} positional arguments "
                f"but {given} were given")
    return (f"{name}() takes {sig.max_pos} positional argument{'' if sig.max_pos == 1 else 's'}"
            f" but {given} {'was' if given == 1 else 'were'} given")


def _described(positional, named):
    return ", ".join(positional + named) if positional else "".join(k + ", " for k in named)


def _slot(item):
    """(type, name) of an overload's slot as the formatter reads them: split at the last
    space, so `bool keepdim = False` is named "False", of type "bool keepdim =")."""
    kind, _, name = item.rpartition(" ")
    return kind or name, name


def _matches(kind, value):
    """The formatter's test of an argument against a slot's type: by the value's type name,
    so a `Number`, a `tuple of ints` or a slot with a default never matches."""
    got = _parser_type(value)
    return got == kind or (kind == "float" and got == "int")


def _described_value(value):
    """A value as the formatter shows a mismatch: a sequence with its elements' types."""
    if isinstance(value, tuple):
        inner = ", ".join(_parser_type(v) for v in value)
        return f"tuple of ({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, list):
        return f"list of [{', '.join(_parser_type(v) for v in value)}]"
    return _parser_type(value)


def _invalid_combination(name, signatures, args, kwargs):
    """The parser's message when no overload, or several, could take the arguments."""
    keywords = list(kwargs)[::-1]   # as its map of keyword arguments iterates
    got = _described([_parser_type(a) for a in args],
                     [f"{k}={_parser_type(kwargs[k])}" for k in keywords])
    text = f"{name}() received an invalid combination of arguments - got ({got}), but " \
           f"expected one of:\n"
    for sig in signatures:
        text += f" * {sig.text}\n"
        if len(sig.items) != len(args) + len(kwargs):
            continue
        kinds, names = zip(*map(_slot, sig.items))
        wrong = [k for k in keywords if k not in names[len(sig.items) - len(kwargs):]]
        if wrong:
            text += f"      didn't match because some of the keywords were incorrect: " \
                    f"{', '.join(wrong)}\n"
            continue
        shown = []
        for i, kind in enumerate(kinds):
            value = args[i] if i < len(args) else kwargs[names[i]]
            desc = _described_value(value) if i < len(args) else \
                f"{names[i]}={_described_value(value)}"
            shown.append(desc if _matches(kind, value) else f"!{desc}!")
        text += f"      didn't match because some of the arguments have invalid types: " \
                f"({_described(shown[:len(args)], shown[len(args):])})\n"
    return TypeError(text)


def parse(name, signatures, args, kwargs):
    """(index of the overload taken, its arguments by name), or PyTorch's TypeError."""
    for index, sig in enumerate(signatures):
        bound = _bind(sig, name, args, kwargs, False)
        if bound is not None:
            return index, bound
    raise _refusal(name, signatures, args, kwargs)


def _refusal(name, signatures, args, kwargs):
    count = len(args) + len(kwargs)
    plausible = [s for s in signatures if s.min_args <= count <= s.max_args]
    if len(plausible) == 1:
        try:
            _bind(plausible[0], name, args, kwargs, True)
        except TypeError as exc:
            return exc
    return _invalid_combination(name, signatures, args, kwargs)


def table(name, method):
    """PyTorch's overloads of its function (or Tensor `method`) `name`, in its order; None
    where it has one."""
    from .torch_signatures import FUNCTIONS, METHODS
    texts = (METHODS if method else FUNCTIONS).get(name)
    return None if texts is None else [Signature(t) for t in texts]


def parser_error(name, method, args, kwargs):
    """PyTorch's TypeError for a call of its function (or `method`) `name` with these
    arguments, from its overloads; None where PyTorch binds `name` with one overload, or
    one of them takes the arguments (the caller then says what its own check found)."""
    sigs = table(name, method)
    if sigs is None or any(_bind(s, name, args, kwargs, False) is not None for s in sigs):
        return None
    return _refusal(name, sigs, args, kwargs)
