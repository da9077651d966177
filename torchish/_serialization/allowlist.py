"""The globals a weights-only load may name: PyTorch's `_get_allowed_globals()` resolved through a
backend, the user's `add_safe_globals` allowlist, and the Python 2 renames torch applies."""
import codecs
import contextlib
from collections import Counter, OrderedDict

from .format import _DTYPES, _STORAGE_DTYPE
from .records import _Global, _StorageType


def _unsupported(what):
    def fn(*args):
        raise RuntimeError(f"torchish can't load {what} from a checkpoint")
    fn.__name__ = fn.__qualname__ = what
    return fn


def _rebuild_functions(b):
    """torch._utils' rebuild functions by full name, building through backend `b`."""
    def dtype_of(d):
        return d if isinstance(d, str) else b.dtype_name(d)

    def v1(storage, offset, size, stride):
        storage = b.unwrap(storage)
        return b.tensor(storage, offset, size, stride, False, storage.dtype)

    def v2(storage, offset, size, stride, requires_grad, backward_hooks, metadata=None):
        storage = b.unwrap(storage)
        return b.tensor(storage, offset, size, stride, requires_grad, storage.dtype,
                        metadata)

    def v3(storage, offset, size, stride, requires_grad, backward_hooks, dtype,
           metadata=None):
        return b.tensor(b.unwrap(storage), offset, size, stride, requires_grad,
                        dtype_of(dtype), metadata)

    def meta(dtype, size, stride, requires_grad):
        return b.meta(dtype_of(dtype), size, stride, requires_grad)

    def param(data, requires_grad, backward_hooks):
        return b.parameter(data, requires_grad)

    def param_state(data, requires_grad, backward_hooks, state):
        return b.set_state(b.parameter(data, requires_grad), state)

    def from_type(func, new_type, args, state):
        ret = func(*args)
        if new_type is not b.tensor_class and not (isinstance(new_type, type) and
                                                   isinstance(ret, new_type)):
            raise RuntimeError(f"torchish can't rebuild a tensor of type {new_type}")
        return b.set_state(ret, state)

    def from_cpu(data, dtype, device, requires_grad):
        return b.from_cpu(data, dtype_of(dtype), device, requires_grad)

    table = {
        "torch._utils._rebuild_tensor": v1, "torch._utils._rebuild_tensor_v2": v2,
        "torch._utils._rebuild_tensor_v3": v3, "torch._utils._rebuild_parameter": param,
        "torch._utils._rebuild_parameter_with_state": param_state,
        "torch._tensor._rebuild_from_type_v2": from_type,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor": from_cpu,
        "torch._utils._rebuild_meta_tensor_no_storage": meta,
    }
    for what in ("_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_nested_tensor",
                 "_rebuild_wrapper_subclass",
                 "_rebuild_device_tensor_from_numpy"):
        table["torch._utils." + what] = _unsupported(what)
    if hasattr(b, "sparse"):   # (torchish tensors: sparse COO ones too)
        table["torch._utils._rebuild_sparse_tensor"] = b.sparse
    return table


_DTYPE_GLOBALS = [n for n in _DTYPES] + [f"uint{i}" for i in range(1, 8)] + \
    [f"int{i}" for i in range(1, 8)]
_QSCHEMES = ["per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
             "per_channel_symmetric", "per_channel_affine_float_qparams"]


def _allowed_globals(backend):
    """PyTorch's `_get_allowed_globals()`, each name resolved to its torchish counterpart."""
    rc = {
        "collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
        "torch.nn.parameter.Parameter": backend.parameter_class or backend.parameter,
        "torch.serialization._get_layout": backend.layout, "torch.Size": backend.size,
        "torch.Tensor": backend.tensor_class, "torch.device": backend.device,
        "_codecs.encode": codecs.encode, "builtins.bytearray": bytearray,
        "builtins.set": set, "builtins.complex": complex,
    }
    for name in _DTYPE_GLOBALS:
        rc["torch." + name] = _LazyGlobal(backend.dtype, name)
    for cls, name in _STORAGE_DTYPE.items():
        rc["torch." + cls] = _StorageType(name)
        if not cls.startswith("Q"):
            rc["torch.cuda." + cls] = _StorageType(name)
    rc["torch.storage.UntypedStorage"] = _StorageType("uint8")
    rc["torch.storage.TypedStorage"] = _StorageType(None)
    for q in _QSCHEMES:
        rc["torch." + q] = _Global("torch", q)
    rc.update(_rebuild_functions(backend))
    return rc


class _LazyGlobal:
    """A dtype global resolved at first use, so files naming dtypes torchish lacks still load
    as long as no tensor needs them."""
    __slots__ = ("fn", "name")

    def __init__(self, fn, name):
        self.fn, self.name = fn, name


# user allowlist, as torch.serialization.add_safe_globals
_safe_globals = set()


def add_safe_globals(safe_globals):
    """Allow these globals (objects, or `(object, "module.name")` pairs) in weights_only loads."""
    _safe_globals.update(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_):
    added = set(globals_) - _safe_globals
    _safe_globals.update(added)
    try:
        yield
    finally:
        _safe_globals.difference_update(added)


def _user_globals():
    rc = {}
    for g in _safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2 or not isinstance(g[1], str):
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got {g!r}")
            rc[g[1]] = g[0]
        else:
            rc[f"{g.__module__}.{g.__qualname__}"] = g
    return rc


_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
# the renames of Python 2 names that torch's weights-only unpickler applies (torch/_utils.py)
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue",
                   "repr": "reprlib", "_abcoll": "collections.abc", "UserDict": "collections",
                   "UserList": "collections", "UserString": "collections", "whichdb": "dbm",
                   "StringIO": "io", "cStringIO": "io"}
_NAME_MAPPING = {("__builtin__", "xrange"): ("builtins", "range"),
                 ("__builtin__", "reduce"): ("functools", "reduce"),
                 ("__builtin__", "intern"): ("sys", "intern"),
                 ("__builtin__", "unichr"): ("builtins", "chr"),
                 ("__builtin__", "unicode"): ("builtins", "str"),
                 ("__builtin__", "long"): ("builtins", "int"),
                 ("__builtin__", "basestring"): ("builtins", "str"),
                 ("exceptions", "StandardError"): ("builtins", "Exception")}
