"""PyTorch's Python argument parser for the few ops whose overloads are resolved in Python
(`max`, `min`, `median`, `nanmedian`): the first overload the arguments fit wins; when none
fits, the parser's TypeError, word for word (one plausible overload: why it failed; several:
the list of overloads, with its quirks: it counts the `*` of a signature as an argument slot
when it marks which overloads had the right number of arguments)."""
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
    = False, *, tuple of Tensors out = None`)."""

    def __init__(self, text):
        self.text = f"({text})"
        self.items = text.split(", ")       # what the message's argument count sees
        self.params, self.kinds = [], {}  # positional-or-keyword: (kind, name, default)
        keyword_only = False
        for item in self.items:
            if item == "*":
                keyword_only = True
                continue
            if not item:
                continue
            head, _, default = item.partition(" = ")
            name = head.split()[-1]
            self.kinds[name] = head.split()[0]
            if not keyword_only:
                self.params.append((head.split()[0], name, default or _REQUIRED))
        self.has_out = "out" in self.kinds
        self.min_args = sum(d is _REQUIRED for _, _, d in self.params)
        self.max_args = len(self.params) + self.has_out


def _fits(kind, value):
    from .._tensor import Tensor
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, Tensor):   # an integer scalar tensor is an int (its __index__)
        return value.numel() == 1 and not (value.dtype.is_floating_point or
                                           value.dtype.is_complex or value.dtype is _dtype.bool)
    return isinstance(value, (int, numpy.integer)) and not isinstance(value, bool)


def _bind(sig, name, args, kwargs, raise_error):
    """The overload's arguments by name, or None when they do not fit it (or, with
    `raise_error`, the TypeError saying why)."""
    def fail(text):
        if raise_error:
            raise TypeError(text)
        return None
    if len(args) > len(sig.params):
        return fail(f"{name}() takes from {sig.min_args} to {len(sig.params)} positional "
                    f"arguments but {len(args)} were given")
    bound, used = {}, set()
    for i, (kind, param, default) in enumerate(sig.params):
        key = param if param in kwargs else next(
            (a for a in _ALIASES.get(param, ()) if a in kwargs), None)
        if i < len(args):
            if param in kwargs:   # (a NumPy name beside it is left over: unexpected)
                return fail(f"{name}() got multiple values for argument '{param}'")
            value, where = args[i], f" (position {i + 1})"
        elif key is not None:
            value, where = kwargs[key], ""
            used.add(key)
        elif default is _REQUIRED:
            return fail(f'{name}() missing 1 required positional arguments: "{param}"')
        else:
            continue
        if not _fits(kind, value):
            return fail(f"{name}(): argument '{param}'{where} must be {kind}, not "
                        f"{_parser_type(value)}")
        bound[param] = operator.index(value) if kind == "int" else value
    for key in kwargs:
        if key not in used:
            return fail(f"{name}() got an unexpected keyword argument '{key}'")
    return bound


def _described(positional, named):
    return ", ".join(positional + named) if positional else "".join(k + ", " for k in named)


def _invalid_combination(name, signatures, args, kwargs):
    """The parser's message when no overload, or several, could take the arguments."""
    keywords = list(kwargs)[::-1]   # as its dict of keyword arguments iterates
    got = _described([_parser_type(a) for a in args],
                     [f"{k}={_parser_type(kwargs[k])}" for k in keywords])
    text = f"{name}() received an invalid combination of arguments - got ({got}), but " \
           f"expected one of:\n"
    for sig in signatures:
        text += f" * {sig.text}\n"
        if len(sig.items) != len(args) + len(kwargs):
            continue
        wrong = [k for k in keywords if k not in sig.kinds]
        if wrong:
            text += f"      didn't match because some of the keywords were incorrect: " \
                    f"{', '.join(wrong)}\n"
            continue
        positional = []
        for i, value in enumerate(args):
            item = sig.items[i] if i < len(sig.items) else "*"
            fits = item not in ("*", "") and "*" not in sig.items[:i] and \
                _fits(item.split()[0], value)
            positional.append(_parser_type(value) if fits else f"!{_parser_type(value)}!")
        named = [f"{k}={_parser_type(kwargs[k])}" if _fits(sig.kinds[k], kwargs[k]) else
                 f"!{k}={_parser_type(kwargs[k])}!" for k in keywords]
        text += f"      didn't match because some of the arguments have invalid types: " \
                f"({_described(positional, named)})\n"
    return TypeError(text)


def parse(name, signatures, args, kwargs):
    """(index of the overload taken, its arguments by name), or PyTorch's TypeError."""
    for index, sig in enumerate(signatures):
        bound = _bind(sig, name, args, kwargs, False)
        if bound is not None:
            return index, bound
    count = len(args) + len(kwargs)
    plausible = [s for s in signatures if s.min_args <= count <= s.max_args]
    if len(plausible) == 1:
        _bind(plausible[0], name, args, kwargs, True)
    raise _invalid_combination(name, signatures, args, kwargs)


def signatures(texts, method):
    """An op's overloads; a method's drop `input` and `out`, as PyTorch's Tensor methods."""
    if method:
        texts = [", ".join(i for i in t.split(", ") if not i.endswith(" input")
                           and i != "*" and " out" not in i) for t in texts]
    return [Signature(t) for t in texts]

