"""Shared storage and the version counter (the views over a storage: `_views.py`).

JAX arrays are immutable, so aliasing is modelled explicitly. A `Storage` holds the *base*
tensor's whole array; aliases also share a version counter (`Tensor._vc`). A view is a `View`
(`_views.py`): the chain of view steps from the base array plus PyTorch's stride metadata (size,
stride, storage offset), which answers `stride()`, `is_contiguous()`, `view` compatibility and,
for writes into a view, which base elements it covers (a flat index map scattered into the base).

A dtype view (`view(dtype)`, `view_as_real`, `view_as_complex`) reads the same bytes as another
dtype. Its tensor holds a `RetypedStorage`: the root storage's array reinterpreted (bit for bit)
as the new dtype, converted lazily and written back through the root, so every alias sees
every write. When the view has a `_base` of the old dtype, its steps start with a "dtype" step
(the reinterpretation, skipped when the array read already has the new dtype and shape), so the
same steps read the view both from its own storage and from its base's.

What the user gets as a storage (`Tensor.untyped_storage()`, a storage slice) is exactly a
`Storage`: a storage of an internal subclass (NumPy-shared, inference) and a slice are handed
out as a handle (`alias`), a plain Storage reading and writing another's bytes.
"""
import functools
import math
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from ._eager_jit import eager_jit


# Storage epochs: each call a grad-type function transform (torch.func.grad, vjp, jvp, ...)
# makes of its function starts a new one, so an in-place op can tell a tensor created before
# the transform (captured, which PyTorch refuses to mutate) from one made inside it.
EPOCH = [0]
TRANSFORM_EPOCHS = []   # the epoch each active transform started, innermost last


class _ShownAs(type):
    """Classes printed as PyTorch's (every storage class here is its one UntypedStorage)."""
    def __repr__(cls):
        return f"<class 'torch.storage.{cls._shown_as}'>"


class _NoArg:
    """The default of Storage's first argument: `UntypedStorage()`, no size given."""


class Storage(metaclass=_ShownAs):
    """torch.UntypedStorage (exported as it): the base tensor's array, read and written as
    bytes by the public API. Internal code builds one as `Storage(array, device)`; the public
    forms (`()`, `(n)`, `(sequence of ints)`, `device=`) are told apart by the first
    argument's type (an int, a sequence: never an array)."""
    _shown_as = "UntypedStorage"
    # `_layout`, `_physical`: a LaidOutStorage's (unset on other storages). `_of`: set on a
    # handle (see `alias`) alone; `_handle`: the whole-storage handle a storage handed out
    __slots__ = ("data", "device", "epoch", "_layout", "_physical", "_of", "_handle",
                 "__weakref__")

    def __init__(self, data=_NoArg, device=None):
        if type(data) in _PUBLIC_ARGS:
            data, device = _public_storage(data, device)
        self.data = data
        self.device = device
        self.epoch = EPOCH[0]

    def nbytes(self):
        try:
            target, start, stop = self._of
        except AttributeError:
            return self.array.size * self.array.dtype.itemsize
        return (target.nbytes() if stop is None else stop) - start

    # ---- PyTorch's UntypedStorage API: bytes ----------------------------------------------
    size = __len__ = nbytes

    def data_ptr(self):
        """A stable fake address: storages are identified by object identity (a dtype view's
        storage by its root's)."""
        try:
            target, start, _ = self._of
        except AttributeError:
            return id(root_storage(self)) * 64
        return target.data_ptr() + start

    def element_size(self):
        return 1

    def _bytes(self):
        try:
            target, start, stop = self._of
        except AttributeError:
            pass
        else:
            return target._bytes()[start:stop]
        if self.device.type == "meta":
            raise NotImplementedError("Cannot access data pointer of Tensor that doesn't have "
                                      "storage")
        return np.asarray(self.data).reshape(-1).view(np.uint8)

    def _write_bytes(self, raw):
        """Replace the storage's bytes by `raw` (uint8, same count): every alias sees it."""
        try:
            target, start, stop = self._of
        except AttributeError:
            pass
        else:   # (a handle: into the bytes it stands for)
            whole = np.array(target._bytes())
            whole[start:stop] = raw
            return target._write_bytes(whole)
        old = self.data
        value = raw.view(old.dtype).reshape(old.shape)
        self.data = jax.device_put(value, storage_device(self))

    def _index(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self.nbytes())
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            return slice(start, max(start, stop))
        if not isinstance(index, int):
            raise TypeError(f"can't index a torch.UntypedStorage with {type(index).__name__}")
        n = self.nbytes()
        if not -n <= index < n:   # (a negative one is shown counted from the end)
            raise IndexError(f"index {index + n if index < 0 else index} out of range for "
                             f"storage of size {n}")
        return index % n

    def __getitem__(self, index):
        index = self._index(index)
        if isinstance(index, slice):   # the same bytes, as PyTorch's
            try:
                target, start, _ = self._of
            except AttributeError:
                target, start = self, 0
            return alias(target, start + index.start, start + index.stop)
        return int(self._bytes()[index])

    def __setitem__(self, index, value):
        index = self._index(index)
        raw = np.array(self._bytes())
        raw[index] = int(value) & 0xFF   # bytes wrap, as PyTorch's
        self._write_bytes(raw)

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes().tolist()

    def __repr__(self):
        info = f"[torch.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}]"
        if self.device.type == "meta":
            return "...\n" + info
        return " " + "\n ".join(str(b) for b in self.tolist()) + "\n" + info

    __str__ = __repr__

    def copy_(self, src, non_blocking=None):
        if not isinstance(src, Storage):
            src = src.untyped()   # a TypedStorage
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src "
                               f"was {src.nbytes()} bytes")
        self._write_bytes(np.array(src._bytes()))
        return self

    def fill_(self, value):
        self._write_bytes(np.full(self.nbytes(), int(value) & 0xFF, np.uint8))
        return self

    def resize_(self, size):
        """New byte count: kept bytes, zeros after (PyTorch's are uninitialized). The array
        becomes flat, of its dtype where the bytes divide into it, else of bytes."""
        try:
            target, _, stop = self._of
        except AttributeError:
            pass
        else:   # (a slice of another storage's bytes cannot grow)
            if stop is not None:
                raise RuntimeError("Trying to resize storage that is not resizable")
            target.resize_(size)
            return self
        raw = self._bytes()[:size]
        raw = np.concatenate([raw, np.zeros(size - raw.size, np.uint8)])
        old = self.data
        item = old.dtype.itemsize
        value = raw.view(old.dtype) if size % item == 0 else raw
        self.data = jax.device_put(value, storage_device(self))
        if value.dtype == old.dtype and value.size >= old.size:
            # the tensors over it keep their shapes: the old elements at the front
            from ._views import contiguous_strides   # (lazy: _views imports this module)
            reseat_holders(self, ("as_strided", old.shape, contiguous_strides(old.shape), 0))
        return self

    def clone(self):
        if hasattr(self, "_of"):
            return Storage(jnp.asarray(np.array(self._bytes())), self.device)
        return Storage(jnp.array(self.data, copy=True), self.device)

    def cpu(self):
        if self.device.type == "cpu":
            return self
        from ._device import CPU
        return Storage(jnp.asarray(self._bytes()), CPU)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise NotImplementedError("UntypedStorage.type(dtype) is not supported")

    def is_shared(self):
        return resolve_storage(self)[0] in _SHARED

    def share_memory_(self):
        _SHARED.add(resolve_storage(self)[0])   # (one process: its memory is everyone's)
        return self

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def untyped(self):
        return self

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_sparse(self):
        return False

    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, *, dtype=None):
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        item = dtype.itemsize
        if item > 1 and byte_order is None:
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        raw = np.frombuffer(buffer, np.uint8)[offset:]
        if count < 0:
            if raw.size % item:
                raise ValueError(f"buffer size ({raw.size}) must be a multiple of element "
                                 f"size ({item})")
            count = raw.size // item
        raw = raw[:count * item]
        if item > 1 and byte_order != sys.byteorder and byte_order != "native":
            raw = raw.reshape(-1, item)[:, ::-1].reshape(-1)   # to this machine's order
        from ._device import CPU
        return Storage(jnp.asarray(np.array(raw)), CPU)

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """The first `nbytes` bytes of the file (a copy: `shared=True` writes are not
        written back to the file)."""
        with open(filename, "rb") as fh:
            raw = np.frombuffer(fh.read(nbytes), np.uint8)
        if raw.size < nbytes:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: "
                               "Cannot allocate memory (12)")
        from ._device import CPU
        return Storage(jnp.asarray(np.array(raw)), CPU)


Storage.__name__ = Storage.__qualname__ = "UntypedStorage"
UntypedStorage = Storage   # (the name pickle looks the class up by)
_SHARED = weakref.WeakSet()
# What a public constructor's first argument can be (an internal one's is an array)
_PUBLIC_ARGS = frozenset((type, type(None), int, bool, float, str, list, tuple, range, bytes))


def holders_of(storage):
    """The tensors over `storage`, found with `gc.get_referrers`: a heap scan, for the rare
    paths that replace a storage's array by a larger one (resizes)."""
    import gc
    return [t for t in gc.get_referrers(storage)
            if getattr(type(t), "_storage", None) is not None and
            getattr(t, "_storage", None) is storage]


def reseat_holders(storage, first, holders=None):
    """After `storage`'s array was replaced by a larger one, its tensors (`holders`, default
    all) read their old array through the view step `first` before their own steps."""
    from ._views import base_view, extend   # (lazy: _views imports this module)
    for t in holders_of(storage) if holders is None else holders:
        view = extend(base_view(storage.data.shape), first)
        for step in (t._view.steps if t._view is not None else ()):
            view = extend(view, step)
        t._view, t._cache, t._cache_base = view, None, None


def _public_storage(arg, device):
    from ._device import CPU, device as Device
    from ._meta import MetaArray
    if arg is _NoArg:
        arg = 0
    if type(device) is int:   # (two positional arguments)
        raise TypeError(
            f"torch.UntypedStorage() received an invalid combination of arguments - got "
            f"({type(arg).__name__}, int), but expected one of:\n"
            " * (*, int allocator = None, torch.device device = None)\n"
            " * (int size, *, int allocator = None, torch.device device = None)\n"
            " * (object sequence, *, int allocator = None, torch.device device = None)\n")
    if arg is None or type(arg) is float:
        raise RuntimeError("torch.UntypedStorage(): Expected a sequence type, but got "
                           f"{type(arg).__name__}")
    if isinstance(arg, int):
        n = arg
    else:
        items = list(arg)
        for v in items:
            if not isinstance(v, int):
                raise RuntimeError(
                    "torch.UntypedStorage(): tried to construct a storage from a sequence "
                    f"({type(arg).__name__}), but one of the items was of type "
                    f"{type(v).__name__} instead of int")
        n = len(items)
    if device is None:
        device = CPU
    elif not isinstance(device, Device):
        device = Device(device)
    if device.type == "meta":
        return MetaArray((n,), np.dtype(np.uint8)), device
    if isinstance(arg, int):
        data = np.zeros(n, np.uint8)   # (PyTorch's are uninitialized)
    else:
        data = (np.asarray(items, np.int64) & 0xFF).astype(np.uint8)
    from ._device import jax_device
    return jax.device_put(data, jax_device(device)), device


# The slot itself, also as `array`: the array a storage holds, to test its identity, dtype or
# tracing (a LaidOutStorage's in its tensor's order: reading it makes no copy)
_DATA = Storage.array = Storage.__dict__["data"]


class LaidOutStorage(Storage):
    """The storage of a result laid out in a memory order other than row-major (see
    `_memory_layout.lay_out`): `array` holds the result's value as it reads, `_layout` is (the
    permutation to memory order, the view step reading the value back from it). `data`, the
    array in memory order, is made the first time something reads it (bytes, NumPy,
    `as_strided`, a write through another view), then kept while `array` is."""
    __slots__ = ()

    @property
    def data(self):
        physical = self._physical
        if physical is None:
            physical = self._physical = _transpose(self._layout[0])(_DATA.__get__(self))
        return physical

    @data.setter
    def data(self, value):   # an array in memory order: a plain storage from now on
        self.__class__ = Storage
        self._physical = None
        _DATA.__set__(self, value)

    def set_array(self, value):
        """Replace the value (a write to the whole laid-out tensor: no copy in memory order)."""
        _DATA.__set__(self, value)
        self._physical = None


def lay_out_storage(storage, perm, step):
    """Turn `storage`, a plain one holding its value row-major, into a LaidOutStorage."""
    storage.__class__ = LaidOutStorage
    storage._layout = (perm, step)
    storage._physical = None


@functools.lru_cache(maxsize=None)
def _transpose(perm):
    return eager_jit(lambda a: jnp.transpose(a, perm))


class InferenceStorage(Storage):
    """A storage allocated under `inference_mode`: PyTorch calls every tensor over it (views
    included) an inference tensor, while a view made in that mode of an older tensor is not one."""
    __slots__ = ()


class RetypedStorage(Storage):
    """The bytes of `root` (a plain Storage) as `dtype`, shaped `shape`: converted from the
    root's array when it changed, and written back into it."""
    __slots__ = ("root", "dtype", "shape", "_seen", "_value")

    def __init__(self, root, dtype, shape):
        self.root = root
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self._seen = self._value = None

    @property
    def device(self):
        return self.root.device

    @property
    def data(self):
        src = self.root.data
        if src is not self._seen:
            self._value = reinterpret(src, self.dtype, self.shape)
            self._seen = src
        return self._value

    @data.setter
    def data(self, value):
        root = self.root
        old = root.data
        root.data = reinterpret(value, old.dtype, old.shape, old)
        self._seen, self._value = root.data, value

    array = data


class SharedStorage(Storage):
    """A CPU storage whose elements live in a writable NumPy array that the user holds
    (`Tensor.numpy()`): PyTorch's CPU tensors share memory with NumPy, so a write through
    either side is seen by the other. A read copies the array into a new JAX array (a copy:
    XLA must never alias, let alone donate, memory the user writes; new whenever the array's
    bytes changed since the last read: views cache what they read by the identity of their
    storage's data); writes copy into the array. Once the user's arrays are gone the storage
    turns back into a plain one (see `numpy_of`)."""
    __slots__ = ()

    @property
    def data(self):
        value = _DATA.__get__(self)
        if type(value) is np.ndarray:
            entry = _HOSTS.get(self)
            last = entry[2] if entry is not None else None
            # comparing bytes costs a fraction of a transfer (every metadata read lands here)
            if last is not None and _same_bytes(value, last[0]):
                return last[1]
            array = jax.device_put(np.copy(value), storage_device(self))
            if entry is not None:
                entry[2] = (np.copy(value), array)
            return array
        return value

    @data.setter
    def data(self, value):
        entry = _HOSTS.get(self)
        if entry is None:   # a copy of a shared storage (copy.copy): plain from now on
            self.__class__ = Storage
        elif isinstance(value, jax.core.Tracer):   # while torchish.compile traces
            _DATA.__set__(self, value)
            return
        else:
            np.copyto(entry[0], np.asarray(value).reshape(entry[0].shape), casting="no")
            value = entry[0]
            entry[2] = None
        _DATA.__set__(self, value)

    array = data


# SharedStorage -> [its NumPy array, how many arrays handed out are alive, (the bytes last
# read, the JAX array made of them) or None]; weak: a storage over the user's own array
# (`share_host`) stays shared until the storage itself is gone
_HOSTS = weakref.WeakKeyDictionary()


def _same_bytes(a, b):
    try:
        return np.array_equal(a.view(np.uint8), b.view(np.uint8))
    except ValueError:   # (a view NumPy cannot reinterpret: read it again)
        return False


def _array_dropped(storage):
    entry = _HOSTS[storage]
    entry[1] -= 1
    if entry[1] == 0:   # back to a plain storage of a JAX array (no cost on later reads)
        del _HOSTS[storage]
        storage.__class__ = Storage
        _DATA.__set__(storage, jax.device_put(entry[0], storage_device(storage)))


def share_host(storage, host):
    """Make the plain CPU `storage` keep its elements in the user's writable NumPy array `host`
    (`torch.from_numpy`: PyTorch's tensor and the array are one memory) for as long as the
    storage lives."""
    storage.__class__ = SharedStorage
    _HOSTS[storage] = [host, 1, None]   # (never dropped to 0: the memory is the user's)
    _DATA.__set__(storage, host)
    return storage


def numpy_of(tensor):
    """`tensor.numpy()` sharing memory with `tensor`'s storage (a CPU Storage of the
    tensor's own dtype), or None where it cannot (a dtype view, an inference tensor); PyTorch's
    error for a conj or neg view (its memory is not its value)."""
    view = tensor._view
    if view is not None and view.bits():
        kind, fix = ("conjugate", "conj") if view.bits() & 1 else ("negative", "neg")
        raise RuntimeError(f"Can't call numpy() on Tensor that has {kind} bit set. Use "
                           f"tensor.resolve_{fix}().numpy() instead.")
    storage = tensor._storage
    if type(storage) is LaidOutStorage:   # (memory order from now on)
        storage.data = storage.data
    if type(storage) is Storage:
        host = np.array(storage.data)   # writable, C-contiguous: the storage's layout
        if host.dtype != tensor.dtype.np:
            return None
        storage.__class__ = SharedStorage
        _HOSTS[storage] = [host, 0, None]
        _DATA.__set__(storage, host)
    elif type(storage) is not SharedStorage:
        return None
    entry = _HOSTS[storage]
    host = entry[0]
    item = host.itemsize
    out = np.lib.stride_tricks.as_strided(
        host.reshape(-1)[tensor.storage_offset():], shape=tuple(tensor.shape),
        strides=tuple(st * item for st in tensor.stride()))
    entry[1] += 1
    weakref.finalize(out, _array_dropped, storage)
    return out


def storage_device(storage):
    from ._device import jax_device
    return jax_device(storage.device)


def root_storage(storage):
    """The storage holding `storage`'s bytes: a dtype view's root, a whole-storage handle's
    storage; a slice handle's bytes alone, as a new storage (a copy: what a checkpoint saves
    of it; `resolve_storage` gives the shared one)."""
    kind = type(storage)
    if kind is RetypedStorage:
        return storage.root
    if kind is Storage:
        try:
            target, _, stop = storage._of
        except AttributeError:
            return storage
        if stop is None:
            return target
        return Storage(jnp.asarray(np.array(storage._bytes())), storage.device)
    return storage


def resolve_storage(storage):
    """(the storage an internal tensor may hold, the byte offset into it) of a public
    storage: a handle's target and start (see `alias`), else `storage` itself and 0."""
    if type(storage) is Storage:
        try:
            target, start, _ = storage._of
        except AttributeError:
            return storage, 0
        return target, start
    return storage, 0


def alias(target, start=0, stop=None):
    """A plain torch.UntypedStorage standing for the bytes `start:stop` of `target` (None: to
    its end, whatever its size): a handle reading and writing them through `target`, so that
    the user's storage object is exactly of PyTorch's class whatever subclass `target` is.
    Its `data` is unset: internal code reads `root_storage(handle)` instead."""
    handle = Storage.__new__(Storage)
    handle.device, handle.epoch = target.device, target.epoch
    handle._of = (target, start, stop)
    return handle


def public_storage(storage):
    """What `Tensor.untyped_storage()` hands out for a tensor's storage: a plain one as is, a
    laid-out one turned plain (its bytes are what the user asks for: memory order from now
    on), any other (NumPy-shared, inference, a dtype view's root) through its one handle."""
    kind = type(storage)
    if kind is RetypedStorage:
        storage = storage.root
        kind = type(storage)
    if kind is Storage:
        return storage
    if kind is LaidOutStorage:
        storage.data = storage.data
        return storage
    try:
        return storage._handle
    except AttributeError:
        handle = storage._handle = alias(storage)
        return handle


_CARRIER = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64), np.dtype(np.bool_): np.dtype(np.uint8)}


def _reinterpret(x, dtype, shape, like):
    # XLA bitcasts neither complex nor bool: complex travels as (real, imag) pairs of its real
    # dtype, bool as uint8; a shorter source is completed from `like` (the old array)
    if jnp.iscomplexobj(x):
        x = jnp.stack([jnp.real(x), jnp.imag(x)], -1)
    elif x.dtype == np.bool_:
        x = x.astype(np.uint8)
    flat = x.reshape(-1)
    carrier = _CARRIER.get(dtype, dtype)
    src, dst = flat.dtype.itemsize, carrier.itemsize
    if flat.dtype == carrier:
        y = flat
    elif src >= dst:
        y = jax.lax.bitcast_convert_type(flat, carrier).reshape(-1)
    else:
        r = dst // src
        m = flat.shape[0] // r
        y = jax.lax.bitcast_convert_type(flat[:m * r].reshape(m, r), carrier)
    if dtype.kind == "c":
        m = y.shape[0] // 2
        y = jax.lax.complex(y[0:2 * m:2], y[1:2 * m:2])
    elif dtype == np.bool_:
        y = y != 0
    need = math.prod(shape)
    if y.shape[0] > need:
        y = y[:need]
    elif y.shape[0] < need:
        tail = like.reshape(-1)[y.shape[0]:] if like is not None else \
            jnp.zeros(need - y.shape[0], dtype)
        y = jnp.concatenate([y, tail])
    return y.reshape(shape)


@functools.lru_cache(maxsize=1024)
def _compiled_reinterpret(dtype, shape, with_like):
    if with_like:
        return eager_jit(lambda x, like: _reinterpret(x, dtype, shape, like))
    return eager_jit(lambda x: _reinterpret(x, dtype, shape, None))


def reinterpret(x, dtype, shape, like=None):
    """`x`'s bytes (row-major) as an array of `dtype` shaped `shape`."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if isinstance(x, jax.core.Tracer) or isinstance(like, jax.core.Tracer):
        return _reinterpret(x, dtype, shape, like)
    if like is None:
        return _compiled_reinterpret(dtype, shape, False)(x)
    return _compiled_reinterpret(dtype, shape, True)(x, like)


def _sole_holder_refs():
    s = Storage(object(), None)
    return sys.getrefcount(s.data)


# References that `sys.getrefcount(storage.data)` counts when the Storage alone holds its array.
_SOLE_HOLDER_REFS = _sole_holder_refs()


def held_elsewhere(storage, known=0):
    """Whether anything but `storage` (and `known` references the caller holds) refers to its
    array: a user's `t.jax()`, another Storage on the same array, a value saved for backward.
    Donating such an array to XLA would free it under its other holder."""
    return sys.getrefcount(storage.data) > _SOLE_HOLDER_REFS + known


# torch.TypedStorage lives with the other public classes (after Storage: it builds on it)
from . import _storage_classes  # noqa: E402
TypedStorage = _storage_classes.TypedStorage
