"""The weights-only unpickler: a pickle interpreter that builds data only and refuses every global
outside the allowlist before anything runs (PyTorch's torch/_weights_only_unpickler.py rules)."""
import pickle
import struct
from collections import Counter, OrderedDict

from .allowlist import _BLOCKED_MODULES, _IMPORT_MAPPING, _NAME_MAPPING, _LazyGlobal, _user_globals
from .format import _ascii
from .records import _set_obj_state


class _WeightsOnlyUnpickler:
    """A pickle interpreter that builds data only.

    Globals come from the allowlist (never imported), REDUCE/NEWOBJ call only allowlisted
    callables, BUILD touches only tensors, parameters, OrderedDicts and allowlisted types, and
    APPEND/SETITEM only lists/dicts: PyTorch's rules (torch/_weights_only_unpickler.py). It also
    accepts the pickle protocol 3-5 opcodes that only carry data.
    """

    def __init__(self, file, allowed, persistent_load, encoding="utf-8", backend=None):
        self.read, self.readline = file.read, file.readline
        self.allowed, self.persistent_load = allowed, persistent_load
        self.encoding, self.backend = encoding, backend
        self.user = _user_globals()
        self.callables = {id(v) for v in allowed.values()} | {id(v) for v in self.user.values()}
        self.param_ctor = allowed.get("torch.nn.parameter.Parameter")
        self.memo, self.stack, self.metastack = {}, [], []

    def _global(self, module, name):
        if (module, name) in _NAME_MAPPING:
            module, name = _NAME_MAPPING[(module, name)]
        elif module in _IMPORT_MAPPING:
            module = _IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        if full in self.allowed:
            obj = self.allowed[full]
            if type(obj) is _LazyGlobal:
                obj = obj.fn(obj.name)
                self.callables.add(id(obj))
            return obj
        if full in self.user:
            return self.user[full]
        if full.startswith("builtins"):
            rest = full[len("builtins"):]
            full = rest[1:] if rest.startswith(".") else "builtins" + rest
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{full}])` or the "
            f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function.")

    def pop_mark(self):
        items, self.stack = self.stack, self.metastack.pop()
        return items

    def _allowed_type(self, t):
        return id(t) in self.callables

    def load(self):
        read, ops = self.read, _OPS
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = ops.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]}")
            if op(self) is _STOP:
                return self.stack.pop()


_STOP = object()


def _op_table():
    P = pickle
    u = struct.unpack
    t = {}

    def op(code):
        def deco(fn):
            t[code[0]] = fn
            return fn
        return deco

    t[P.NONE[0]] = lambda s: s.stack.append(None)
    t[P.NEWTRUE[0]] = lambda s: s.stack.append(True)
    t[P.NEWFALSE[0]] = lambda s: s.stack.append(False)
    t[P.EMPTY_TUPLE[0]] = lambda s: s.stack.append(())
    t[P.EMPTY_LIST[0]] = lambda s: s.stack.append([])
    t[P.EMPTY_DICT[0]] = lambda s: s.stack.append({})
    t[P.EMPTY_SET[0]] = lambda s: s.stack.append(set())
    t[P.BININT[0]] = lambda s: s.stack.append(u("<i", s.read(4))[0])
    t[P.BININT1[0]] = lambda s: s.stack.append(s.read(1)[0])
    t[P.BININT2[0]] = lambda s: s.stack.append(u("<H", s.read(2))[0])
    t[P.BINFLOAT[0]] = lambda s: s.stack.append(u(">d", s.read(8))[0])
    t[P.LONG1[0]] = lambda s: s.stack.append(P.decode_long(s.read(s.read(1)[0])))
    t[P.LONG4[0]] = lambda s: s.stack.append(P.decode_long(s.read(u("<i", s.read(4))[0])))
    t[P.BINUNICODE[0]] = lambda s: s.stack.append(
        str(s.read(u("<I", s.read(4))[0]), "utf-8", "surrogatepass"))
    t[P.SHORT_BINUNICODE[0]] = lambda s: s.stack.append(
        str(s.read(s.read(1)[0]), "utf-8", "surrogatepass"))
    t[P.BINUNICODE8[0]] = lambda s: s.stack.append(
        str(s.read(u("<Q", s.read(8))[0]), "utf-8", "surrogatepass"))
    t[P.SHORT_BINBYTES[0]] = lambda s: s.stack.append(bytes(s.read(s.read(1)[0])))
    t[P.BINBYTES[0]] = lambda s: s.stack.append(bytes(s.read(u("<I", s.read(4))[0])))
    t[P.BINBYTES8[0]] = lambda s: s.stack.append(bytes(s.read(u("<Q", s.read(8))[0])))
    t[P.BYTEARRAY8[0]] = lambda s: s.stack.append(bytearray(s.read(u("<Q", s.read(8))[0])))

    def binstring(s, n):
        data = s.read(n)
        s.stack.append(data if s.encoding == "bytes" else data.decode(s.encoding, "strict"))
    t[P.SHORT_BINSTRING[0]] = lambda s: binstring(s, s.read(1)[0])
    t[P.BINSTRING[0]] = lambda s: binstring(s, u("<i", s.read(4))[0])

    def mark(s):
        s.metastack.append(s.stack)
        s.stack = []
    t[P.MARK[0]] = mark

    def from_mark(make):  # pop the marked items *before* choosing the stack to push on
        def f(s):
            items = make(s.pop_mark())
            s.stack.append(items)
        return f
    t[P.TUPLE[0]], t[P.LIST[0]] = from_mark(tuple), from_mark(list)
    t[P.FROZENSET[0]] = from_mark(frozenset)

    def dict_(s):
        items = s.pop_mark()
        s.stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
    t[P.DICT[0]] = dict_

    def tupn(n):
        def f(s):
            s.stack[-n:] = [tuple(s.stack[-n:])]
        return f
    t[P.TUPLE1[0]], t[P.TUPLE2[0]], t[P.TUPLE3[0]] = tupn(1), tupn(2), tupn(3)
    t[P.POP[0]] = lambda s: s.pop_mark() if not s.stack else s.stack.pop()
    t[P.POP_MARK[0]] = lambda s: s.pop_mark()
    t[P.DUP[0]] = lambda s: s.stack.append(s.stack[-1])

    def get(s, i):
        s.stack.append(s.memo[i])

    def put(s, i):
        if i < 0:
            raise ValueError("negative argument")
        s.memo[i] = s.stack[-1]
    t[P.BINGET[0]] = lambda s: get(s, s.read(1)[0])
    t[P.LONG_BINGET[0]] = lambda s: get(s, u("<I", s.read(4))[0])
    t[P.BINPUT[0]] = lambda s: put(s, s.read(1)[0])
    t[P.LONG_BINPUT[0]] = lambda s: put(s, u("<I", s.read(4))[0])
    t[P.MEMOIZE[0]] = lambda s: put(s, len(s.memo))
    t[P.FRAME[0]] = lambda s: s.read(8) and None
    t[P.PROTO[0]] = lambda s: s.read(1) and None
    t[P.STOP[0]] = lambda s: _STOP

    def global_(s):
        module = s.readline()[:-1].decode("utf-8")
        name = s.readline()[:-1].decode("utf-8")
        s.stack.append(s._global(module, name))
    t[P.GLOBAL[0]] = global_

    def stack_global(s):
        name, module = s.stack.pop(), s.stack.pop()
        if type(name) is not str or type(module) is not str:
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        s.stack.append(s._global(module, name))
    t[P.STACK_GLOBAL[0]] = stack_global

    def reduce_(s):
        args = s.stack.pop()
        func = s.stack[-1]
        if not s._allowed_type(func):
            raise pickle.UnpicklingError(
                f"Trying to call reduce for unrecognized function {func}")
        s.stack[-1] = func(*args)
    t[P.REDUCE[0]] = reduce_

    def newobj(s, kwargs=None):
        args = s.stack.pop()
        cls = s.stack.pop()
        b = s.backend
        if cls is s.param_ctor and cls is not None:
            s.stack.append(b.parameter(*args, **(kwargs or {})))
        elif s._allowed_type(cls) and isinstance(cls, type):
            s.stack.append(cls.__new__(cls, *args, **(kwargs or {})))
        else:
            raise pickle.UnpicklingError(
                "Can only create new object for nn.Parameter or classes allowlisted via "
                f"`add_safe_globals` but got {cls}")
    t[P.NEWOBJ[0]] = newobj

    def newobj_ex(s):
        newobj(s, s.stack.pop())
    t[P.NEWOBJ_EX[0]] = newobj_ex

    def build(s):
        state = s.stack.pop()
        inst = s.stack[-1]
        b = s.backend
        if type(inst) is OrderedDict:
            inst.__dict__.update(state)
        elif isinstance(inst, b.tensor_class) or (b.parameter_class is not None and
                                                  isinstance(inst, b.parameter_class)):
            b.set_state(inst, state)
        elif s._allowed_type(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                _set_obj_state(inst, state)
        else:
            raise pickle.UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                f"`add_safe_globals`, but got {type(inst)}")
    t[P.BUILD[0]] = build

    def append(s):
        item = s.stack.pop()
        if type(s.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(s.stack[-1])}")
        s.stack[-1].append(item)
    t[P.APPEND[0]] = append

    def appends(s):
        items = s.pop_mark()
        if type(s.stack[-1]) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(s.stack[-1])}")
        s.stack[-1].extend(items)
    t[P.APPENDS[0]] = appends

    def additems(s):
        items = s.pop_mark()
        if type(s.stack[-1]) is not set:
            raise pickle.UnpicklingError(f"Can only add to sets, but got {type(s.stack[-1])}")
        s.stack[-1].update(items)
    t[P.ADDITEMS[0]] = additems

    def check_target(s, opcode):
        if type(s.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(s.stack[-1])}")

    def setitem(s):
        v, k = s.stack.pop(), s.stack.pop()
        check_target(s, "SETITEM")
        s.stack[-1][k] = v
    t[P.SETITEM[0]] = setitem

    def setitems(s):
        items = s.pop_mark()
        check_target(s, "SETITEMS")
        d = s.stack[-1]
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]
    t[P.SETITEMS[0]] = setitems

    def binpersid(s):
        pid = s.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        s.stack.append(s.persistent_load(pid))
    t[P.BINPERSID[0]] = binpersid
    return t


_OPS = _op_table()
