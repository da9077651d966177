"""`torch.library`: define custom operators and reach them through `torch.ops.<ns>.<name>`.

`custom_op` infers the schema from type hints (as PyTorch requires them); `Library.define`
and `define` take schema text. Kernels are Python functions over torchish tensors, so they run
eagerly and under tracing alike; `register_autograd` gives the op a backward, `register_fake`
is kept (shapes come from tracing the real kernel here, so it is not needed to trace)."""
import inspect
import typing
import collections.abc as cabc

from ._torch_ops import registry
from ._torch_ops.namespace import OpOverload, OpOverloadPacket
from ._unsupported import missing

__all__ = ["Library", "define", "impl", "custom_op", "register_fake", "register_autograd",
           "register_kernel", "infer_schema", "CustomOpDef", "get_ctx", "opcheck", "OpOverload"]

_LIBRARIES = set()   # namespaces with a DEF library


def _type_text(ann, name, sig):
    from ._tensor import Tensor
    from ._dtype import dtype
    from ._device import device
    args = typing.get_args(ann)
    origin = typing.get_origin(ann)
    if ann is Tensor:
        return "Tensor"
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and \
            len(args) == 2 and type(None) in args:
        inner = _type_text(next(a for a in args if a is not type(None)), name, sig)
        return inner + "?"
    if origin in (list, cabc.Sequence, typing.Sequence) and len(args) == 1:
        return _type_text(args[0], name, sig) + "[]"
    simple = {int: "SymInt", float: "float", bool: "bool", str: "str", dtype: "ScalarType",
              device: "Device"}
    if ann in simple:
        return simple[ann]
    if origin is typing.Union and set(args) <= {int, float, bool}:
        return "Scalar"
    raise ValueError(f"infer_schema(func): Parameter {name} has unsupported type {ann}. "
                     f"Got func with signature {sig})")


def _default_text(value):
    if isinstance(value, str):
        return f'"{value}"'
    text = repr(value)
    # C++'s float printing in schemas: `2.`, not Python's `2.0`
    return text[:-1] if isinstance(value, float) and text.endswith(".0") else text


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """Schema text `(Tensor x, float s) -> Tensor` from type hints."""
    sig = inspect.signature(prototype_function)
    hints = typing.get_type_hints(prototype_function)
    mutated = set(() if mutates_args == "unknown" else
                  [mutates_args] if isinstance(mutates_args, str) else mutates_args)
    parts, seen_kw, alias = [], False, 0
    for name, param in sig.parameters.items():
        if param.annotation is inspect.Parameter.empty:
            raise ValueError(f"infer_schema(func): Parameter {name} must have a type "
                             f"annotation. Got func with signature {sig})")
        text = _type_text(hints[name], name, sig)
        if name in mutated:
            text = text.replace("Tensor", f"Tensor(a{alias}!)", 1)
            alias += 1
        if param.kind == param.KEYWORD_ONLY and not seen_kw:
            parts.append("*")
            seen_kw = True
        parts.append(f"{text} {name}" + ("" if param.default is param.empty else
                                          "=" + _default_text(param.default)))
    if sig.return_annotation is inspect.Signature.empty:
        raise ValueError(f"infer_schema(func): No return type annotation was provided. "
                         f"Please add one. Got func with signature {sig})")
    ret = hints.get("return")
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = "(" + ", ".join(_type_text(a, "return", sig)
                                  for a in typing.get_args(ret)) + ")"
    else:
        returns = _type_text(ret, "return", sig)
    return f"({', '.join(parts)}) -> {returns}"


def _register(kernel, key, fn):
    kernel.impls[key] = fn


class CustomOpDef:
    """What `@custom_op` returns: callable as the op, with `register_*` to add rules."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._schema_text, self._init_fn = \
            namespace, name, schema, fn
        qualname = f"{namespace}::{name}"
        registry.forget(qualname)
        self._opoverload = registry.define(qualname, schema, inspect.signature(fn))
        kernel = self._opoverload._fn
        kernel.opaque = True
        _register(kernel, "CompositeExplicitAutograd", fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_fake(self, fn, /):
        self._opoverload._fn.fake = fn
        return fn

    def register_kernel(self, device_types, fn=None, /):
        def inner(f):
            for dev in [device_types] if isinstance(device_types, str) or \
                    device_types is None else device_types:
                if dev in (None, "cpu"):
                    _register(self._opoverload._fn, "CPU", f)
            return f
        return inner if fn is None else inner(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        kernel = self._opoverload._fn
        kernel.backward, kernel.setup_context = backward, setup_context

    def register_torch_dispatch(self, *args, **kwargs):
        raise missing("torchish.library.CustomOpDef", "register_torch_dispatch")

    def register_vmap(self, *args, **kwargs):
        raise missing("torchish.library.CustomOpDef", "register_vmap")


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Decorator turning a type-hinted function into the operator `name` ("ns::op")."""
    def inner(f):
        namespace, opname = name.split("::")
        text = schema if schema is not None else infer_schema(f, mutates_args=mutates_args)
        op = CustomOpDef(namespace, opname, text, f)
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
        registry.kernel_of(_op_of(op)).fake = f
        return f
    return inner if fn is None else inner(fn)


def register_kernel(op, device_types, fn=None, /, *, lib=None):
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, fn)
    return impl(_op_of(op), device_types or "default", fn)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    kernel = registry.kernel_of(_op_of(op))
    kernel.opaque = True
    kernel.backward, kernel.setup_context = backward, setup_context


def _op_of(op):
    return op._opoverload if isinstance(op, CustomOpDef) else op


def get_ctx():
    raise missing("torchish.library", "get_ctx")


def opcheck(*args, **kwargs):
    raise missing("torchish.library", "opcheck")


# PyTorch's other public `torch.library` names: refused by name; anything else is a plain
# AttributeError, as PyTorch's module gives
_PYTORCH_NAMES = {"EffectType", "NAMELESS_SCHEMA", "fallthrough_kernel", "get_kernel",
                  "impl_abstract", "register_autocast", "register_torch_dispatch",
                  "register_vmap", "triton_op", "wrap_triton"}


def __getattr__(name):
    if name in _PYTORCH_NAMES:
        raise missing(__name__, name)
    raise AttributeError(f"module 'torch.library' has no attribute '{name}'")
