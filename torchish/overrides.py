"""`torch.overrides`: the `__torch_function__` protocol (tensor subclasses, tensor-likes, modes).

Where a call is routed:
- registry ops (`torchish.add`, `Tensor.add`, `x + y`, `F.relu`): the dispatcher notices an
  operand that is no plain tensor while it collects the operands (`_ops/registry.py`), so the
  plain path pays one type test per tensor;
- public functions written in Python over ops (`torchish.cat`, `F.cross_entropy`): `entry`
  wraps them where they are exported, so they dispatch once, at their entry, as PyTorch's do;
- Tensor methods and properties written in Python (`x[0]`, `x.shape`, `x.tolist()`): a subclass
  that takes part gets routing versions of them when it is defined (`install_methods`), and
  Tensor itself gets them while a TorchFunctionMode is on, so plain tensors never pay for them.

A tensor-like (any object whose type has `__torch_function__`) is noticed by the dispatcher;
the `entry` wrappers look at their arguments only once something has taken part (`ARMED`), so
before that a composite reports the registry op it reaches first.

"Plain" types never dispatch: `Tensor` and the subclasses whose `__torch_function__` is
`_disabled_torch_function_impl` (`nn.Parameter`).
"""
import functools
import inspect

from ._tensor import Tensor

__all__ = ["TorchFunctionMode", "get_default_nowrap_functions", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function"]

# 0: on; 1: subclasses off (DisableTorchFunctionSubclass); 2: all off (DisableTorchFunction)
STATE = [0]
MODES = []          # the active TorchFunctionModes, innermost last
# True once anything could take part (an overriding subclass defined, a mode entered, a
# tensor-like seen): until then `entry` wrappers skip looking at their arguments
ARMED = [False]
PLAIN = {Tensor}    # exact types that never dispatch (see `Tensor.__init_subclass__`)


class _DisabledImpl:
    """`torch._C._disabled_torch_function_impl`: as a class's `__torch_function__`, opts the
    class out of the protocol (its instances behave as plain tensors). A plain callable (no
    method binding), as PyTorch's builtin."""
    __slots__ = ()
    __name__ = __qualname__ = "_disabled_torch_function_impl"

    def __call__(self, func, types, args=(), kwargs=None):
        with DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    def __repr__(self):
        return "<built-in function _disabled_torch_function_impl>"

    def __reduce__(self):
        return "_disabled_torch_function_impl"


_disabled_torch_function_impl = _DisabledImpl()


class _Disable:
    level = 1

    def __init__(self):
        self._saved = []

    def __enter__(self):
        self._saved.append(STATE[0])
        STATE[0] = max(STATE[0], self.level)
        return self

    def __exit__(self, *exc):
        STATE[0] = self._saved.pop()


class DisableTorchFunctionSubclass(_Disable):
    """`torch._C.DisableTorchFunctionSubclass`: inside, subclasses and tensor-likes do not
    dispatch (modes still do)."""
    level = 1


class DisableTorchFunction(_Disable):
    """`torch._C.DisableTorchFunction`: inside, nothing dispatches, modes included."""
    level = 2


def overrides_of(obj):
    """Whether `obj` (a value passed to a torch function) takes part in the protocol."""
    t = type(obj)
    if t in PLAIN:
        return False
    impl = getattr(t, "__torch_function__", None)
    return impl is not None and impl is not _disabled_torch_function_impl


def overloaded(values):
    """The values that take part, one per type, a subclass before its base classes
    (PyTorch's order of trying them); empty when subclasses are switched off."""
    if STATE[0]:
        return []
    out, seen = [], set()
    for v in values:
        t = type(v)
        if t in seen or not overrides_of(v):
            continue
        seen.add(t)
        ARMED[0] = True
        at = len(out)
        for i, o in enumerate(out):
            if issubclass(t, type(o)):
                at = i
                break
        out.insert(at, v)
    return out


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from v
        else:
            yield v


def _arguments(args, kwargs):
    return _flat(args + tuple(kwargs.values()) if kwargs else args)


def dispatch(public, overloaded_args, args, kwargs, name=None, python=False, dunder=False):
    """Call the active mode, then each overloaded argument's `__torch_function__`, until one
    gives something other than NotImplemented. `name`: how PyTorch names `public` in its
    error; `python`: PyTorch raises its Python-level text; `dunder`: an operator returns
    NotImplemented (Python then raises its operator TypeError) instead."""
    types = tuple(type(a) for a in overloaded_args)
    if kwargs is None:
        kwargs = {}
    if MODES and STATE[0] < 2:
        mode = MODES.pop()   # the mode's handler runs with the mode off, as PyTorch's
        try:
            result = mode.__torch_function__(public, types, args, kwargs)
        finally:
            MODES.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded_args:
        result = arg.__torch_function__(public, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if dunder:
        return NotImplemented
    name = name or _name_of(public)
    if python:
        raise TypeError(f"no implementation found for '{name}' on types that implement "
                        f"__torch_function__: {list(types)}")
    tried = "".join(f"  - tensor subclass {t}\n" for t in types)
    if MODES:
        tried = f"  - mode object {MODES[-1]!r}\n" + tried
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                    f"returned NotImplemented:\n\n{tried}\nFor more information, try "
                    "re-running with TORCH_LOGS=not_implemented")


def _name_of(func):
    module = getattr(func, "__module__", None) or "torch"
    if module.startswith("torchish"):
        module = "torch" + module[len("torchish"):]
    return f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', func))}"


def entry(fn, name=None, python=False):
    """`fn`, a public function written in Python over ops, dispatching `__torch_function__`
    once at its entry (with itself as `func`) when an argument takes part or a mode is on;
    its inner ops then run as on plain tensors. The plain path costs one flag test.

    The wrapper is one line compiled as if it stood at the wrapped function's `def` (its
    file, line and name): tracebacks read as PyTorch's, and the code that finds the user's
    frame for a warning's `stacklevel` (by file) or the called function's name (by code name)
    sees no extra frame."""
    if getattr(fn, "_tf_entry", False) or isinstance(fn, type):   # (classes: FloatTensor)
        return fn
    inner = inspect.unwrap(fn)
    code = getattr(inner, "__code__", None)
    short = (name or fn.__name__).rsplit(".", 1)[-1]

    def route(public, args, kwargs):
        if STATE[0] < 2:
            found = overloaded(_arguments(args, kwargs))
            if found or MODES:
                return dispatch(public, found, args, kwargs, name, python)
        return _PASS
    namespace = {"fn": fn, "ARMED": ARMED, "route": route, "_PASS": _PASS}
    src = (f"def {short}(*args, **kwargs): return fn(*args, **kwargs) if not ARMED[0] or "
           f"(r := route({short}, args, kwargs)) is _PASS else r\n")
    exec(compile(src, code.co_filename if code else "<torch_function>", "exec"), namespace)
    public = namespace[short]
    if code is not None:
        public.__code__ = public.__code__.replace(co_firstlineno=code.co_firstlineno)
    functools.update_wrapper(public, fn)
    public._tf_entry = True
    return public


_PASS = object()


# ---- the public API of torch.overrides ------------------------------------------------------

def has_torch_function(relevant_args):
    """Whether calling a torch function with these arguments would dispatch."""
    if STATE[0] >= 2:
        return False
    if MODES:
        return True
    return any(map(overrides_of, relevant_args)) and not STATE[0]


def has_torch_function_unary(obj):
    return has_torch_function((obj,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Dispatch `public_api(*args, **kwargs)` to the mode and the overloaded arguments among
    `relevant_args`, as PyTorch's Python-level functions do after `has_torch_function`."""
    return dispatch(public_api, overloaded(relevant_args), args, kwargs, python=True)


def is_tensor_like(inp):
    """A Tensor, or anything whose type defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions():
    """The functions whose results `Tensor.__torch_function__` returns unconverted."""
    return {Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__}


def is_tensor_method_or_property(func):
    return getattr(func, "__name__", None) == "__get__" or any(
        v is func for v in vars(Tensor).values())


def wrap_torch_function(dispatcher):
    """Decorator: the function dispatches on the arguments `dispatcher` returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


class TorchFunctionMode:
    """A context manager whose `__torch_function__(self, func, types, args, kwargs)` sees
    every torch function called inside it (the innermost mode first; while its handler runs,
    the mode itself is off)."""
    inner = None

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _push_mode(mode):
    ARMED[0] = True
    MODES.append(mode)
    _ENTERED[0] += 1
    if _ENTERED[0] == 1:
        _route_tensor()


def _pop_mode():
    mode = MODES.pop()
    _ENTERED[0] -= 1
    if _ENTERED[0] == 0:
        _unroute_tensor()
    return mode


# modes pushed and not yet popped (`dispatch` takes a mode off only while its handler runs)
_ENTERED = [0]


# While a mode is on, plain tensors' Python-level methods route too (installed on Tensor for
# that time, so that the plain path never pays for them): name -> Tensor's own attribute
_ON_TENSOR = {}
_TENSOR_ROUTED = {}   # name -> its routing version on Tensor (made once)


def _route_tensor():
    _init_routed()
    for name in _ROUTED:
        value = vars(Tensor)[name]
        _ON_TENSOR[name] = value
        routed = _TENSOR_ROUTED.get(name)
        if routed is None or routed[0] is not value:
            routed = _TENSOR_ROUTED[name] = (value, _routed(value, name))
        setattr(Tensor, name, routed[1])


def _unroute_tensor():
    for name, value in _ON_TENSOR.items():
        setattr(Tensor, name, value)
    _ON_TENSOR.clear()


def _get_current_function_mode():
    return MODES[-1] if MODES else None


def _get_current_function_mode_stack():
    return list(MODES)


def _is_torch_function_mode_enabled():
    return bool(MODES) and STATE[0] < 2


# ---- Tensor's default __torch_function__ ----------------------------------------------------

def default_torch_function(cls, func, types, args, kwargs):
    """`Tensor.__torch_function__`: run `func` with subclasses switched off and give its
    Tensor results (also inside tuples and lists) the class `cls`."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        result = func(*args, **(kwargs or {}))
        if cls is Tensor or _no_wrap(func):
            return result
        return _as_class(result, cls)


def _no_wrap(func):
    try:
        return func in _NOWRAP
    except TypeError:   # unhashable
        return False


_NOWRAP = get_default_nowrap_functions()


def _as_class(value, cls):
    if isinstance(value, Tensor):
        return value if isinstance(value, cls) else value.as_subclass(cls)
    if isinstance(value, (tuple, list)):
        items = [_as_class(v, cls) for v in value]
        if hasattr(value, "_fields"):   # a named tuple (torch.return_types)
            return type(value)(*items)
        return type(value)(items)
    return value


# ---- routing versions of Tensor's Python-level methods, for a subclass ----------------------

# not routed: construction, the protocol itself, pickling and torchish internals
_NOT_ROUTED = frozenset({
    "__new__", "__init_subclass__", "__torch_function__", "__module__", "__slots__", "__doc__",
    "__dict__", "__weakref__", "__array_priority__", "__reduce_ex__", "__getstate__",
    "__jax_array__", "__str__", "__iter__", "jax", "as_subclass", "_make_subclass"})


def _routes_itself(fn):
    """A binding generated by the op registry: it dispatches in the dispatcher."""
    from ._ops.registry import routes_itself
    return routes_itself(fn)


def _routed_names():
    names = []
    for name, value in vars(Tensor).items():
        if name in _NOT_ROUTED or (name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(value, property) or (callable(value) and not isinstance(
                value, (type, staticmethod, classmethod)) and not _routes_itself(value)):
            names.append(name)
    return names


_ROUTED = []


# PyTorch's Tensor methods written in Python (torch/_tensor.py): Python's own TypeErrors name
# them `Tensor.<name>()`; the others, C++ methods there, just `<name>()`
_PYTHON_METHODS = frozenset("""
    backward dim_order eig index is_shared istft lstsq lu module_load norm register_hook
    register_post_accumulate_grad_hook reinforce resize resize_as share_memory_ solve split
    stft storage storage_type symeig to_sparse_coo unflatten unique unique_consecutive
    """.split())


def _qualified(name):
    return "Tensor." + name if name in _PYTHON_METHODS or name.startswith("__") else name


def _name_methods(names):
    """Give each routed Tensor method its attribute's name, which is what overrides see as
    `func.__name__` (`Tensor.__getitem__`, not the helper it is bound from); a function bound
    under several names gets a renamed copy for the others."""
    import types
    owners = {}
    for name in names:
        fn = vars(Tensor)[name]
        if not isinstance(fn, types.FunctionType) or fn.__name__ == name:
            continue
        if id(fn) in owners or any(v is fn for k, v in vars(Tensor).items() if k == fn.__name__):
            copy = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__,
                                      fn.__closure__)
            copy.__kwdefaults__, copy.__doc__ = fn.__kwdefaults__, fn.__doc__
            copy.__dict__.update(fn.__dict__)
            copy.__module__, copy.__qualname__ = fn.__module__, _qualified(name)
            setattr(Tensor, name, copy)
        else:
            owners[id(fn)] = name
            fn.__name__, fn.__qualname__ = name, _qualified(name)


def install_methods(cls):
    """Give `cls` (a Tensor subclass taking part in the protocol) routing versions of the
    Tensor methods and properties written in Python that nothing between it and Tensor
    defines."""
    _init_routed()
    for name in _ROUTED:
        owner = next(k for k in cls.__mro__ if name in vars(k))
        if owner is Tensor:
            setattr(cls, name, _routed(_ON_TENSOR.get(name, vars(Tensor)[name]), name))


def _init_routed():
    if not _ROUTED:
        names = _routed_names()
        _name_methods(names)
        _ROUTED.extend(names)


def _routed(value, name):
    if isinstance(value, property):
        return _routed_property(value, name)
    return _routed_method(value, name)


# The method PyTorch passes as `func` for an operator (its own name otherwise): `x + 1` is
# `Tensor.add`, `x += 1` `Tensor.add_`, but `x == 1` is `Tensor.__eq__`.
REPORTED_AS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_",
    "__truediv__": "div", "__itruediv__": "div_", "__div__": "div", "__idiv__": "div_",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_",
    "__pow__": "pow", "__ipow__": "pow_", "__matmul__": "matmul", "__ne__": "ne",
    "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__neg__": "neg",
    "__pos__": "positive", "__abs__": "abs", "__rand__": "bitwise_and",
    "__ror__": "bitwise_or", "__rxor__": "bitwise_xor"}


def _routed_method(original, name):
    """`original` (Tensor's method `name`) dispatching first. The `func` an override gets is
    what `Tensor.<name>` is at that moment: `original`, or while a mode is on this routing
    version, so that calling `func` from a handler dispatches again to what is left (the
    other modes, the subclass) before `original` runs."""
    label = f"torch.Tensor.{name}"
    target = REPORTED_AS.get(name, name)   # (`x @ y` reports Tensor.matmul, as PyTorch)
    dunder = name.startswith("__r") or name in _OPERATORS

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if STATE[0] == 0 or (MODES and STATE[0] < 2):
            found = overloaded(_arguments((self,) + args, kwargs))
            if found or MODES:
                return dispatch(vars(Tensor).get(target, original), found, (self,) + args,
                                kwargs, label, dunder=dunder)
        return original(self, *args, **kwargs)
    method._tf_routed = True
    return method


# operators Python falls back from on NotImplemented (PyTorch turns their TypeError into it)
_OPERATORS = frozenset(f"__{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge"))


def _routed_property(prop, name):
    """`prop` (Tensor's property `name`) dispatching its get/set/delete first, with `func`
    the `__get__` (`__set__`, `__delete__`) of what `Tensor.<name>` is at that moment."""
    label = f"torch.Tensor.{name}"

    def route(kind, args, fallback):
        if STATE[0] == 0 or (MODES and STATE[0] < 2):
            found = overloaded(args)
            if found or MODES:
                func = getattr(vars(Tensor)[name], kind)
                return dispatch(func, found, args, {}, f"{label}.{kind}")
        return fallback(*args)

    def fget(self):
        return route("__get__", (self,), prop.fget)

    def fset(self, value):
        return route("__set__", (self, value), prop.fset)

    def fdel(self):
        return route("__delete__", (self,), prop.fdel)
    routed = property(fget, fset if prop.fset is not None else None,
                      fdel if prop.fdel is not None else None, prop.__doc__)
    if prop.__get__ in _NOWRAP:   # (`x.grad` stays unconverted while a mode is on too)
        _NOWRAP.add(routed.__get__)
    return routed


from . import _C  # noqa: E402,F401  (torch._C.DisableTorchFunctionSubclass & co.)
