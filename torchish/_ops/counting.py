"""unique/unique_consecutive/bincount, computed on the host: their output shapes depend on the
values (PyTorch syncs for them too)."""
import numpy as np

from .._tensor_checks import _metadata_dim
from .reduction import axis1
from .sorting import _host

def _out(arr, like, dtype):
    from .creation_data import tensor
    return tensor(np.asarray(arr), dtype=dtype, device=like.device)


def _returns(values, inverse, counts, return_inverse, return_counts, like, node):
    """The outputs; `node` is (grad_fn name, kernel) of PyTorch's non-differentiable node."""
    from .. import _dtype as dt
    from .registry import record_not_implemented
    out = [_out(values, like, like.dtype)]
    record_not_implemented(node[0], NotImplementedError(
        f"the derivative for '{node[1]}' is not implemented."), [like], out[:1])
    if return_inverse:
        out.append(_out(inverse.astype(np.int64), like, dt.int64))
    if return_counts:
        out.append(_out(counts.astype(np.int64), like, dt.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _no_complex_unique(input, dim):
    # PyTorch's unique kernels have no complex (nor float8) case, even for an empty input
    from .dtype_refusals import refuse
    refuse("unique" if dim is None else "unique_dim", input.dtype)
    if dim is not None:   # (a 0-d tensor has no dim to take, not even 0 or -1)
        _metadata_dim(dim, input.ndim)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: sorted unique values (each NaN is its own value, as in PyTorch)."""
    _no_complex_unique(input, dim)
    arr = _host(input)
    if dim is None:
        flat = arr.reshape(-1)
        vals, inv, counts = np.unique(flat, return_inverse=True, return_counts=True,
                                      equal_nan=False)
        return _returns(vals, inv.reshape(arr.shape), counts, return_inverse, return_counts,
                        input, ("Unique2Backward0", "_unique2"))
    d = axis1(dim, arr.ndim) or 0
    vals, inv, counts = np.unique(arr, return_inverse=True, return_counts=True, axis=d)
    return _returns(vals, inv.reshape(-1), counts, return_inverse, return_counts, input,
                    ("UniqueDimBackward0", "unique_dim"))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    _no_complex_unique(input, dim)
    arr = _host(input)
    if dim is None:
        flat = arr.reshape(-1)
        if flat.size == 0:
            new = np.zeros(0, bool)
        else:
            new = np.concatenate([[True], flat[1:] != flat[:-1]])
        inv = np.cumsum(new) - 1
        vals = flat[new]
        counts = np.diff(np.append(np.nonzero(new)[0], flat.size))
        return _returns(vals, inv.reshape(arr.shape), counts, return_inverse, return_counts,
                        input, _CONSECUTIVE)
    d = axis1(dim, arr.ndim) or 0
    moved = np.moveaxis(arr, d, 0).reshape(arr.shape[d], -1)
    new = np.ones(moved.shape[0], bool)
    new[1:] = np.any(moved[1:] != moved[:-1], axis=1)
    inv = np.cumsum(new) - 1
    vals = np.take(arr, np.nonzero(new)[0], axis=d)
    counts = np.diff(np.append(np.nonzero(new)[0], moved.shape[0]))
    return _returns(vals, inv, counts, return_inverse, return_counts, input, _CONSECUTIVE)


_CONSECUTIVE = ("UniqueConsecutiveBackward0", "unique_consecutive")


def bincount(input, weights=None, minlength=0):
    from .. import _dtype as dt
    from .pointwise import not_implemented
    from .registry import record_not_implemented
    if input.dtype in dt.SHELL:   # PyTorch has no bincount kernel for uint16/32/64
        from . import unsigned_support
        unsigned_support.refuse("bincount", input.dtype)
    arr = _host(input)
    if arr.dtype.kind not in "iub" or arr.dtype.kind == "b":
        raise not_implemented("bincount_cpu", arr)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if arr.ndim == 1 and arr.size == 0:   # PyTorch: int64 zeros, weights or not
        return _out(np.zeros(minlength, np.int64), input, dt.int64)
    if arr.ndim != 1 or arr.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and tuple(weights.shape) != tuple(arr.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    w = None if weights is None else _host(weights)
    counts = np.bincount(arr, weights=w, minlength=minlength)
    if weights is None:
        return _out(counts.astype(np.int64), input, dt.int64)
    # float32 weights keep their dtype; all others (half, integral) accumulate in double
    out_dtype = dt.float32 if weights.dtype is dt.float32 else dt.float64
    out = _out(counts, input, out_dtype)
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        "derivative for aten::bincount is not implemented"), [weights], [out])
    return out


def _bind():
    from .._tensor import Tensor
    for name in ("unique", "unique_consecutive", "bincount"):
        setattr(Tensor, name, globals()[name])


_bind()
PLAIN = ["unique", "unique_consecutive", "bincount"]
