"""ATen operator schemas: parse the text form (`aten::add.Tensor(Tensor self, Tensor other, *,
Scalar alpha=1) -> Tensor`) and bind a Python call to it with the dispatcher's own checks and
error messages, so that `torch.ops.aten.X.overload(...)` refuses what PyTorch refuses."""
import ast
import numbers
import re


class Argument:
    __slots__ = ("name", "type", "default", "has_default", "kwarg_only", "is_write", "optional",
                 "core", "_value")

    def __init__(self, name, type_, default, has_default, kwarg_only):
        self.name, self.type, self.default = name, type_, default
        self.has_default, self.kwarg_only = has_default, kwarg_only
        # `Tensor(a!) out`: an argument the op writes (out= tensors, mutated inputs)
        self.is_write = "!" in type_
        base = re.sub(r"\([^)]*\)", "", type_)   # (`Tensor(a0!)[]` is a Tensor[])
        self.optional, self.core = base.endswith("?"), base.rstrip("?")

    def __repr__(self):
        return f"{self.type} {self.name}" + (f"={self.default}" if self.has_default else "")

    @property
    def default_value(self):
        """The default as a Python value (None where there is none), as PyTorch's Argument."""
        if not self.has_default:
            return None
        if not hasattr(self, "_value"):   # (parsed once: custom ops read it per call)
            self._value = self._parse_default()
        return self._value

    def _parse_default(self):
        text = {"True": "True", "False": "False", "None": "None"}.get(self.default,
                                                                     self.default)
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text   # (enum-like defaults such as `Mean`, `contiguous_format`)


def _split_top(text):
    """Split at commas outside brackets/parentheses/quotes (`int[2] stride=[1, 1]`)."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


class FunctionSchema:
    """The parsed schema; `str()` gives the text back, as PyTorch's `op._schema` prints."""

    def __init__(self, text):
        self._text = text
        head, _, rest = text.partition("(")
        depth, i = 1, 0
        while depth:
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            i += 1
        args_text, ret_text = rest[:i - 1], rest[i:].strip()
        qualified, _, self.overload_name = head.partition(".")
        self.name = qualified
        self.arguments, kwarg_only = [], False
        for part in _split_top(args_text):
            if part == "*":
                kwarg_only = True
                continue
            decl, eq, default = part.partition("=")
            type_, _, name = decl.strip().rpartition(" ")
            self.arguments.append(Argument(name, type_, default.strip(), bool(eq), kwarg_only))
        ret = ret_text[2:].strip() if ret_text.startswith("->") else ""
        if ret.startswith("(") and ret.endswith(")"):
            ret = ret[1:-1]
        self.returns = _split_top(ret)
        # precomputed for the per-call checks
        self._n_positional = sum(not p.kwarg_only for p in self.arguments)
        self._names = {p.name for p in self.arguments}
        self.written = [p.name for p in self.arguments if p.is_write and p.kwarg_only]
        # operators defined through torch.library: PyTorch's Python-to-schema conversion
        # checks every argument (a 1.5 for `SymInt n`); ATen overloads keep the lighter checks
        # that pick between overloads, the routed function checking the rest
        self.strict = not qualified.startswith("aten::")

    def __str__(self):
        return self._text

    def __repr__(self):
        return self._text

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self._text)

    @property
    def short(self):
        return self.name   # `aten::add`, as the dispatcher's messages name the op

    def bind(self, args, kwargs):
        """Check a call against this schema; return the error message or None. PyTorch's
        order: total count, positional count, unknown keyword, missing value, types."""
        params = self.arguments
        n_positional = self._n_positional
        decl = f"Declaration: {self._text}"
        if len(args) + len(kwargs) > len(params):
            return (f"{self.short}() expected at most {len(params)} argument(s) but received "
                    f"{len(args) + len(kwargs)} argument(s). {decl}")
        if len(args) > n_positional:
            return (f"{self.short}() takes {n_positional} positional argument(s) but "
                    f"{len(args)} was/were given.  {decl}")
        for key in kwargs:
            if key not in self._names:
                return (f"Unknown keyword argument '{key}' for operator '{self.short}'. "
                        f"Schema: {self}")
        for i, p in enumerate(params):
            if i < len(args):
                value = args[i]
            elif p.name in kwargs:
                value = kwargs[p.name]
            elif p.has_default or p.type.endswith("?") and not self.strict:
                continue
            else:
                return f"{self.short}() is missing value for argument '{p.name}'. {decl}"
            if self.strict:
                from .custom_args import refusal
                bad = refusal(p, value)
                if bad is not None:
                    return (f"{self.short}() Expected a value of type '{bad[0]}' for argument "
                            f"'{p.name}' but instead found type '{type(value).__name__}'.\n"
                            f"Position: {i}\nValue: {value!r}\n{decl}\n{bad[1]}")
                continue
            bad = _type_error(p.core, p.optional, value)
            if bad is not None:
                expected, detail = bad
                return (f"{self.short}() Expected a value of type '{expected}' for argument "
                        f"'{p.name}' but instead found type '{type(value).__name__}'.\n"
                        f"Position: {i}\nValue: {value!r}\n{decl}\nCast error details: {detail}")
        return None


def _is_tensor(value):
    from .._tensor import Tensor
    return isinstance(value, Tensor)


def _is_number(value):
    return isinstance(value, (numbers.Number, bool)) and not _is_tensor(value)


def _type_error(core, optional, value):
    """(expected type text, cast detail) when `value` cannot be this schema type. Only the
    checks that pick between overloads (Tensor vs Scalar vs list vs str) are made; the routed
    torchish function checks the rest with its own PyTorch messages."""
    if optional and value is None:
        return None
    if core == "Tensor":
        if _is_tensor(value) or _is_number(value):
            return None
        return "Tensor", f"Unable to cast {value} to Tensor"
    if core == "Scalar":
        if _is_number(value) or _is_tensor(value) and value.dim() == 0:
            return None
        return "number", f"Cannot cast {value} to number"
    if core in ("Tensor[]", "Tensor?[]"):
        if isinstance(value, (list, tuple)) and all(
                _is_tensor(v) or v is None and core == "Tensor?[]" for v in value):
            return None
        return "List[Tensor]", f"Unable to cast {value} to Tensor list"
    if core == "str" and not isinstance(value, str):
        return "str", f"Unable to cast {value!r} to str"
    if core in ("int", "SymInt", "float", "bool") and _is_tensor(value) and value.dim() > 0:
        return core, f"Unable to cast {value} to {core}"
    if core in ("int", "SymInt", "float", "bool", "int[]", "SymInt[]") and isinstance(value, str):
        return core, f"Unable to cast {value!r} to {core}"
    return None
