"""What sparse COO tensors do: construction, conversion, coalescing, printing, and the table
(`IMPLS`) of ops their `__torch_function__` serves; the products and reductions live in
`_sparse_math.py`.

Index bookkeeping (which entries merge, where a dense tensor is nonzero) is computed eagerly
on the host, as PyTorch's CPU kernels do; values move only through JAX functions recorded
with `call_jax`, so gradients reach the values (and through them a sparse leaf).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._eager_jit import eager_jit

from . import _dtype as dt
from ._layout import sparse_coo, strided
from ._ops.call_jax import call_jax, record_not_implemented
from ._sparse_coo import is_sparse_coo, make, warn_invariants
from ._tensor import Tensor, _wrap
from .autograd.graph import saved_entry


def _long(x):
    """An int64 Tensor of `x` (a Tensor of any dtype, a list, an array)."""
    from ._ops.creation_data import tensor as _tensor
    if not isinstance(x, Tensor):
        x = _tensor(np.asarray(x))
    return x if x.dtype is dt.int64 else x.to(dt.int64)


def identity(name, values):
    """`values` passed through a node named `name` (a new node, same values)."""
    return call_jax(name, _same, [values], key=("sparse_id",))


def _same(v):
    return v


# ---- construction ---------------------------------------------------------------------------

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    from ._ops.creation_data import tensor as _tensor
    indices = _long(indices)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        indices, values = indices.to(device), values.to(device)
    nnz_i = indices.shape[1] if indices.ndim == 2 else indices.shape[0]
    sparse_dim = indices.shape[0] if indices.ndim >= 1 else 0
    if values.ndim == 0 or nnz_i != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz_i}, nnz from values: "
                           f"{values.shape[0] if values.ndim else 1}")
    idx = np.asarray(indices._data)
    if size is None:
        size = tuple(int(idx[d].max()) + 1 if idx.shape[1] else 0 for d in range(sparse_dim))
        size += tuple(values.shape[1:])
    size = tuple(int(s) for s in size)
    dense_dim = values.ndim - 1
    if len(size) != sparse_dim + dense_dim or indices.ndim != 2:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    if check_invariants is None:
        from .sparse import check_sparse_tensor_invariants as checks
        if checks._state[0] is None:
            warn_invariants()
        check_invariants = checks.is_enabled()
    if check_invariants:
        _check_indices(idx, size)
    if requires_grad:
        values = values.detach().requires_grad_(True)
    elif values.requires_grad:
        values = identity("SparseCooTensorWithDimsAndTensorsBackward0", values)
        if values.grad_fn is not None:
            # PyTorch's node saves its result: a second backward through it raises
            values.grad_fn._saved = [saved_entry(values, (values.grad_fn, 0))]
    else:
        values = values.detach()
    return make(indices, values, size, bool(is_coalesced) or idx.shape[1] <= 1)


def factory(name, size, layout, dtype, device, requires_grad):
    """torch.zeros / empty (/ ones / full: refused) with a non-strided layout."""
    if layout is not sparse_coo:
        from ._unsupported import UnsupportedError
        raise UnsupportedError(f"torchish: {name}(layout={layout}) is not supported yet")
    if name in ("ones", "full"):
        raise RuntimeError("full(...) is not implemented for sparse layout")
    if name == "ones_like":
        raise refuse("empty_strided")
    from . import zeros
    values = zeros((0,), dtype=dtype, device=device)
    indices = zeros((len(size), 0), dtype=dt.int64, device=values.device)
    s = make(indices, values, size, True)
    return s.requires_grad_() if requires_grad else s


def _check_indices(idx, size):
    for d in range(idx.shape[0]):
        if idx.shape[1] == 0:
            break
        low, high = int(idx[d].min()), int(idx[d].max())
        if low < 0:
            raise RuntimeError(f"found negative index {low} for dim {d}")
        if high >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {high}")


def dense_to_sparse(x, sparse_dim=None, *, layout=None):
    """`Tensor.to_sparse(sparse_dim)` / `to_sparse(layout=...)` / `to_sparse_coo()`."""
    from ._layout import strided
    if layout is strided:   # already that layout (PyTorch returns the tensor itself)
        return x
    _coo_only(layout)
    name = "ToSparseBackward1" if sparse_dim is None else "ToSparseBackward0"
    sparse_dim = x.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 <= sparse_dim <= x.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{x.ndim}] range, "
                           f"but {sparse_dim} is given")
    if sparse_dim == 0 and x.ndim > 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    from ._ops.dtype_refusals import refuse
    refuse("count_nonzero", x.dtype)   # (PyTorch counts the entries first: float8, uint16+)
    arr = np.asarray(x.detach()._data)
    mask = np.atleast_1d(arr != 0)   # (a scalar: one entry unless it is zero, no index rows)
    if arr.ndim > sparse_dim:
        mask = mask.reshape(arr.shape[:sparse_dim] + (-1,)).any(-1)
    where = np.nonzero(mask)
    indices = np.stack(where)[:sparse_dim] if sparse_dim else np.zeros((0, len(where[0])))
    indices = _wrap(jnp.asarray(indices, dtype=jnp.int64))
    values = call_jax(name, _gather_rows, [x, jnp.asarray(indices._data)], key=("sp_gather",))
    return make(indices, values, tuple(x.shape), True)


def _gather_rows(x, idx):
    if idx.shape[0] == 0:   # a scalar's entries (none or one)
        return jnp.broadcast_to(x, idx.shape[1:])
    return x[tuple(idx)]


def sparse_mask(x, mask):
    """`Tensor.sparse_mask(mask)`: the entries of the dense `x` at the coordinates of the
    sparse `mask` (its duplicates and coalesced flag kept)."""
    if not is_sparse_coo(mask):
        raise NotImplementedError("Could not run 'aten::sparse_mask' with arguments from the "
                                  f"'{x.device.type.upper()}' backend.")
    if is_sparse_coo(x):
        raise NotImplementedError("torchish: sparse_mask() of a sparse_coo tensor is not "
                                  "supported yet")
    if tuple(x.shape) != mask._sp_size:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(x.shape)} but mask has size {list(mask._sp_size)}")
    values = call_jax("SparseMaskBackward0", _gather_rows, [x, mask._sp_indices._data],
                      key=("sp_gather",))
    return make(mask._sp_indices, values, mask._sp_size, mask._sp_coalesced)


def _coo_only(layout):
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"torchish: to_sparse(layout={layout}) is not supported yet "
                                  "(only torch.sparse_coo)")


def sparse_to_sparse(s, *args, layout=None, blocksize=None, dense_dim=None):
    _coo_only(layout)
    if args and int(args[0]) != s.sparse_dim():
        raise NotImplementedError("torchish: changing the sparse_dim of a sparse_coo tensor "
                                  "is not supported yet")
    return s


# ---- coalescing and densifying --------------------------------------------------------------

def _linear(idx, size):
    return np.ravel_multi_index(tuple(idx), size) if idx.shape[0] else \
        np.zeros(idx.shape[1], dtype=np.int64)


def merge_plan(idx, size):
    """(sorted unique indices (sparse_dim, m), for each entry its slot in them)."""
    lin = _linear(idx, size)
    uniq, inverse = np.unique(lin, return_inverse=True)
    out = np.stack(np.unravel_index(uniq, size)) if idx.shape[0] else np.zeros((0, len(uniq)))
    return out.reshape(idx.shape[0], -1).astype(np.int64), inverse.reshape(-1)


@eager_jit(static_argnames=("m",))
def _segment_sum(values, inverse, m):
    if values.dtype == jnp.bool_:   # (duplicates of a bool tensor: any of them)
        return jax.ops.segment_max(values.astype(jnp.int8), inverse, num_segments=m) > 0
    return jax.ops.segment_sum(values, inverse, num_segments=m)


def coalesce(s):
    if s._sp_coalesced:
        return s
    size = s._sp_size[:s.sparse_dim()]
    new_idx, inverse = merge_plan(np.asarray(s._sp_indices._data), size)
    m = new_idx.shape[1]
    values = call_jax("CoalesceBackward0", functools.partial(_segment_sum, m=m),
                      [s._sp_values, jnp.asarray(inverse)], key=("sp_coalesce", m))
    return make(_wrap(jnp.asarray(new_idx)), values, s._sp_size, True)


@eager_jit(static_argnames=("size",))
def _scatter_dense(values, idx, size):
    if idx.shape[0] == 0:   # no sparse dims: every entry lands on the one dense block
        return values.any(0) if values.dtype == jnp.bool_ else values.sum(0, values.dtype)
    if values.dtype == jnp.bool_:   # (duplicates of a bool tensor: any of them)
        return jnp.zeros(size, jnp.int8).at[tuple(idx)].max(values.astype(jnp.int8)) > 0
    return jnp.zeros(size, values.dtype).at[tuple(idx)].add(values)


def to_dense(s, dtype=None):
    values = s._sp_values if dtype is None else s._sp_values.to(dtype)
    return call_jax("ToDenseBackward0", functools.partial(_scatter_dense, size=s._sp_size),
                    [values, s._sp_indices._data], key=("sp_dense", s._sp_size))


def grad_of_leaf(s, g):
    """A sparse leaf's `.grad` from its values' gradient: PyTorch's grad is coalesced (every
    duplicate entry gets the same gradient, that of its coordinate)."""
    if s._sp_coalesced:
        return make(s._sp_indices, g, s._sp_size, True)
    idx = np.asarray(s._sp_indices._data)
    _, first = np.unique(_linear(idx, s._sp_size[:s.sparse_dim()]), return_index=True)
    return make(_wrap(jnp.asarray(idx[:, first])), _wrap(g._data[first]), s._sp_size, True)


# ---- printing -------------------------------------------------------------------------------

def sparse_repr(s):
    from ._tensor_str import _add_suffixes, _tensor_str, _to_print_array
    indent = len("tensor(")
    default = dt.get_default_dtype().name
    name = s.dtype.name
    suffixes = []
    if s.device.type != "cpu":
        suffixes.append(f"device='{s.device}'")
    suffixes += [f"size={tuple(s._sp_size)}", f"nnz={s._nnz()}"]
    if name not in (default, "int64", "bool", "complex128" if default == "float64"
                    else "complex64"):
        suffixes.append(f"dtype=torch.{name}")

    def part(prefix, t):
        arr, kind = _to_print_array(np.asarray(t._data), t.dtype.name)
        text = _tensor_str(arr, indent + len(prefix), kind)
        if arr.size == 0:
            text += f", size={tuple(arr.shape)}"
        return prefix + text + ")"
    text = ("tensor(" + part("indices=tensor(", s._sp_indices) + ",\n" + " " * indent
            + part("values=tensor(", s._sp_values))
    suffixes.append(f"layout={sparse_coo}")
    fn = s.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name().rsplit('::', 1)[-1]}>")   # (a class name)
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(text, suffixes, indent, force_newline=True)


# ---- refusals -------------------------------------------------------------------------------

# ops PyTorch 2.13 has no SparseCPU kernel for: its dispatcher's NotImplementedError (the
# operator's name as ATen spells it)
_NO_KERNEL = {n: f"aten::{n}" for n in (
    "exp", "log", "cos", "cosh", "sigmoid", "reciprocal", "cumsum", "cumprod", "max", "min",
    "argmax", "argmin", "clamp", "nonzero", "all", "view", "logsumexp", "exp2", "index_add_",
    "_sparse_mm_reduce_impl", "dot", "select_backward")}
_NO_KERNEL.update(mean="aten::mean.dim", index="aten::index.Tensor",
                  masked_fill_="aten::masked_fill_.Scalar", eq="aten::eq.Tensor",
                  ne="aten::ne.Tensor",
                  lt="aten::lt.Tensor", le="aten::le.Tensor", gt="aten::gt.Tensor",
                  ge="aten::ge.Tensor", softmax="aten::_softmax",
                  log_softmax="aten::_log_softmax", squeeze="aten::as_strided",
                  narrow="aten::as_strided", vector_norm="aten::linalg_vector_norm")
_NO_KERNEL["pow.Tensor_Tensor"] = "aten::pow.Tensor_Tensor"   # (a tensor exponent)
_NO_KERNEL["empty_strided"] = "aten::empty_strided"   # (ones_like(layout=torch.sparse_coo))
_RUNTIME = {"reshape": "reshape is not implemented for sparse tensors",
            "flatten": "reshape is not implemented for sparse tensors",
            "contiguous": "unsupported memory format option Contiguous"}


# The dispatcher lists the keys an operator has kernels for, in its key order; which ones
# depends on the operator (most have every backend's kernel, some CPU/Meta ones only)
_BACKENDS = ("CPU", "CUDA", "HIP", "MPS", "IPU", "XPU", "HPU", "VE", "MTIA", "MAIA",
             "PrivateUse1", "PrivateUse2", "PrivateUse3")
_KEY_ORDER = (_BACKENDS + ("Meta", "FPGA", "Vulkan", "Metal")
              + tuple("Quantized" + b for b in _BACKENDS + ("Meta",))
              + ("CustomRNGKeyId", "MkldnnCPU")
              + tuple("SparseCsr" + b for b in _BACKENDS + ("Meta",))
              + ("NestedTensorCPU", "NestedTensorHPU"))
_ALWAYS = ("BackendSelect, Python, FuncTorchDynamicLayerBackMode, Functionalize, Conjugate, "
           "Negative, ZeroTensor, ADInplaceOrView, AutogradOther, "
           + ", ".join("Autograd" + b for b in _BACKENDS[:3] + ("XLA",) + _BACKENDS[3:8]
                       + ("Lazy",) + _BACKENDS[8:] + ("Meta", "NestedTensor"))
           + ", Tracer, AutocastCPU, AutocastMTIA, AutocastMAIA, AutocastXPU, AutocastMPS, "
           "AutocastCUDA, FuncTorchBatched, BatchedNestedTensor, FuncTorchVmapMode, Batched, "
           "VmapMode, FuncTorchGradWrapper, PythonTLSSnapshot, FuncTorchDynamicLayerFrontMode, "
           "PreDispatch, PythonDispatcher")
_NESTED = {"NestedTensorCPU", "NestedTensorHPU"}
_ALL_BUT_NESTED = set(_KEY_ORDER) - _NESTED
_KERNEL_KEYS = {"aten::cos": set(_KEY_ORDER), "aten::eq.Tensor": set(_KEY_ORDER),
                "aten::_softmax": set(_KEY_ORDER),
                "aten::max": {"CPU", "Meta", "QuantizedCPU"},
                "aten::min": {"CPU", "Meta", "QuantizedCPU"},
                "aten::as_strided": {"CPU", "Meta", "QuantizedCPU"},
                "aten::nonzero": {"CPU", "Meta"}, "aten::dot": {"CPU", "Meta"},
                "aten::masked_fill_.Scalar": {"CPU", "Meta", "QuantizedCPU"},
                "aten::view": {"CPU", "Meta", "QuantizedCPU", "MkldnnCPU"} | _NESTED,
                "aten::empty_strided": {"CPU", "Meta", "QuantizedCPU", "SparseCsrCPU",
                                        "SparseCsrMeta"} | _NESTED,
                "aten::_sparse_mm_reduce_impl": {"Meta", "SparseCsrCPU"}}


def _backend_list(op):
    keys = _KERNEL_KEYS.get(op, _ALL_BUT_NESTED)
    return ", ".join([k for k in _KEY_ORDER if k in keys] + [_ALWAYS])


def refuse(name):
    if name.startswith("__") and name[2:-2] in _NO_KERNEL:   # `s == s` is eq's refusal
        name = name[2:-2]
    if name in _NO_KERNEL:
        op = _NO_KERNEL[name]
        return NotImplementedError(
            f"Could not run '{op}' with arguments from the 'SparseCPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook "
            "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
            f"possible resolutions. '{op}' is only available for these backends: "
            f"[{_backend_list(op)}].")
    if name in _RUNTIME:
        return RuntimeError(_RUNTIME[name])
    from ._unsupported import UnsupportedError   # (also an AttributeError: hasattr works)
    return UnsupportedError(f"torchish: {name}() on a tensor with layout=torch.sparse_coo is "
                            "not supported yet")


# ---- the op table -----------------------------------------------------------------------

def _values_op(s, fn, coalesced_first=False):
    """A sparse tensor with `s`'s pattern and `fn(values)` (an op that keeps zeros zero)."""
    if coalesced_first:
        s = coalesce(s)
    return make(s._sp_indices, fn(s._sp_values), s._sp_size, s._sp_coalesced)


def _scalar_like(x):
    return not isinstance(x, Tensor) or (x.ndim == 0 and x.layout is strided)


def _mul(a, b):
    if is_sparse_coo(b):
        a, b = b, a
    if not is_sparse_coo(b) and _scalar_like(b):
        return _values_op(a, lambda v: v * b)
    if is_sparse_coo(b):
        from ._sparse_math import sparse_mul
        return sparse_mul(b, a)   # (a, b were swapped above: b is the left operand)
    if b.requires_grad or b.ndim > a.ndim:
        # (PyTorch's gradient to a dense factor is sparse)
        raise NotImplementedError("torchish: mul() of a sparse_coo tensor is supported by a "
                                  "scalar, or by a dense tensor that does not require grad, yet")
    if a.dense_dim():
        raise NotImplementedError("torchish: mul() of a hybrid sparse_coo tensor by a dense "
                                  "tensor is not supported yet")
    from . import broadcast_to
    picked = _wrap(broadcast_to(b, a.shape)._data[tuple(a._sp_indices._data)])
    return _values_op(a, lambda v: v * picked)


def _div(a, b, *, rounding_mode=None):
    if not is_sparse_coo(a):   # a number or dense tensor over a sparse one
        raise refuse("reciprocal")
    if not _scalar_like(b):
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor "
                           f"divisor (got shape {list(b.shape)} for divisor)")
    if rounding_mode is not None:
        raise NotImplementedError("torchish: div(rounding_mode=) of a sparse_coo tensor is "
                                  "not supported yet")
    return _values_op(a, lambda v: v / b)


def _to(s, *args, **kwargs):
    values = s._sp_values.to(*args, **kwargs)
    indices = s._sp_indices
    if values.device != indices.device:
        indices = indices.to(values.device)
    return make(indices, values, s._sp_size, s._sp_coalesced)


def _cast(method):
    return lambda s, *a, **k: _values_op(s, lambda v: getattr(v, method)(*a, **k))


def _unary(method):
    return lambda s, *a, **k: _values_op(s, lambda v: getattr(v, method)(*a, **k),
                                         coalesced_first=True)


def _t(s):
    if s.sparse_dim() > 2 or s.dense_dim():
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {s.sparse_dim()} sparse and {s.dense_dim()} dense dimensions")
    return _swap(s, 0, min(1, s.ndim - 1), "TBackward0")


def _transpose(s, dim0, dim1):
    from ._tensor_checks import _wrap_dim
    d0, d1 = _wrap_dim(dim0, s.ndim), _wrap_dim(dim1, s.ndim)
    if max(d0, d1) >= s.sparse_dim():
        raise NotImplementedError("torchish: transposing a dense dimension of a hybrid "
                                  "sparse_coo tensor is not supported yet")
    return _swap(s, d0, d1, "TransposeBackward0")


def _swap(s, d0, d1, name):
    order = list(range(s.sparse_dim()))
    order[d0], order[d1] = order[d1], order[d0]
    size = list(s._sp_size)
    size[d0], size[d1] = size[d1], size[d0]
    indices = _wrap(s._sp_indices._data[jnp.asarray(order, dtype=jnp.int32)]) \
        if order else s._sp_indices
    values = identity(name, s._sp_values) if s.requires_grad else s._sp_values
    return make(indices, values, size, s._nnz() <= 1 or d0 == d1 and s._sp_coalesced)


def _clone(s, *, memory_format=None):
    return make(_wrap(s._sp_indices._data), s._sp_values.clone(), s._sp_size, s._sp_coalesced)


def _data(s, *value):
    if value:
        raise refuse("data (assignment)")
    return s.detach()


def _type(s, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return f"torch.sparse.{s.dtype._legacy}Tensor"
    raise refuse("type")


def _deepcopy(s, memo):
    values = s._sp_values.detach().clone().requires_grad_(s.requires_grad)
    return make(_wrap(s._sp_indices._data), values, s._sp_size, s._sp_coalesced)


def _cpu(s, memory_format=None):
    return s if s.device.type == "cpu" else _to(s, "cpu")


def _cuda(s, device=None, non_blocking=False, memory_format=None):
    return _to(s, "cuda" if device is None else device)


def _become(s, r):
    """`s` takes `r`'s indices, values and size (an in-place op's result)."""
    s.__dict__.update({k: v for k, v in r.__dict__.items() if k.startswith("_sp_")})
    s._storage, s._view, s._cache, s._cache_base = r._storage, r._view, None, None
    s._vc[0] += 1
    return s


def _inplace(fn):
    def method(s, *args, **kwargs):
        from .autograd import grad_mode
        leaf = s.requires_grad and s.is_leaf
        if leaf and grad_mode.GRAD_ENABLED[0]:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        r = fn(s, *args, **kwargs)
        return _write_leaf(s, r) if leaf and is_sparse_coo(s) else _become(s, r)
    return method


def _write_leaf(s, r):
    """An in-place op (under no_grad) on a sparse leaf that requires grad: as in PyTorch, it
    stays such a leaf and keeps its .grad."""
    old = s._sp_values
    if r._sp_indices is s._sp_indices and r._sp_values.dtype is old.dtype:
        old.copy_(r._sp_values)   # (the same pattern: the values change in place)
        return s
    if old.grad is not None:
        raise NotImplementedError("torchish: an in-place op that changes the pattern of a "
                                  "sparse_coo leaf with a .grad is not supported yet")
    _become(s, r)
    s._sp_values.requires_grad_(True)
    return s


def _zero(s):
    empty = s._sp_values.new_zeros((0,) + tuple(s._sp_values.shape[1:]))
    return make(_wrap(jnp.zeros((s.sparse_dim(), 0), jnp.int64)), empty, s._sp_size, True)


def _negate(s):
    return _values_op(s, lambda v: -v)


def _index_select(s, dim, index):
    """The entries whose coordinate along the sparse `dim` is picked, grouped by their place
    in `index` (uncoalesced unless at most one, as PyTorch leaves them). PyTorch has no
    backward for it."""
    from ._tensor_checks import _wrap_dim
    dim = _wrap_dim(dim, s.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    if index.ndim != 1 or index.dtype is not dt.int64 or is_sparse_coo(index):
        raise IndexError("index_select() argument index must be 1-D strided (non-sparse) "
                         "long-tensor.")
    if dim >= s.sparse_dim():
        raise NotImplementedError("torchish: index_select() along a dense dimension of a "
                                  "sparse_coo tensor is not supported yet")
    size, pick = s._sp_size[dim], np.asarray(index._data)
    for i in pick:
        if not -size <= i < size:
            raise IndexError(f"index_select(): index contains {i} that is out of range for "
                             f"tensor of size {list(s._sp_size)} at dimension {dim}")
    idx = np.asarray(s._sp_indices._data)
    hits = [np.nonzero(idx[dim] == i % size)[0] for i in pick]
    taken = np.concatenate(hits + [np.zeros(0, np.int64)]).astype(np.int64)
    new_idx = idx[:, taken]
    new_idx[dim] = np.repeat(np.arange(len(pick)), [len(h) for h in hits])
    values = _wrap(s._sp_values._data[jnp.asarray(taken)], s._sp_values.device)
    record_not_implemented("IndexSelectBackward0", refuse("index_add_"), [s._sp_values],
                           [values])
    size = s._sp_size[:dim] + (len(pick),) + s._sp_size[dim + 1:]
    return make(_wrap(jnp.asarray(new_idx)), values, size, taken.size <= 1)


def _take_values(s, taken):
    """`s`'s values at the entry positions `taken` (a NumPy int array)."""
    return _wrap(s._sp_values._data[jnp.asarray(taken, dtype=jnp.int64)], s._sp_values.device)


def _select(s, dim, index):
    """The entries whose coordinate along `dim` is `index`, that coordinate dropped; selecting
    the last sparse dim leaves a dense tensor (duplicates summed). Along a dense dim the
    values are selected. PyTorch records SelectBackward0 but has no sparse backward for it."""
    from ._tensor_checks import _wrap_dim
    dim = _wrap_dim(dim, s.ndim)
    size = s._sp_size
    index = int(index)
    if not -size[dim] <= index < size[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(size)} at dimension {dim}")
    index %= size[dim]
    idx, nsp = np.asarray(s._sp_indices._data), s.sparse_dim()
    if dim >= nsp:
        axis = dim - nsp + 1
        values = _wrap(jnp.take(s._sp_values._data, index, axis=axis), s._sp_values.device)
        out = make(s._sp_indices, values, size[:dim] + size[dim + 1:], False)
    else:
        taken = np.flatnonzero(idx[dim] == index)
        values = _take_values(s, taken)
        if nsp == 1:   # no sparse dim left: the (summed) dense remainder
            values = _wrap(values._data.sum(0), values.device)
            out = values
        else:
            out = make(_wrap(jnp.asarray(np.delete(idx[:, taken], dim, axis=0))), values,
                       size[:dim] + size[dim + 1:], taken.size <= 1)
    record_not_implemented("SelectBackward0", refuse("select_backward"), [s._sp_values],
                           [values])
    return out


_KEY_ERROR = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
              "are valid indices (got {})")


def _key_item(k):
    """A key item as an int, None, Ellipsis or slice; other kinds raise PyTorch's error."""
    if isinstance(k, Tensor) and k.ndim == 0 and not k.dtype.is_floating_point \
            and k.dtype is not dt.bool and not k.dtype.is_complex:
        return int(k.item())
    if isinstance(k, (Tensor, list)):   # (advanced indexing: PyTorch's aten::index refusal)
        raise refuse("index")
    if isinstance(k, bool):
        raise refuse("__getitem__")
    if isinstance(k, int) or k is None or k is Ellipsis or isinstance(k, slice):
        return k
    raise IndexError(_KEY_ERROR.format(type(k).__name__))


def _full_slice(k, n):
    """Whether PyTorch skips slice `k` of a dim of size `n` (any other slice needs
    as_strided, which sparse tensors lack)."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= n)


def _getitem(s, key):
    """`s[...]` with integers (select), None (unsqueeze), `...` and full slices `:`, applied
    left to right as PyTorch does; partial slices and tensor keys get PyTorch's refusals."""
    from ._sparse_math import sparse_unsqueeze
    if isinstance(key, slice):   # (a lone slice always reaches as_strided in PyTorch)
        raise refuse("narrow")
    keys = [_key_item(k) for k in (key if isinstance(key, tuple) else (key,))]
    used = sum(1 for k in keys if k is not None and k is not Ellipsis)
    if used > s.ndim:
        raise IndexError(f"too many indices for tensor of dimension {s.ndim}")
    out, dim, real, changed, spread = s, 0, 0, False, False
    for k in keys:
        if k is Ellipsis:   # (only the first one spans dims; PyTorch lets later ones pass)
            if not spread:
                dim += s.ndim - used
                real += s.ndim - used
            spread = True
        elif k is None:
            out = sparse_unsqueeze(out, dim) if is_sparse_coo(out) else out.unsqueeze(dim)
            dim, real, changed = dim + 1, real + 1, True
        elif isinstance(k, slice):
            if not _full_slice(k, out.shape[dim]):
                raise refuse("narrow")
            dim, real = dim + 1, real + 1
        else:
            n = out.shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {real} with size "
                                 f"{n}")
            out = _select(out, dim, k) if is_sparse_coo(out) else out.select(dim, k)
            real, changed = real + 1, True
    if not changed:   # (PyTorch returns an alias, which a sparse tensor cannot make)
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")
    return out


def _permute(s, *dims):
    """Reorders the sparse dims' index rows (and the dense dims of the values); PyTorch keeps
    the coalesced flag only when the first dim stays first."""
    from ._tensor_checks import _wrap_dim
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) != s.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {s.ndim} is not equal to len(dims) = {len(dims)}")
    first = dims[0]   # (PyTorch keeps the flag for a literal 0 only, not for -ndim)
    dims = tuple(_wrap_dim(d, s.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    nsp = s.sparse_dim()
    if any((d < nsp) != (i < nsp) for i, d in enumerate(dims)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed.Only transpositions within sparse and "
                           "dense dimensions are supported.")
    idx = s._sp_indices._data[jnp.asarray(dims[:nsp], dtype=jnp.int32)] if nsp else \
        s._sp_indices._data
    dense_order = (0,) + tuple(d - nsp + 1 for d in dims[nsp:])
    values = call_jax("PermuteBackward0", functools.partial(jnp.transpose, axes=dense_order),
                      [s._sp_values], key=("sp_permute", dense_order))
    return make(_wrap(idx), values, tuple(s._sp_size[d] for d in dims),
                s._sp_coalesced and first == 0)


@eager_jit(static_argnames=("p",))
def _values_norm(v, p):
    a = jnp.abs(v)
    if p == float("inf"):
        return jnp.max(a, initial=0)
    if p == float("-inf"):
        return jnp.min(a, initial=jnp.inf)
    if p == 0:
        return jnp.count_nonzero(a).astype(v.dtype)
    return jnp.sum(a ** p) ** (1 / p)


def _norm(s, p="fro", dim=None, keepdim=False, dtype=None):
    """`Tensor.norm` / `torch.norm` of a sparse tensor: a full reduction over the coalesced
    values. PyTorch records NormBackward1, whose backward has no sparse kernel."""
    if p in ("fro", None) and isinstance(dim, (tuple, list)) and len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")   # (torch.norm's Frobenius check comes first)
    if dim is not None and sorted(d % s.ndim for d in ((dim,) if isinstance(dim, int)
                                                        else dim)) != list(range(s.ndim)):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                           "must either be empty or contain all dimensions of the input")
    if p in ("fro", None):
        if dtype is not None:
            raise ValueError("dtype argument is not supported in frobenius norm")
        p = 2
    if isinstance(p, str):
        raise refuse("norm")
    values = coalesce(s)._sp_values
    out = _wrap(_values_norm(values._data, float(p)), values.device)
    record_not_implemented("NormBackward1", refuse("masked_fill_"), [s._sp_values], [out])
    return out


def _narrow_copy(s, dim, start, length):
    """The entries with `start <= coordinate < start + length` along `dim`, shifted to 0
    (PyTorch's sparse kernel wraps neither a negative dim nor a negative start)."""
    if not 0 <= dim < s.ndim:
        raise RuntimeError(f"Dimension {dim} out of range. Expecting 0 <= dim < {s.ndim}.")
    size, nsp = s._sp_size, s.sparse_dim()
    if not (0 <= start and length >= 0 and start + length <= size[dim]):
        raise RuntimeError(f"Invalid range to narrow. range(start, start+length) must be a "
                           f"subset of range(0, {size[dim]}).")
    new_size = size[:dim] + (length,) + size[dim + 1:]
    if dim >= nsp:
        axis = dim - nsp + 1
        values = call_jax("NarrowCopyBackward0",
                          lambda v: jax.lax.slice_in_dim(v, start, start + length, axis=axis),
                          [s._sp_values])
        return make(s._sp_indices, values, new_size, s._sp_coalesced)
    idx = np.asarray(s._sp_indices._data)
    taken = np.flatnonzero((idx[dim] >= start) & (idx[dim] < start + length))
    new_idx = idx[:, taken]
    new_idx[dim] -= start
    values = call_jax("NarrowCopyBackward0", _gather_rows,
                      [s._sp_values, jnp.asarray(taken, dtype=jnp.int64)[None]],
                      key=("sp_gather",))
    return make(_wrap(jnp.asarray(new_idx)), values, new_size, s._sp_coalesced)


IMPLS = {
    "mul": _mul, "__mul__": _mul, "__rmul__": lambda a, b: _mul(b, a),
    "div": _div, "true_divide": _div, "__truediv__": _div,
    "__rtruediv__": lambda s, other: _div(other, s),
    "neg": _negate, "negative": _negate, "neg_": _inplace(_negate),
    "mul_": _inplace(_mul), "div_": _inplace(_div), "zero_": _inplace(_zero),
    "detach_": lambda s: _become(s, s.detach()),
    "to": _to, "cpu": _cpu, "cuda": _cuda, "clone": _clone, "t": _t, "transpose": _transpose,
    "to_dense": to_dense, "coalesce": coalesce, "data": _data, "type": _type,
    "index_select": _index_select,
    "select": _select, "__getitem__": _getitem, "permute": _permute,
    "narrow_copy": _narrow_copy,
    "norm": _norm,
    "__deepcopy__": _deepcopy,
    **{m: _cast(m) for m in ("double", "float", "half", "bfloat16", "long", "int", "bool")},
    **{m: _unary(m) for m in ("abs", "sqrt", "sin", "tanh", "floor", "ceil", "trunc", "sign",
                              "relu", "sinh", "asin", "atan", "tan", "expm1", "log1p", "sgn",
                              "erf", "square", "isnan", "frac", "round")},
}


def _install_math():
    from . import _sparse_math
    IMPLS.update(_sparse_math.IMPLS)
    IMPLS.update(add_=_inplace(_sparse_math.add), sub_=_inplace(_sparse_math.sub),
                 sparse_resize_=_inplace(_sparse_math.sparse_resize),
                 sparse_resize_and_clear_=_inplace(functools.partial(
                     _sparse_math.sparse_resize, clear=True)))


_install_math()
