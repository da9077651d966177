"""`torch.ops`: namespaces (`torch.ops.aten`, `torch.ops.mylib`), op packets (`aten.add`) and
overloads (`aten.add.Tensor`). Calls go through the schema's argument checks, then to the
torchish function that implements the op (routing.py for ATen, library.py's registry for
custom ops), so autograd, dtype promotion and tracing are the ordinary op's."""
import inspect
import types

from .schema import FunctionSchema


class OpOverload:
    """One overload of an operator: `torch.ops.aten.add.Tensor`."""

    def __init__(self, packet, overload, schema, fn):
        self._overloadpacket, self._overloadname = packet, overload
        self._schema, self._fn = schema, fn
        ns, name = packet._qualified_op_name.split("::")
        self._name, self._opname, self.namespace = ns + "::" + name, name, ns
        self.__name__ = f"{name}.{overload}"
        self.__qualname__ = self.name()
        self.__module__ = packet.__module__
        self.__doc__ = None
        from .routing import node_rename
        self._rename = node_rename(name, overload) if ns == "aten" else None

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def op(self):
        return self

    @property
    def is_view(self):
        return any("(" in a.type and "!" not in a.type for a in self._schema.arguments[:1])

    @property
    def tags(self):
        return []

    def name(self):
        return self._name + ("" if self._overloadname == "default" else
                             "." + self._overloadname)

    def __repr__(self):
        return (f"<OpOverload(op='{self.namespace}.{self._opname}', "
                f"overload='{self._overloadname}')>")

    def __str__(self):
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self):
        return id(self)

    def __call__(self, /, *args, **kwargs):
        error = self._schema.bind(args, kwargs)
        if error is not None:
            raise RuntimeError(error)
        result = _call(self._fn, self._schema, args, kwargs)
        if self._rename is not None:
            from .routing import rename_node
            result = rename_node(result, self._rename)
        return result

    def __deepcopy__(self, memo=None):
        return self

    def __reduce__(self):
        return (_lookup, (self.namespace, self._opname, self._overloadname))


def _call(fn, schema, args, kwargs):
    if "self" in kwargs:   # `self` may be given by keyword; routed functions take it first
        kwargs = dict(kwargs)
        args = (kwargs.pop("self"),) + tuple(args)
    room = _positional_room(fn)
    if len(args) > room:
        # positional in the schema, keyword-only in the Python function (add's alpha)
        kwargs = dict(kwargs)
        kwargs.update((p.name, v) for p, v in zip(schema.arguments[room:], args[room:]))
        args = args[:room]
    writes = schema.written
    if writes and any(w in kwargs for w in writes):
        # `.out` overloads: the Python API takes every written tensor through `out=`
        kwargs = dict(kwargs)
        outs = tuple(kwargs.pop(w) for w in writes if w in kwargs)
        kwargs["out"] = outs[0] if len(outs) == 1 else outs
    result = fn(*args, **kwargs)
    if isinstance(result, tuple) and type(result) is not tuple:
        result = tuple(result)   # ATen ops return plain tuples, not torch.return_types
    if isinstance(result, tuple) and schema.returns and schema.returns[0].endswith("[]"):
        result = list(result)    # `-> Tensor[]` (split, unbind, chunk) is a Python list
    return result


_ROOM = {}


def _positional_room(fn):
    """How many arguments `fn` takes by position (cached per function)."""
    room = _ROOM.get(fn)
    if room is None:
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = None
        if params is None or any(p.kind == p.VAR_POSITIONAL for p in params):
            room = 1 << 30
        else:
            room = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        _ROOM[fn] = room
    return room


class OpOverloadPacket:
    """All overloads of one operator: `torch.ops.aten.add`. Calling it picks the first
    overload (in schema order) whose schema accepts the arguments, as the dispatcher does."""

    def __init__(self, qualified_name, op_name, schemas, fn):
        self._qualified_op_name = qualified_name
        self.__name__ = op_name
        self.__module__ = "torchish._ops." + qualified_name.split("::")[0]
        self._fn = fn
        self._dir = []
        self._overloads = {}
        for text in schemas:
            self._add(text, fn if routed(text) else _Refused(text))

    def _add(self, text, fn):
        schema = FunctionSchema(text)
        key = schema.overload_name or "default"
        if key not in self._overloads:
            self._dir.append(key)
        self._overloads[key] = OpOverload(self, key, schema, fn)
        return self._overloads[key]

    @property
    def op(self):
        return self

    @property
    def _schemas(self):
        return {k: o._schema for k, o in self._overloads.items()}

    def overloads(self):
        return list(self._dir)

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._qualified_op_name.replace('::', '.')}')>"

    def __str__(self):
        return self._qualified_op_name.replace("::", ".")

    def __hash__(self):
        return id(self)

    def __getattr__(self, key):
        if key.startswith("__") and key.endswith("__"):
            raise AttributeError(key)
        try:
            return vars(self)["_overloads"][key]
        except KeyError:
            raise AttributeError(f"The underlying op of '{self}' has no overload name "
                                 f"'{key}'") from None

    def __iter__(self):
        return iter(self._dir)

    def __call__(self, /, *args, **kwargs):
        errors, refused = [], None
        for key in self._dir:
            ov = self._overloads[key]
            if isinstance(ov._fn, _Refused):   # (tried only once no routed overload fits)
                refused = refused or ov
                continue
            error = ov._schema.bind(args, kwargs)
            if error is None:
                return _call(ov._fn, ov._schema, args, kwargs)
            errors.append(error)
        if refused is not None and not any(_is_tensor(v) for v in (*args, *kwargs.values())):
            # (no tensor: a scalar/list/str overload of PyTorch's would take the call, as
            # `aten.add(1, 2)` runs add.int; the schema's checks cannot tell which)
            for ov in (self._overloads[k] for k in self._dir):
                if isinstance(ov._fn, _Refused) and ov._schema.bind(args, kwargs) is None:
                    ov._fn()
        if len(errors) == 1:
            raise RuntimeError(errors[0])
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                           "schema:\n" + "".join(e + "\n\n" for e in errors))

    def __deepcopy__(self, memo=None):
        return self

    def __reduce__(self):
        return (_lookup, (*self._qualified_op_name.split("::"), None))


def routed(text):
    """Whether torchish runs the ATen overload of schema `text`: those taking or returning
    Tensors (`sum.int(int[] self) -> int`, `add.str` are TorchScript's scalar and list
    helpers) and naming no dimensions (Dimname overloads: torchish has no named tensors)."""
    return "Tensor" in text and "Dimname" not in text


class _Refused:
    """The kernel of an overload torchish lists (PyTorch's full set) but does not run."""

    def __init__(self, text):
        self._name = text.split("::")[1].split("(")[0]

    def __call__(self, *args, **kwargs):
        from .._unsupported import missing
        raise missing("torchish.ops.aten", self._name)


def _is_tensor(value):
    from .._tensor import Tensor
    return isinstance(value, Tensor)


class _OpNamespace(types.ModuleType):
    """`torch.ops.<namespace>`: a module whose attributes are op packets, made on first use."""

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name
        self._dir = []

    def __repr__(self):
        return f"<module '{self.__name__}' from 'torch.ops'>"

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, op_name):
        packet = _make_packet(self.name, op_name)
        if packet is None and self.name == "aten":
            from .aten_schemas import OTHER
            if op_name in OTHER:   # PyTorch has it; torchish does not route it (yet)
                from .._unsupported import missing
                raise missing("torchish.ops.aten", op_name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        setattr(self, op_name, packet)
        self._dir.append(op_name)
        return packet


def _make_packet(ns, op_name):
    if ns == "aten":
        from .aten_schemas import SCHEMAS
        from .routing import resolve
        schemas = SCHEMAS.get(op_name)
        fn = resolve(op_name) if schemas else None
        if fn is None:
            return None
        return OpOverloadPacket(f"aten::{op_name}", op_name, schemas, fn)
    from . import registry
    return registry.packet(ns, op_name)


class _Ops(types.ModuleType):
    """`torch.ops`: namespaces appear on first access (`torch.ops.aten`, `torch.ops.mylib`)."""

    def __init__(self):
        super().__init__("torch.ops")
        self._dir = []

    def __repr__(self):
        return "<module 'torch.ops' from '_ops.py'>"

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module 'torch.ops' has no attribute '{name}'")
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        self._dir.append(name)
        return namespace

    def load_library(self, path):
        from .._unsupported import missing
        raise missing("torchish.ops", "load_library")

    def import_module(self, module):
        import importlib
        importlib.import_module(module)


ops = _Ops()


def _lookup(ns, name, overload):
    packet = getattr(getattr(ops, ns), name)
    return packet if overload is None else getattr(packet, overload)
