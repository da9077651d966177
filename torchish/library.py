"""`torch.library`: define custom operators and reach them through `torch.ops.<ns>.<name>`.

`custom_op` infers the schema from type hints by PyTorch's table of hints; `Library.define`
and `define` take schema text. Calls are checked and converted against the schema as
PyTorch's dispatcher does (`_torch_ops/custom_args.py`). Kernels are Python functions over
torchish tensors, so they run eagerly and under tracing alike; a custom_op's kernel may not
return (views of) its inputs, `register_autograd` gives it a backward (Tensor[] arguments
included), `register_fake` is kept (shapes come from tracing the real kernel here) and read
by `opcheck`."""
import inspect
import typing
import collections.abc as cabc

from ._torch_ops import opcheck as _opcheck, registry
from ._torch_ops.namespace import OpOverload, OpOverloadPacket
from ._unsupported import missing

__all__ = ["Library", "define", "impl", "custom_op", "register_fake", "register_autograd",
           "register_kernel", "infer_schema", "CustomOpDef", "get_ctx", "opcheck", "OpOverload"]

_LIBRARIES = set()   # namespaces with a DEF library
_OPDEFS = {}         # "ns::name" -> the CustomOpDef defining it


def _sequences(t):
    return (typing.Sequence[t], typing.List[t], cabc.Sequence[t], list[t])  # noqa: UP006


def _param_types():
    """Type hint -> schema type, the table PyTorch's infer_schema reads (a hint is looked up
    as written: `int | float` is not in it, `torch.types.Number` is)."""
    from ._tensor import Tensor
    from ._dtype import dtype
    from ._device import device
    from .types import Number
    table = {}
    # (hint, schema type, `T[]` variant, `T?[]` variant, `T[]?` variant)
    for hint, text, lists, optional_lists, optional_list in (
            (Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True),
            (str, "str", False, False, False), (Number, "Scalar", True, False, False),
            (dtype, "ScalarType", False, False, False),
            (device, "Device", False, False, False)):
        table[hint] = text
        table[typing.Optional[hint]] = text + "?"
        if lists:
            table.update((s, text + "[]") for s in _sequences(hint))
        if optional_lists:
            table.update((s, text + "?[]") for s in _sequences(typing.Optional[hint]))
        if optional_list:
            table.update((typing.Optional[s], text + "[]?") for s in _sequences(hint))
    return table


def _return_types():
    from ._tensor import Tensor
    from .types import Number
    return {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa
            int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


_TABLES = []


def _tables():
    if not _TABLES:
        _TABLES.extend((_param_types(), _return_types()))
    return _TABLES


def _default_text(name, value, error):
    from ._dtype import dtype
    from ._device import device
    if value is None or isinstance(value, (int, float, bool)):
        return str(value)   # (Python's spelling: the schema prints it back in C++'s)
    if isinstance(value, (str, device)):
        return f'"{value}"'
    if isinstance(value, dtype):
        return str(value)[len("torch."):]
    error(f"Parameter {name} has an unsupported default value type {type(value)}. Please "
          f"file an issue on GitHub so we can prioritize this.")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """Schema text `(Tensor x, float s) -> Tensor` from type hints, by PyTorch's rules."""
    sig = inspect.signature(prototype_function)
    params_table, returns_table = _tables()
    if not isinstance(mutates_args, str):
        mutates_args = tuple(mutates_args)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(hint):
        if not isinstance(hint, str):
            return hint
        try:   # (`from __future__ import annotations`)
            return eval(hint, prototype_function.__globals__)
        except Exception as e:
            error(f"Unsupported type annotation {hint}. It is not a type. "
                  f"({type(e).__name__}: {e})")

    parts, seen, keyword_only = [], set(), False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not keyword_only:
            parts.append("*")
            keyword_only = True
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        hint = resolve(param.annotation)
        try:
            text = params_table[hint]
        except (KeyError, TypeError):
            if typing.get_origin(hint) is tuple:
                args = typing.get_args(hint)
                as_list = list if not args else list[args[0]] if len(args) == 1 or \
                    len(args) == 2 and args[1] is Ellipsis else list[typing.Union[args]]
                example = f"For example, {as_list}.\n\n" if as_list in params_table \
                    else "\n\n"
                error(f"Parameter {name} has unsupported type {param.annotation}. We do not "
                      f"support Tuple inputs in schema. As a workaround, please try to use "
                      f"List instead. {example}The valid types are: {params_table.keys()}.")
            error(f"Parameter {name} has unsupported type {param.annotation}. The valid "
                  f"types are: {params_table.keys()}.")
        if isinstance(mutates_args, str):
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the "
                                 "arguments that are mutated or the string 'unknown'. ")
            if text.startswith("Tensor"):
                text = f"Tensor(a{idx}!){text[len('Tensor'):]}"
        elif name in mutates_args:
            if not text.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections "
                      f"of Tensors can be mutated")
            text = f"Tensor(a{idx}!){text[len('Tensor'):]}"
        seen.add(name)
        parts.append(f"{text} {name}" if param.default is param.empty else
                     f"{text} {name}={_default_text(name, param.default, error)}")
    if mutates_args != "unknown":
        unseen = set(mutates_args) - seen
        if unseen:
            error(f"{unseen} in mutates_args were not found in the custom op's signature. "
                  f"mutates_args should contain the names of all args that the custom op "
                  f"mutates, or just the string 'unknown' if you don't know.")
    ret = resolve(sig.return_annotation)
    if ret is None:
        returns = "()"
    elif ret is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    elif typing.get_origin(ret) is tuple:
        args = typing.get_args(ret)
        if any(a not in returns_table for a in args):
            error(f"Return has unsupported type {ret}. The valid types are: "
                  f"{returns_table}.")
        returns = ", ".join(returns_table[a] for a in args)
        returns = f"(({returns}))" if len(args) == 1 else f"({returns})"
    else:
        if ret not in returns_table:
            error(f"Return has unsupported type {ret}. The valid types are: "
                  f"{returns_table}.")
        returns = returns_table[ret]
    return f"{op_name or ''}({', '.join(parts)}) -> {returns}"


def _register(kernel, key, fn):
    kernel.impls[key] = fn


def _storages(values):
    from ._tensor import Tensor
    for v in values:
        for t in v if isinstance(v, (list, tuple)) else (v,):
            if isinstance(t, Tensor):
                yield id(t._storage)


def _returned(result, returns):
    """A kernel's result as the schema's returns make it: PyTorch reads a `(...)` return as a
    sequence, and a number as the schema's type (`-> float` gives 3.0 for 3)."""
    if returns.startswith("(") and returns != "()":
        if not isinstance(result, (tuple, list)):
            raise TypeError(f"Object of type '{type(result).__name__}' is not an instance of "
                            f"'sequence'")
    elif returns == "float" and isinstance(result, (int, bool)):
        return float(result)
    elif returns == "SymInt" and isinstance(result, bool):
        return int(result)
    return result


class CustomOpDef:
    """What `@custom_op` returns: callable as the op, with `register_*` to add rules."""

    def __init__(self, namespace, name, schema, fn, tags=()):
        self._namespace, self._name, self._schema, self._init_fn = \
            namespace, name, schema, fn
        self._tags = tags
        qualname = f"{namespace}::{name}"
        from ._torch_ops.schema import FunctionSchema
        parsed = FunctionSchema(f"{qualname}{schema}")
        if any(a.kwarg_only and a.core.startswith("Tensor") for a in parsed.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your "
                                      f"tensors not kwarg-only. Got: {name}{schema}")
        registry.forget(qualname)
        self._opoverload = registry.define(qualname, schema)
        kernel = self._opoverload._fn
        kernel.opaque = True
        _register(kernel, "CompositeExplicitAutograd", self._checked(fn))
        _OPDEFS[qualname] = self
        self.__name__ = name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _checked(self, fn):
        """`fn` as the op's kernel: PyTorch refuses a result that is, or is a view of, an
        input or another result (a custom op's outputs are new tensors)."""
        returns = str(self._opoverload._schema).rpartition("->")[2].strip()

        def backend_impl(*args, **kwargs):
            result = _returned(fn(*args, **kwargs), returns)
            seen = set(_storages(args)) | set(_storages(kwargs.values()))
            for key in _storages(result if isinstance(result, tuple) else (result,)):
                if key in seen:
                    raise RuntimeError(
                        f"{self._name} (with implementation in {inspect.getmodule(backend_impl)}"
                        f"): The output of this custom operator (1) must not also be an input "
                        f"to this custom operator and (2) may not alias any inputs to this "
                        f"custom operator or other returns. The most common way to trigger "
                        f"this error is if we have y = custom_op(x) and y and x are the same "
                        f"Tensor. Please instead return a clone of the offending output "
                        f"tensor(s) (e.g. return x.clone()) or refactor the custom operator "
                        f"to not return y.")
                seen.add(key)
            return result
        return backend_impl

    def register_fake(self, fn, /):
        # (shapes come from running the real kernel on tracers here: the fake is kept only)
        self._opoverload._fn.fake = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        def inner(f):
            for dev in [device_types] if isinstance(device_types, str) or \
                    device_types is None else device_types:
                if dev in (None, "cpu"):
                    _register(self._opoverload._fn, "CPU", self._checked(f))
            return f
        return inner if fn is None else inner(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        schema = self._opoverload._schema
        if any(a.is_write for a in schema.arguments) or not schema.returns:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                               f"{self} with schema {schema}. Please create a functional "
                               f"operator and register an autograd formula for that.")
        kernel = self._opoverload._fn
        kernel.backward, kernel.setup_context = backward, setup_context

    def register_torch_dispatch(self, *args, **kwargs):
        raise missing("torchish.library.CustomOpDef", "register_torch_dispatch")

    def register_vmap(self, *args, **kwargs):
        raise missing("torchish.library.CustomOpDef", "register_vmap")


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Decorator turning a type-hinted function into the operator `name` ("ns::op")."""
    def inner(f):
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        namespace, opname = name.split("::")
        op = CustomOpDef(namespace, opname, text, f, () if tags is None else tags)
        if schema is not None:
            expected = {a.name for a in op._opoverload._schema.arguments if a.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        if device_types is not None:
            op.register_kernel(device_types, f)
        return op
    return inner if fn is None else inner(fn)


class Library:
    """`Library(ns, "DEF" | "IMPL" | "FRAGMENT")`: `define` schemas, `impl` kernels."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError("Unsupported kind: ", kind)
        if kind == "DEF" and ns in _LIBRARIES:
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                f"please put all of your definitions in a single TORCH_LIBRARY block.  If you "
                f"were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                f"(which can be duplicated).  If you really intended to define operators for a "
                f"single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                f"explicitly indicate this.")
        if kind == "DEF":
            _LIBRARIES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defs = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        name, paren, rest = schema.partition("(")
        registry.define(f"{self.ns}::{name.strip()}", paren + rest)
        self._defs.append(name.strip())
        return name.strip().partition(".")[0]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        if isinstance(op_name, (OpOverload, OpOverloadPacket)):
            kernel = registry.kernel_of(op_name)
        else:
            kernel = registry.kernel_of(op_name if "::" in op_name else
                                        f"{self.ns}::{op_name}")
        _register(kernel, dispatch_key or self.dispatch_key, fn)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise missing("torchish.library.Library", "fallback")

    def _destroy(self):
        # as PyTorch, a Library that goes away takes its namespace claim and definitions along
        if self.kind == "DEF":
            _LIBRARIES.discard(self.ns)
        for name in self._defs:
            registry.forget(f"{self.ns}::{name}")
        self._defs = []

    def __del__(self):
        if "_defs" in vars(self):   # (not when __init__ refused the library)
            self._destroy()


def define(qualname, schema, *, lib=None, tags=()):
    """`define("mylib::foo", "(Tensor x) -> Tensor")`."""
    registry.define(qualname, schema)


_KEYS = {"cpu": "CPU", "cuda": "CUDA", "default": "CompositeExplicitAutograd"}


def impl(qualname, types=None, func=None, *, lib=None):
    """Register a kernel: `@impl("mylib::foo", "cpu")` (returns None, as PyTorch 2.13 does)
    or the older `impl(lib, "foo", "CPU")`."""
    if isinstance(qualname, Library):
        lib_, name, key = qualname, types, func

        def register(f):
            lib_.impl(name, f, key or "")
            return f
        return register
    keys = [types] if isinstance(types, str) else list(types)

    def inner(f):
        kernel = registry.kernel_of(qualname)
        for key in keys:
            _register(kernel, _KEYS.get(key, key), f)
    return inner if func is None else inner(func)


def register_fake(op, fn=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    def inner(f):
        try:
            found, kernel = _opdef(op), registry.kernel_of(_op_of(op))
        except AttributeError:
            raise RuntimeError(f"operator {op} does not exist") from None
        if found is not None:
            return found.register_fake(f)
        kernel.fake = f
        return f
    return inner if fn is None else inner(fn)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, fn)
    return impl(_op_of(op), device_types or "default", fn)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    if _opdef(op) is not None:
        return _opdef(op).register_autograd(backward, setup_context=setup_context)
    kernel = registry.kernel_of(_op_of(op))
    kernel.opaque = True
    kernel.backward, kernel.setup_context = backward, setup_context


def _op_of(op):
    if isinstance(op, str):   # (PyTorch looks a name up in torch.ops: its AttributeError)
        from ._torch_ops.namespace import ops
        ns, name = op.split("::")
        base, _, overload = name.partition(".")
        packet = getattr(getattr(ops, ns), base)
        return getattr(packet, overload) if overload else packet
    return op._opoverload if isinstance(op, CustomOpDef) else op


def _opdef(op):
    """The CustomOpDef behind `op` (itself, a name, a packet or an overload), or None."""
    if isinstance(op, CustomOpDef):
        return op
    qualname = op if isinstance(op, str) else getattr(op, "_qualified_op_name", None) or \
        getattr(op, "_name", None)
    found = _OPDEFS.get(qualname.partition(".")[0] if isinstance(qualname, str) else None)
    return found if found is not None and found._opoverload._fn is registry.kernel_of(
        _op_of(op)) else None


def get_ctx():
    raise missing("torchish.library", "get_ctx")


def opcheck(op, args, kwargs=None, *, test_utils=_opcheck.DEFAULT, raise_exception=True,
            atol=None, rtol=None):
    """PyTorch's registration checks of a custom op on sample arguments (the fake kernel
    checked against the real one's results; aot_dispatch as torchish.compile)."""
    return _opcheck.opcheck(op, args, kwargs, test_utils=test_utils,
                            raise_exception=raise_exception, atol=atol, rtol=rtol)


# PyTorch's other public `torch.library` names: refused by name; anything else is a plain
# AttributeError, as PyTorch's module gives
_PYTORCH_NAMES = {"EffectType", "NAMELESS_SCHEMA", "fallthrough_kernel", "get_kernel",
                  "impl_abstract", "register_autocast", "register_torch_dispatch",
                  "register_vmap", "triton_op", "wrap_triton"}


def __getattr__(name):
    if name in _PYTORCH_NAMES:
        raise missing(__name__, name)
    raise AttributeError(f"module 'torch.library' has no attribute '{name}'")
