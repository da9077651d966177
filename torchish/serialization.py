"""`torchish.save` / `torchish.load` in PyTorch's checkpoint format, both ways.

Two layers:

* The **format layer** works on NumPy only. In a checkpoint a tensor is a `TensorRecord` (flat
  storage array, storage key, dtype name, offset, size, stride, requires_grad, is_parameter);
  `write_checkpoint` pickles a Python object tree holding records into the zip layout
  `torch.save` writes (miniz's record order and 64-byte data alignment, `data.pkl` with pickle
  protocol 2, persistent ids `('storage', torch.<Type>Storage, key, location, numel)`,
  `data/<key>` little-endian bytes, `byteorder`, `version`, `.data/serialization_id`), and
  `read_checkpoint` reads zip and legacy (non-zip) checkpoints back, by default through a
  restricted unpickler that allows what PyTorch's `weights_only` unpickler allows and refuses
  every other global before anything runs.
* The **Tensor bridge** (`save` / `load`) turns torchish tensors into records while pickling
  (tensors sharing a `_storage` share one storage record) and rebuilds tensors on load: one base
  tensor per storage, every tensor a view of it, so aliasing survives the round trip.

The format layer lives in `torchish/_serialization/`; this module is the bridge and the public
API (`torch.serialization`'s names).
"""
import os
import pickle

import numpy as np

from ._serialization.allowlist import (add_safe_globals, clear_safe_globals, get_safe_globals,
                                       safe_globals)
from ._serialization.format import _ascii, _np_dtype
from ._ops.conj_views import bit_metadata, raw_values, set_bits
from ._storage import root_storage
from ._views import contiguous_strides
from ._serialization.reader import (_unpickle,  # noqa: F401 (tests call it)
                                    get_unsafe_globals_in_checkpoint, read_checkpoint)
from ._serialization.records import (LoadedStorage, RecordBackend, StorageRecord, TensorRecord,
                                     _check_bounds, _Global, _Reduce, _set_obj_state)
from ._serialization.writer import write_checkpoint

__all__ = ["save", "load", "TensorRecord", "LoadedStorage", "write_checkpoint",
           "read_checkpoint", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

# The public classes keep this module's name (their reprs and docs say torchish.serialization).
for _cls in (TensorRecord, LoadedStorage, RecordBackend):
    _cls.__module__ = __name__
del _cls


# ---- the Tensor bridge -----------------------------------------------------------------------
_CPU = "cpu"


def _torchish():
    import torchish
    return torchish


def _parameter_class(T):
    nn = getattr(T, "nn", None)
    return getattr(nn, "Parameter", None)


def _location_tag(device):
    if device.type == "cpu":
        return _CPU
    return f"{device.type}:{device.index or 0}"


_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")


def _sparse(t):
    """A sparse COO tensor as PyTorch pickles it: its indices, values, size, coalescedness."""
    return _Reduce(_REBUILD_SPARSE, (_Reduce(_GET_LAYOUT, ("torch.sparse_coo",)), (
        t._indices(), t._values(), t.shape, t.is_coalesced())))


def _make_converter():
    T = _torchish()
    param_cls = _parameter_class(T)
    cache, keep, flats, root_dtypes = {}, [], {}, {}
    size_fn, device_fn = _Global("torch", "Size"), _Global("torch", "device")

    def record(t):
        state = getattr(t, "__dict__", None) or None
        if t.is_meta:   # no data: saved as its dtype, size and stride
            return TensorRecord(None, None, t.dtype.name, 0, tuple(t.shape), tuple(t.stride()),
                                bool(t.requires_grad), param_cls is not None and
                                isinstance(t, param_cls), "meta", dict(state) if state else None)
        st = t._storage
        root = root_storage(st)
        flat = flats.get(id(st))
        if flat is None:
            flat = flats[id(st)] = np.asarray(st.data).reshape(-1)
            keep.append(st)
        # PyTorch keeps one dtype per storage in a checkpoint: a dtype view (`view(dtype)`) saved
        # next to a tensor of another dtype on the same bytes is refused; one of an empty
        # storage (address 0 in PyTorch) is not checked
        if flat.size:
            first = root_dtypes.setdefault(id(root), t.dtype)
            if first is not t.dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                                   "data as different types")
        key, offset, stride = id(st), t.storage_offset(), tuple(t.stride())
        if root is not st and flat.dtype == t.dtype.np and flat.nbytes == root.nbytes():
            key = id(root)   # separate dtype views of one storage load sharing it again
        # PyTorch writes a conj / neg view's memory (not its values) and its bits as metadata
        metadata = bit_metadata(t) if t._view is not None else None
        if flat.dtype != t.dtype.np:  # a reinterpreting view: save its values on their own
            flat = (raw_values(t) if metadata else np.asarray(t._data)).reshape(-1)
            key, offset = object(), 0
            stride = contiguous_strides(tuple(t.shape))
            keep.append(key)
        state = getattr(t, "__dict__", None) or None
        # a fresh tuple per tensor, as PyTorch's stride(): pickle memoizes a shared (cached)
        # one, and the file would differ from torch.save's
        stride = tuple([*stride])
        return TensorRecord(flat, key, t.dtype.name, offset, tuple(t.shape), stride,
                            bool(t.requires_grad),
                            param_cls is not None and isinstance(t, param_cls),
                            _location_tag(t.device), dict(state) if state else None,
                            metadata)

    def storage_record(st, dtype, typed):
        # keyed by the root storage, as a tensor over it is: one `data/<n>` entry for both
        root = root_storage(st)
        flat = flats.get(id(root))
        if flat is None:
            flat = flats[id(root)] = np.asarray(root.data).reshape(-1)
            keep.append(root)
        return StorageRecord(flat, id(root), dtype, _location_tag(root.device), typed)

    def convert(obj):
        t = type(obj)
        if t is int or t is str or t is float:
            return None
        rep = cache.get(id(obj))
        if rep is not None:
            return rep
        if isinstance(obj, T.Tensor):
            rep = record(obj) if obj.layout is T.strided else _sparse(obj)
        elif isinstance(obj, T.TypedStorage):
            rep = storage_record(obj.untyped(), obj.dtype.name, True)
        elif isinstance(obj, T.UntypedStorage):
            rep = storage_record(obj, "uint8", False)
        elif t is T.dtype:
            return _Global("torch", obj.name)
        elif t is T.Size:
            rep = _Reduce(size_fn, (tuple(obj),))
        elif t is T.device:
            rep = _Reduce(device_fn, (obj.type,) if obj.index is None else
                          (obj.type, obj.index))
        else:
            return None
        cache[id(obj)] = rep
        keep.append(obj)
        return rep
    return convert


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` to `f` (a path or a writable binary file) in PyTorch's checkpoint format.

    Tensors and Parameters anywhere in `obj` become PyTorch tensors in the file (aliasing kept);
    torchish dtypes, `Size` and `device` become their torch counterparts, so `torch.load` reads
    the file with `weights_only=True`.
    """
    if pickle_module is not pickle:
        raise NotImplementedError("torchish.save supports only the standard pickle module")
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    write_checkpoint(obj, f, convert=_make_converter(), pickle_protocol=pickle_protocol,
                     _use_new_zipfile_serialization=_use_new_zipfile_serialization,
                     _disable_byteorder_record=_disable_byteorder_record)


class _TorchishBackend(RecordBackend):
    """Builds torchish objects: one base tensor per storage, each tensor a view of it."""

    def __init__(self, map_location):
        self.T = T = _torchish()
        self.tensor_class = T.Tensor
        self.parameter_class = _parameter_class(T)
        self.map_location = map_location
        self._shells = []

    def wrap(self, storage):
        """A storage's persistent id unpickles, as in torch.load, to a TypedStorage; its
        UntypedStorage is set in `finish`, once the tensors over it are built, to theirs."""
        ts = self.T.TypedStorage.__new__(self.T.TypedStorage)
        ts.dtype = self.dtype(storage.dtype)
        ts._loaded = storage
        self._shells.append(ts)
        return ts

    def unwrap(self, storage):
        return storage._loaded if isinstance(storage, self.T.TypedStorage) else storage

    def finish(self):
        shells, self._shells = self._shells, []
        for ts in shells:
            st = ts.__dict__.pop("_loaded")
            base = next(iter(st._tensors.values()), None)
            if base is None:   # a bare storage no tensor uses: a flat tensor holds it
                base = self._base(st, st.dtype, st.data, (st.data.size,))
            ts._untyped_storage = base.untyped_storage()

    def dtype(self, name):
        d = getattr(self.T, name, None)
        return d if isinstance(d, self.T.dtype) else _Global("torch", name)

    def size(self, sizes=()):
        return self.T.Size(sizes)

    def device(self, type, index=None):
        return self.T.device(type, index)

    def layout(self, name):
        return getattr(self.T, str(name).rpartition(".")[2], name)

    def sparse(self, layout, data):
        if layout is not self.T.sparse_coo:
            raise RuntimeError(f"torchish can't load a {layout} tensor from a checkpoint")
        indices, values, size = data[:3]
        return self.T.sparse_coo_tensor(indices, values, size, check_invariants=False,
                                        is_coalesced=data[3] if len(data) > 3 else None)

    def _target(self, location):
        """Where `map_location` (when not a callable) sends a storage saved at `location`."""
        ml = self.map_location
        if ml is None or callable(ml) and not isinstance(ml, self.T.device):
            return location
        if isinstance(ml, dict):
            return ml.get(location, location)
        return _ascii(ml) if isinstance(ml, (str, bytes)) else str(ml)

    def restore(self, storage):
        ml = self.map_location
        if ml is None or not callable(ml) or isinstance(ml, self.T.device):
            target = self._target(storage.location)
            return storage if target == storage.location else storage.to(target)
        result = ml(storage, storage.location)
        if result is None:
            return storage
        if not isinstance(result, LoadedStorage):
            raise TypeError("map_location callables must return None or the storage they were "
                            f"given (or storage.cpu() / .cuda() / .to()), got {type(result)}")
        return result

    def _device(self, location):
        T = self.T
        dev = T.device(location)
        if dev.type == "cuda":  # torch.serialization._validate_device's checks and words
            cuda = getattr(T, "cuda", None)
            if cuda is not None and not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "torch.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use torch.load with map_location=torch.device('cpu') "
                    "to map your storages to the CPU.")
            count = cuda.device_count() if hasattr(cuda, "device_count") else None
            if count is not None and (dev.index or 0) >= count:
                raise RuntimeError(
                    f"Attempting to deserialize object on CUDA device {dev.index or 0} but "
                    f"torch.cuda.device_count() is {count}. Please use torch.load with "
                    "map_location to map your storages to an existing device.")
        return dev

    def _base(self, storage, dtype, data, shape):
        T = self.T
        if isinstance(self.dtype(dtype), _Global):
            raise TypeError(f"torchish has no dtype torch.{dtype}; can't load this tensor")
        data = data.reshape(shape)
        # legacy storages are zeros until their bytes are read: never let JAX alias them;
        # `tensor` copies where `from_numpy` would share the record's buffer
        base = T.tensor(np.array(data) if storage.pending else data)
        dev = self._device(storage.device)
        if base.device != dev:
            base = base.to(dev)
        storage._tensors[dtype] = base
        return base

    def tensor(self, storage, offset, size, stride, requires_grad, dtype, metadata=None):
        T = self.T
        size, stride = tuple(size), tuple(stride)
        data = storage.data if storage.dtype == dtype else storage.data.view(_np_dtype(dtype))
        _check_bounds(size, stride, offset, data.size)
        base = storage._tensors.get(dtype)
        conj, neg = (bool(metadata.get("conj")), bool(metadata.get("neg"))) if metadata else \
            (False, False)
        # (a tensor with a bit set is not the storage's base: other tensors over it read it plain)
        if base is None and not (conj or neg) and offset == 0 and \
                int(np.prod(size)) == data.size and \
                (stride == contiguous_strides(size) or data.size <= 1):
            t = self._base(storage, dtype, data, size)  # the common case: the tensor owns it
        else:
            if base is None:
                base = self._base(storage, dtype, data, (data.size,))
            with T.no_grad():  # sharing the storage, but nobody's view (as torch.load's)
                t = base.as_strided(size, stride, offset).data
        if conj or neg:   # PyTorch sets the bits on the loaded tensor (not a view of anything)
            set_bits(t, conj=conj, neg=neg)
        T.autograd.graph.increment_version(t)   # (torch.load's tensors come from a `set_`)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def meta(self, dtype, size, stride, requires_grad):
        t = self.T.empty(tuple(size), dtype=self.dtype(dtype), device="meta")
        if tuple(stride) != tuple(t.stride()):
            t = t.as_strided(tuple(size), tuple(stride))
        return t.requires_grad_(bool(requires_grad))

    def parameter(self, data, requires_grad=True):
        return self.parameter_class(data, requires_grad)

    def set_state(self, obj, state):
        return _set_obj_state(obj, state)

    def fill(self, storage):
        for dtype, base in storage._tensors.items():
            values = storage.data if storage.dtype == dtype else \
                storage.data.view(_np_dtype(dtype))
            base._set_data(np.array(values.reshape(tuple(base.shape))))

    def from_cpu(self, data, dtype, device, requires_grad):
        t = data.to(dtype=self.dtype(dtype), device=self._device(self._target(str(device))))
        t.requires_grad_(bool(requires_grad))
        return t

    def find_class(self, module, name):
        import importlib
        parts = ("torchish" + module[len("torch"):]).split(".")
        # the same module path under torchish, else the nearest parent exporting the name
        # (torch.nn.modules.linear.Linear -> torchish.nn.Linear)
        for i in range(len(parts), 0, -1):
            try:
                return getattr(importlib.import_module(".".join(parts[:i])), name)
            except (ImportError, AttributeError):
                continue
        raise pickle.UnpicklingError(f"torchish has no counterpart for {module}.{name}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by `torch.save` or `torchish.save` from a path or binary file.

    `weights_only` defaults to True (as in PyTorch 2.6+): only tensors, containers, numbers,
    strings and the other types PyTorch allows can be loaded, and nothing in the file runs.
    `map_location` is a device / string, a dict from saved to wanted locations, or a callable
    `(storage, location) -> storage | None`.
    """
    true_values = ("1", "y", "yes", "true")
    if os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values:
        weights_only = True
    elif weights_only is None and \
            os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values:
        weights_only = False
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    backend = _TorchishBackend(map_location)
    return read_checkpoint(f, weights_only=weights_only, backend=backend, mmap=bool(mmap),
                           encoding=pickle_load_args.get("encoding", "utf-8"))
