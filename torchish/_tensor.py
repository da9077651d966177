"""`Tensor` and `Size`.

A Tensor is a handle on a `Storage` (the shared base array and version counter) plus, for views,
a `View` describing how it reads that storage. It carries the autograd fields (`requires_grad`,
`grad`, `grad_fn`). It has almost no math of its own: op methods are bound from the op registry
(`_ops/registry.py`); what is here is the part of the API that is about the tensor object itself.
Its conversion to Python / NumPy (`numpy`, `item`, `repr`, pickling, ...) is in
`_tensor_conversion.py`; the strides and memory layout of copies in `_memory_layout.py`; the
helpers its methods share with ops that need no Tensor class (dim wrapping, contiguity tests,
once-only warnings) in `_tensor_checks.py`. Here besides the class: making Tensor objects
(`_new_tensor`, `_wrap`, `_alias`, `_reclass`, unpickling) and inference tensors' versions.
"""
import collections
import math
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as dt
from ._device import CPU, from_jax_device, with_index
from ._layout import strided
from ._meta import META, MetaArray
from ._reverse_constant import REVERSE, reverse_constant
from ._storage import InferenceStorage, LaidOutStorage, Storage, TypedStorage, public_storage
from ._tensor_checks import (_channels_last_contiguous, _compressed_unsupported, _metadata_dim,
                             _warn_transpose, _warn_typed_storage, requires_grad_of)
from ._views import base_view, contiguous_strides, read_through, write_view
from .autograd import grad_mode

__all__ = ["Tensor", "Size", "memory_format", "contiguous_format", "preserve_format",
           "channels_last", "channels_last_3d"]


class Size(tuple):
    """`torch.Size`: a tuple that prints as `torch.Size([2, 3])`."""
    __slots__ = ()
    __getattr__ = dt.missing_attribute("torch.Size")
    __setattr__ = dt.read_only("torch.Size")

    def __new__(cls, sizes=()):
        return super().__new__(cls, (int(s) for s in sizes))

    def __repr__(self):
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def __getitem__(self, item):
        r = super().__getitem__(item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self):
        return math.prod(self)

    def __reduce__(self):
        return (Size, (tuple(self),))


class memory_format:
    """`torch.memory_format`: how a copy lays out its elements (`torch.preserve_format`...)."""
    __slots__ = ("name",)
    __getattr__ = dt.missing_attribute("torch.memory_format")
    __setattr__ = dt.read_only("torch.memory_format")

    def __init__(self, name):
        object.__setattr__(self, "name", name)

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name  # pickled by reference to the module-level singleton


_MemoryFormat = memory_format  # the class, under a name Tensor's methods don't shadow
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


_NON_LEAF_MSG = "you can only change requires_grad flags of leaf variables."
_NON_LEAF_HINT = (" If you want to use a computed variable in a subgraph that doesn't require "
                  "differentiation use var_no_grad = var.detach().")


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _new_tensor(cls=None):
    t = object.__new__(cls or Tensor)
    t._view = None
    t._cache = None
    t._cache_base = None
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._output_nr = 0
    t._base = None
    t._acc = None
    t._hooks = None
    t._post_acc_hooks = None
    t._retains_grad = False
    t._stopgrad = False
    t._vc = None
    t._view_vc = None  # for views: the version at which their grad_fn was made
    t._creation = None
    return t


def _bool_argument(fn, name, args, kwargs, default=True):
    """The one bool argument of a method taking `name` (PyTorch's parser: a bool, nothing
    else, positionally or by name)."""
    if len(args) > 1:
        raise TypeError(f"{fn}() takes from 0 to 1 positional arguments but {len(args)} were "
                        "given")
    for key in kwargs:
        if key != name or args:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{key}'" if key != name
                            else f"{fn}() got multiple values for argument '{name}'")
    value = args[0] if args else kwargs.get(name, default)
    if type(value) is not bool:
        where = " (position 1)" if args else ""
        kind = type(value)
        kind = kind.__name__ if kind.__module__ in ("builtins", "torchish") else \
            f"{kind.__module__.split('.')[0]}.{kind.__name__}"
        kind = "Tensor" if isinstance(value, Tensor) else kind
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not {kind}")
    return value


def _wrap(array, device=None, requires_grad=False):
    """A new leaf tensor owning `array` (a jax.Array or tracer)."""
    t = _new_tensor()
    device = _array_device(array) if device is None else with_index(device)
    t._storage = (InferenceStorage if grad_mode._INFERENCE[0] else Storage)(array, device)
    t._vc = [0]
    t._requires_grad = requires_grad
    return t


def _array_device(array):
    if isinstance(array, jax.core.Tracer):
        return CPU
    if isinstance(array, MetaArray):   # (a meta tensor's data)
        return META
    try:
        return from_jax_device(next(iter(array.devices())))
    except (AttributeError, StopIteration):
        return CPU


def _alias(src, view=None, cls=None):
    """A tensor sharing `src`'s storage (and version counter), optionally as a further view."""
    t = _new_tensor(cls)
    t._storage = src._storage
    t._vc = src._vc  # the version counter is shared by every alias (except `.data`)
    t._view = src._view if view is None else view
    t._cache, t._cache_base = src._cache, src._cache_base
    # only a new view step makes `t` a view of `src`: an alias of a tensor that is laid out
    # over its own storage (a clone of a transposed tensor) is, like it, nobody's view
    t._base = src._base if src._base is not None else (src if view is not None else None)
    if t._base is not None and type(src._storage) is InferenceStorage:
        t._base = None   # (PyTorch tracks no views of inference tensors: the memory is shared)
    return t


_INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _own_version(t):
    """`t`, an alias made by detach() or `.data`, over an inference tensor outside
    inference_mode: a counter of its own (PyTorch's in-place ops on it then work)."""
    if type(t._storage) is InferenceStorage and not grad_mode._INFERENCE[0]:
        t._vc = [0]
        t.__dict__["_own_vc"] = True


def _check_versioned(t):
    """PyTorch refuses an in-place change of an inference tensor outside inference_mode when it
    bumps the version, so after the change is made: call this after the write."""
    if t._unversioned() and not grad_mode._INFERENCE[0]:
        raise RuntimeError(_INFERENCE_INPLACE_MSG)


_WARNED_FLOAT = [False]


def _detached_write(storage, view, value):
    """`value` as written through a detached alias (`detach()`, `.data`) of traced data: the
    new values, but the derivative the written elements had (PyTorch changes the data, not the
    source's autograd history; a plain write would store the alias's stop-gradient values and
    drop the source's tangent/cotangent path, e.g. Gamma.rsample's `detach().clamp_`)."""
    if not jnp.issubdtype(value.dtype, jnp.inexact):
        return value   # (no derivative to keep)
    if not (isinstance(value, jax.core.Tracer) or isinstance(storage.array, jax.core.Tracer)):
        return value   # (eager: nothing to keep)
    from ._ops.inplace import _with_gradient_of
    old = storage.data if view is None else read_through(storage, view)
    return _with_gradient_of(value, old)


class Tensor:
    __slots__ = ("_storage", "_view", "_cache", "_cache_base", "_requires_grad", "_grad",
                 "_grad_fn", "_output_nr", "_base", "_acc", "_hooks", "_post_acc_hooks",
                 "_retains_grad", "_stopgrad", "_vc", "_view_vc", "_creation", "__dict__",
                 "__weakref__")

    __array_priority__ = 1000  # numpy scalars on the left defer to our reflected operators
    # `_creation`: a view's creation meta when not the default, else None (see
    # `_ops.dispatch._view_creation`); in-place on such views is an error. A slot, not an
    # attribute: what a tensor's __dict__ holds is saved and copied with it

    def __new__(cls, *args, **kwargs):
        # Legacy constructor: torch.Tensor(2, 3) (uninitialised) or torch.Tensor([1, 2]).
        from ._ops.creation import empty
        from ._ops.creation_data import tensor as _tensor_fn
        if len(args) == 1 and not isinstance(args[0], int):
            t = _tensor_fn(args[0], dtype=dt.get_default_dtype())
        else:
            t = empty(*(args or (0,)), dtype=dt.get_default_dtype(), device=kwargs.get("device"))
        return t if cls is Tensor else _reclass(t, cls)   # `super().__new__(cls, ...)`

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from . import overrides
        if getattr(cls, "__torch_function__", None) is overrides._disabled_torch_function_impl:
            overrides.PLAIN.add(cls)     # (nn.Parameter): its instances never dispatch
        else:
            overrides.PLAIN.discard(cls)
            overrides.ARMED[0] = True
            overrides.install_methods(cls)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """PyTorch's default: `func` runs with subclasses switched off, and its Tensor
        results become instances of `cls` (in-place results are the same object)."""
        from .overrides import default_torch_function
        return default_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls):
        """A `cls` instance aliasing this tensor: same storage and version counter, attached
        to the autograd graph (an AliasBackward0 node, as PyTorch's)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(_NOT_A_SUBCLASS)
        from ._ops.shape import _view_steps_op
        from .overrides import DisableTorchFunctionSubclass
        with DisableTorchFunctionSubclass():
            return _reclass(_view_steps_op(self, ()), cls)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, dispatch_strides=False,
                       dispatch_device=False, device_for_backend_keys=None):
        """A `cls` instance sharing `data`'s storage, detached from its graph (a leaf),
        requiring grad as `require_grad` says (how nn.Parameter is made)."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(_NOT_A_SUBCLASS)
        if not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, "
                            f"not {type(data).__name__}")
        if data.layout is not strided:   # (a sparse tensor's storage holds its values alone)
            from ._unsupported import UnsupportedError
            raise UnsupportedError(f"torchish: Tensor._make_subclass of a {data.layout} tensor "
                                   "is not supported yet")
        t = _alias(data, cls=cls)
        t._base = data._base
        if require_grad:
            t.requires_grad_(True)
        return t

    # ---- data access ---------------------------------------------------------------------
    @property
    def _data(self):
        view = self._view
        storage = self._storage
        if view is None:
            data = storage.data
        elif self._cache_base is storage.array:
            data = self._cache
        elif storage.device.type == "meta":   # no data to read: the view's shape and dtype
            data = MetaArray(tuple(view.size), storage.data.dtype)
        else:
            data = read_through(storage, view)
            if not isinstance(data, jax.core.Tracer) or isinstance(storage.array,
                                                                   jax.core.Tracer):
                self._cache, self._cache_base = data, storage.array   # no tracer outlives its trace
        if self._stopgrad and isinstance(data, jax.core.Tracer):
            # (REVERSE: a no_grad result inside a transform, seen through by forward mode)
            data = reverse_constant(data) if self._stopgrad is REVERSE \
                else jax.lax.stop_gradient(data)
        return data

    def _set_data(self, value):
        """Write `value` into this tensor's elements in place (through every alias)."""
        storage = self._storage
        if storage.device.type == "meta":   # no data to write
            self._vc[0] += 1
            return
        if not isinstance(value, (jax.Array, jax.core.Tracer)):
            value = jnp.asarray(value)
        if value.dtype != storage.array.dtype:
            value = value.astype(storage.array.dtype)
        shape = self.shape
        if value.shape != shape:
            value = jnp.broadcast_to(value, shape)
        view = self._view
        if self._stopgrad is True:   # (detach()/.data: rare, the common write pays one test)
            value = _detached_write(storage, view, value)
        if view is None:
            storage.data = value
        elif type(storage) is LaidOutStorage and view.steps == storage._layout[1:]:
            storage.set_array(value)   # the whole laid-out value: memory order made on demand
            self._cache, self._cache_base = value, value
        elif len(view.steps) == 1 and view.steps[0][0] == "permute":
            # a permutation covers the whole storage: write it back transposed, not scattered
            storage.data = jnp.transpose(value, tuple(int(i) for i in np.argsort(
                view.steps[0][1])))
            self._cache, self._cache_base = value, storage.data
        else:
            storage.data = write_view(storage.data, self._view, value)
            self._cache, self._cache_base = value, storage.data
        if not (grad_mode._INFERENCE[0] and type(storage) is InferenceStorage):
            self._vc[0] += 1   # (PyTorch's inference tensors skip the bump inside the mode)

    def jax(self):
        """The tensor's value as a JAX array (no copy)."""
        return self._data

    # ---- metadata --------------------------------------------------------------------------
    @property
    def shape(self):
        view = self._view
        if view is None:  # a JAX shape holds Python ints already: skip Size's conversion
            return tuple.__new__(Size, self._storage.data.shape)
        return Size(view.size)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        if dim.__class__ is not int and (isinstance(dim, bool) or
                                         not hasattr(type(dim), "__index__")):
            from ._ops.errors import _keywords_of_call, type_name
            where = "" if "dim" in _keywords_of_call(sys._getframe(1)) else " (position 1)"
            raise TypeError(f"size(): argument 'dim'{where} must be int, not "
                            f"{type_name(type(dim))}")
        return self.shape[_metadata_dim(dim, self.ndim)]

    @property
    def dtype(self):
        return dt._BY_NP[self._storage.array.dtype]

    @property
    def device(self):
        return self._storage.device

    @property
    def ndim(self):
        view = self._view
        return len(view.size) if view is not None else self._storage.data.ndim

    def dim(self):
        return self.ndim

    ndimension = dim

    def numel(self):
        return math.prod(self.shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def stride(self, dim=None):
        view = self._view or base_view(self._storage.data.shape)
        if dim is None:
            return tuple(view.stride)
        return view.stride[_metadata_dim(dim, self.ndim)]

    def storage_offset(self):
        return self._view.offset if self._view is not None else 0

    def is_contiguous(self, memory_format=None):
        if memory_format is channels_last or memory_format is channels_last_3d:
            return _channels_last_contiguous(tuple(self.shape), self.stride(),
                                             4 if memory_format is channels_last else 5)
        if memory_format is not None and not isinstance(memory_format, _MemoryFormat):
            raise TypeError(f"is_contiguous(): argument 'memory_format' must be "
                            f"torch.memory_format, not {type(memory_format).__name__}")
        view = self._view
        if view is None or 0 in view.size:
            return True
        expected = contiguous_strides(view.size)
        return all(s == e or n == 1 for s, e, n in zip(view.stride, expected, view.size))

    def data_ptr(self):
        # A stable fake address: storages are identified by object identity (meta: none).
        if self._storage.device.type == "meta":
            return 0
        return self._storage.data_ptr() + self.storage_offset() * self.dtype.itemsize

    def untyped_storage(self):
        storage = self._storage
        if type(storage) is Storage:
            return storage
        # exactly a torch.UntypedStorage, as in PyTorch (a dtype view's: its root's)
        return public_storage(storage)

    def storage(self):
        _warn_typed_storage()
        return TypedStorage(self.untyped_storage(), self.dtype)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    is_sparse = is_sparse_csr = is_quantized = is_nested = is_mkldnn = False

    @property
    def is_meta(self):
        return self._storage.device.type == "meta"

    is_mps = is_xpu = is_ipu = is_xla = is_mtia = is_maia = is_vulkan = False
    layout = strided

    def to_dense(self, dtype=None, *, masked_grad=None):
        return self if dtype is None else self.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        from ._sparse_ops import dense_to_sparse   # (sparse support loads on first use)
        return dense_to_sparse(self, sparse_dim, layout=layout)

    def to_sparse_coo(self):
        return self.to_sparse()

    def sparse_mask(self, mask):
        from ._sparse_ops import sparse_mask   # (sparse support loads on first use)
        return sparse_mask(self, mask)

    def to_sparse_csr(self, dense_dim=None):
        raise _compressed_unsupported("to_sparse_csr")

    def to_sparse_csc(self, dense_dim=None):
        raise _compressed_unsupported("to_sparse_csc")

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        raise _compressed_unsupported("to_sparse_bsr")

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        raise _compressed_unsupported("to_sparse_bsc")

    def is_nonzero(self):
        from ._functions import is_nonzero
        return is_nonzero(self)

    def adjoint(self):
        return self.mH   # a view (conj of a real tensor is the tensor itself)

    @property
    def output_nr(self):
        return self._output_nr

    def share_memory_(self):
        # JAX arrays pickle by value, so there is nothing to move; remembered for is_shared
        self._shared = True
        return self

    def is_shared(self):
        return getattr(self, "_shared", False)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_inference(self):
        return type(self._storage) is InferenceStorage

    def _unversioned(self):
        # an inference tensor has no version counter, except one detached (or `.data`) outside
        # inference_mode: PyTorch gives that one its own
        return type(self._storage) is InferenceStorage and "_own_vc" not in self.__dict__

    def is_complex(self):
        return self.dtype.is_complex

    def is_signed(self):
        return self.dtype.is_signed

    def get_device(self):
        return -1 if self.device.type in ("cpu", "meta") else (self.device.index or 0)

    @property
    def _version(self):
        if self._unversioned():
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __hash__(self):
        return id(self)

    # ---- autograd fields -------------------------------------------------------------------
    @property
    def requires_grad(self):
        if self._grad_fn is not None or self._requires_grad:
            return True
        # as PyTorch, a view made under no_grad (or inference_mode) of a base that requires
        # grad has no grad_fn, yet requires grad (ops on it record nodes without its edge)
        return self._base is not None and requires_grad_of(self._base)

    @requires_grad.setter
    def requires_grad(self, flag):
        if type(flag) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self._grad_fn is not None:
            # PyTorch: the attribute cannot be set at all on a non-leaf (requires_grad_(True)
            # can); setting it True words the error shorter
            raise RuntimeError(_NON_LEAF_MSG + ("" if flag else _NON_LEAF_HINT))
        self.requires_grad_(flag)

    def requires_grad_(self, *args, **kwargs):
        requires_grad = _bool_argument("requires_grad_", "requires_grad", args, kwargs)
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_NON_LEAF_MSG + _NON_LEAF_HINT)
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and type(self._storage) is InferenceStorage and \
                not grad_mode._INFERENCE[0]:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        if requires_grad:   # a leaf gradients flow to, even when traced (`x.detach()` was not)
            self._stopgrad = False
        return self

    @property
    def grad_fn(self):
        if self._view_vc is not None and self._view_vc != self._vc[0]:
            # the base was modified in place since this view's grad_fn was recorded (or since
            # it was made, without one): as PyTorch, its history is regenerated from the base
            # (AsStridedBackward0), unless its creation meta forbids that
            base = self._base
            if base is not None and (base.requires_grad or self._grad_fn is not None):
                if self._creation is not None:
                    from ._ops.dispatch import _INDIRECT, _creation_error
                    raise _creation_error(self, _INDIRECT)
                if base.requires_grad:
                    from ._ops.registry import refresh_view_grad_fn
                    refresh_view_grad_fn(self)
            self._view_vc = self._vc[0]
        return self._grad_fn

    @property
    def is_leaf(self):
        # (through `grad_fn`: PyTorch's is_leaf raises as it does for a stale view)
        return (self._grad_fn if self._view_vc is None else self.grad_fn) is None

    def _is_view(self):
        return self._base is not None

    @property
    def grad(self):
        grad = self._grad
        if grad is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size "
                                   f"'{list(value.shape)}' to a tensor of size "
                                   f"'{list(self.shape)}'. Please ensure that the gradient and "
                                   "the tensor are the same size")
            if value.dtype is not self.dtype:
                from ._ops.pointwise import CPP_NAMES
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{CPP_NAMES[value.dtype.name]}'"
                    f" to a tensor with grad_dtype '{self.dtype._legacy}'. The gradient must "
                    "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
                    "the tensor's grad_dtype attribute with a specific dtype, or None to allow "
                    "any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor "
                    "and its gradient may break downstream systems that assume they match.")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        import weakref
        node = self._grad_fn
        if node._retain is None:
            node._retain = {}
        node._retain[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        from .autograd.graph import add_hook
        if self._grad_fn is None:
            if self._hooks is None:
                self._hooks = collections.OrderedDict()
            return add_hook(self._hooks, hook)
        node = self._grad_fn
        if node._tensor_hooks is None:
            node._tensor_hooks = {}
        return add_hook(node._tensor_hooks.setdefault(self._output_nr, collections.OrderedDict()),
                        hook)

    def register_post_accumulate_grad_hook(self, hook):
        from .autograd.graph import add_hook
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = collections.OrderedDict()
        return add_hook(self._post_acc_hooks, hook)

    def _accumulator(self):
        if self._acc is None:
            from .autograd.graph import AccumulateGrad
            self._acc = AccumulateGrad(self)
        return self._acc

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        t = _alias(self)
        t._base = None   # shares the storage but is nobody's view: in-place ops on it reach
        t._stopgrad = True   # the base's values, never its graph
        _own_version(t)
        return t

    def detach_(self):
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views "
                               "of DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        self._grad_fn = None
        self._requires_grad = False
        self._stopgrad = True
        return self

    @property
    def data(self):
        t = _alias(self)
        t._base = None   # (as for detach())
        t._stopgrad = True
        t._vc = [0]  # unlike detach(), `.data` does not share the version counter
        _own_version(t)
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(other).__name__}")
        if self.requires_grad and not (other.dtype.is_floating_point or other.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._storage = other._storage
        self._view = other._view
        self._cache, self._cache_base = other._cache, other._cache_base

    # ---- transposes (conversion to Python / NumPy: `_tensor_conversion.py`) -----------
    @property
    def T(self):
        if self.ndim != 2:
            _warn_transpose(self.ndim)
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self):
        if self.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self):
        if self.ndim == 0:
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self.conj()
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.ndim}-D tensor."
                               + (" For batches of matrices, consider using tensor.mH"
                                  if self.ndim > 2 else ""))
        return self.transpose(0, 1).conj()

    @property
    def mH(self):
        if self.ndim == 0:
            warnings.warn("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")
            return self.conj()
        if self.ndim < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.ndim}-D tensor.")
        return self.mT.conj()


_NOT_A_SUBCLASS = ("Creating a Tensor subclass from a class that does not inherit from Tensor "
                   "is not possible. Make sure your class inherits from Tensor.")


def _reclass(t, cls):
    """`t` (a tensor no one else holds) as an instance of `cls`."""
    if type(t) is cls:
        return t
    try:
        t.__class__ = cls
        return t
    except TypeError:   # `cls` has slots of its own: copy the fields into a new instance
        new = object.__new__(cls)
        for name in Tensor.__slots__[:-2]:
            setattr(new, name, getattr(t, name))
        new.__dict__.update(t.__dict__)
        return new


def _rebuild(array, device, requires_grad):
    from ._ops.creation import empty
    from ._ops.creation_data import tensor
    if device == "meta":   # `array` is a MetaArray: a shape and a dtype
        return empty(array.shape, dtype=dt._BY_NP[array.dtype], device=device,
                     requires_grad=requires_grad)
    t = tensor(array, device=device, requires_grad=requires_grad)
    t._vc[0] += 1   # PyTorch's unpickled tensors are rebuilt with `set_`: version 1
    return t


def _rebuild_as(cls, args, state):
    t = _reclass(_rebuild(*args), cls)
    t.__dict__.update(state)
    return t


# Tensor's conversion to Python / NumPy (numpy, item, repr, pickling, ...) is written in its own
# module: imported last, as it imports from this one
from . import _tensor_conversion  # noqa: E402
_tensor_conversion.install(Tensor)
