"""Products, sums and softmax of sparse COO tensors, as JAX functions of the values (gathers and
`segment_sum`s over the indices), recorded with `call_jax` under PyTorch's grad_fn names."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._eager_jit import eager_jit

from ._ops.call_jax import call_jax
from ._sparse_coo import is_sparse_coo, make
from ._sparse_ops import (coalesce, merge_plan, refuse, _linear, _scatter_dense,
                          _segment_sum)
from ._tensor import Tensor, _wrap


# ---- products -------------------------------------------------------------------------------

@eager_jit(static_argnames=("n",))
def _spmm(values, idx, dense, n):
    """(sparse n x k with these entries) @ dense (k x m, or k)."""
    picked = dense[idx[1]]
    contrib = values.reshape((-1,) + (1,) * (picked.ndim - 1)) * picked
    return jax.ops.segment_sum(contrib, idx[0], num_segments=n)


@eager_jit(static_argnames=("n",))
def _dense_spmm(dense, values, idx, n):
    """dense (m x k) @ (sparse k x n)."""
    return jax.ops.segment_sum((dense[:, idx[0]] * values).T, idx[1], num_segments=n).T


@eager_jit(static_argnames=("n",))
def _addmm(input, values, idx, dense, beta, alpha, n):
    return beta * input + alpha * _spmm(values, idx, dense, n)


def _check_2d(s):
    if s.sparse_dim() != 2 or s.dense_dim():
        raise NotImplementedError("torchish: products of sparse_coo tensors need 2 sparse and "
                                  "0 dense dimensions")


def _check_mm(s, dense, what="addmm", arg=3):
    if s.sparse_dim() == 2 and s.dense_dim():   # (a hybrid matrix: ATen's sparse addmm)
        raise RuntimeError(f"addmm: scalar values expected, got {s.dense_dim()}D values")
    _check_2d(s)
    if is_sparse_coo(dense):
        raise NotImplementedError(f"torchish: {what} of two sparse_coo tensors is not "
                                  "supported yet")
    if dense.shape[0] != s._sp_size[1]:
        raise RuntimeError(f"{what}: Argument #{arg} (dense): Expected dim 0 size "
                           f"{s._sp_size[1]}, got {dense.shape[0]}")
    if dense.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype._legacy} but found "
                           f"{dense.dtype._legacy}")


def _dense_grad_refused(s, op):
    # PyTorch gives a sparse leaf a *dense* gradient from these ops (every coordinate, not
    # only the stored ones); values-shaped gradients cannot hold it
    if s.requires_grad and s.is_leaf:
        raise NotImplementedError(
            f"torchish: {op} with a sparse_coo leaf that requires grad (whose gradient PyTorch "
            "makes dense) is not supported yet; use torch.sparse.mm, whose gradient is sparse")


def _sparse_left(name, s, dense):
    _check_mm(s, dense)
    return call_jax(name, functools.partial(_spmm, n=s._sp_size[0]),
                    [s._sp_values, s._sp_indices._data, dense], key=("sp_mm", s._sp_size[0]))


def mm(a, b):
    if is_sparse_coo(a) and is_sparse_coo(b):
        return sparse_sparse("MmBackward0", a, b)
    if is_sparse_coo(a):
        _dense_grad_refused(a, "torch.mm")
        return _sparse_left("MmBackward0", a, b)
    _dense_grad_refused(b, "torch.mm")
    _check_2d(b)
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if a.shape[1] != b._sp_size[0]:   # (PyTorch computes it as (b.t() @ a.t()).t())
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                           f"{b._sp_size[0]}, got {a.shape[1]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {b.dtype._legacy} but found "
                           f"{a.dtype._legacy}")
    n = b._sp_size[1]
    return call_jax("MmBackward0", functools.partial(_dense_spmm, n=n),
                    [a, b._sp_values, b._sp_indices._data], key=("sp_dmm", n))


def mv(s, vec):
    if s.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got SparseTensor Dim: "
                           f"{s.ndim}Tensor Dim: {vec.ndim}")
    _dense_grad_refused(s, "torch.mv")
    _check_mm(s, vec)
    return _sparse_left("MvBackward0", s, vec)


@eager_jit(static_argnames=("n",))
def _sp_bmm(values, idx, dense, n):
    """(sparse b x n x k with these entries) @ dense (b x k x m): each entry (i, r, c) adds
    value * dense[i, c] to output row (i, r)."""
    contrib = values[:, None] * dense[idx[0], idx[2]]
    out = jax.ops.segment_sum(contrib, idx[0] * n + idx[1], num_segments=dense.shape[0] * n)
    return out.reshape(dense.shape[0], n, dense.shape[2])


def bmm(a, b):
    """Batched sparse (b x n x k, 3 sparse dims) @ dense (b x k x m): a dense result, checked
    in the order of ATen's `bmm_sparse`."""
    if is_sparse_coo(b):
        raise RuntimeError("bmm_sparse: Tensor 'mat2' must be dense")
    if a.dense_dim():
        raise RuntimeError(f"bmm_sparse: Tensor 'self' must have 0 dense dims, but has "
                           f"{a.dense_dim()}")
    if a.sparse_dim() != 3:
        raise RuntimeError(f"bmm_sparse: Tensor 'self' must have 3 sparse dims, but has "
                           f"{a.sparse_dim()}")
    if b.ndim != 3:
        raise RuntimeError(f"bmm_sparse: Tensor 'mat2' must have 3 dims, but has {b.ndim}")
    size = a._sp_size
    if size[0] != b.shape[0]:
        raise RuntimeError("bmm_sparse: 'self.size(0)' and 'mat2.size(0)' must match")
    if size[2] != b.shape[1]:
        raise RuntimeError("bmm_sparse: 'self.size(2)' and 'mat2.size(1)' must match")
    if b.dtype is not a.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype._legacy} but found "
                           f"{b.dtype._legacy}")
    _dense_grad_refused(a, "torch.bmm")
    return call_jax("BmmBackward0", functools.partial(_sp_bmm, n=size[1]),
                    [a._sp_values, a._sp_indices._data, b], key=("sp_bmm", size[1]))


def matmul(a, b):
    """`@` with a sparse operand, following PyTorch's rank dispatch: the products above for
    1-D/2-D operands, a dense batch folded into one mm with a sparse matrix; the other ranks
    meet the sparse tensor's missing reshape / expand, as in PyTorch."""
    if a.ndim == 2 and b.ndim == 1 and is_sparse_coo(a):
        return mv(a, b)
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    if a.ndim == 1 and b.ndim == 2:
        return mm(a.unsqueeze(0), b).squeeze_(0)
    if a.ndim >= 3 and b.ndim == 2 and not is_sparse_coo(a):
        from ._ops.shape import _reshape_copy as unsafe_view
        shape = tuple(a.shape[:-1])
        folded = mm(a.reshape(int(np.prod(shape)), a.shape[-1]), b)
        return unsafe_view(folded, shape + (b.shape[1],))
    if (a.ndim >= 3 and b.ndim <= 2) or (a.ndim == 1 and b.ndim >= 3):   # (PyTorch folds)
        raise RuntimeError("reshape is not implemented for sparse tensors")
    if a.ndim >= 3 or b.ndim >= 3:
        raise RuntimeError("expand is unsupported for Sparse tensors")
    raise refuse("dot")   # (1-D @ 1-D: PyTorch has no sparse dot)


def sparse_mm(sparse, dense, reduce=None):
    """`torch.sparse.mm`: its gradient to the sparse operand keeps that operand's pattern."""
    if reduce is not None:   # (PyTorch reduces for CSR tensors only)
        if is_sparse_coo(sparse):
            raise refuse("_sparse_mm_reduce_impl")
        raise NotImplementedError("torchish: torch.sparse.mm(..., reduce=) is not supported yet")
    if not is_sparse_coo(sparse):
        if not is_sparse_coo(dense):
            from . import mm as dense_mm
            return dense_mm(sparse, dense)
        return mm(sparse, dense)
    if is_sparse_coo(dense):
        return sparse_sparse("SparseSparseMatmulBackward0", sparse, dense)
    out = _sparse_left("SparseAddmmBackward0", sparse, dense)
    if out.grad_fn is not None:   # PyTorch's node also has an edge for addmm's (zero) `self`
        out.grad_fn._shown = [None] + out.grad_fn._shown
    return out


def sparse_sparse(name, a, b):
    """sparse (n x k) @ sparse (k x m): a coalesced sparse result over every (row, col) pair
    some k joins (PyTorch keeps such entries even when they sum to zero)."""
    _check_2d(a)
    _check_2d(b)
    (n, k), (k2, m) = a._sp_size, b._sp_size
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {a.dtype._legacy} does not match mat2 dtype "
                           f"{b.dtype._legacy}")
    for s in (a, b):
        if s.requires_grad and s.is_leaf:   # (PyTorch's gradient leaves the leaf's pattern)
            raise NotImplementedError("torchish: the product of two sparse_coo tensors with a "
                                      "sparse leaf that requires grad is not supported yet")
    ia, ib = np.asarray(a._sp_indices._data), np.asarray(b._sp_indices._data)
    order = np.argsort(ib[0], kind="stable")
    rows_b = ib[0][order]
    start = np.searchsorted(rows_b, ia[1], "left")
    counts = np.searchsorted(rows_b, ia[1], "right") - start
    pa = np.repeat(np.arange(ia.shape[1]), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    pb = order[np.repeat(start, counts) + within]
    new_idx, inverse = merge_plan(np.stack([ia[0][pa], ib[1][pb]]), (n, m))
    out = new_idx.shape[1]
    values = call_jax(name, functools.partial(_pair_products, m=out),
                      [a._sp_values, b._sp_values, jnp.asarray(pa), jnp.asarray(pb),
                       jnp.asarray(inverse)], key=("sp_spmm", out))
    return make(_wrap(jnp.asarray(new_idx)), values, (n, m), True)


@eager_jit(static_argnames=("m",))
def _pair_products(va, vb, pa, pb, inverse, m):
    return jax.ops.segment_sum(va[pa] * vb[pb], inverse, num_segments=m)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, name="AddmmBackward0"):
    if not is_sparse_coo(mat1) or is_sparse_coo(input) or not isinstance(mat2, Tensor):
        raise NotImplementedError("torchish: addmm with a sparse_coo operand is supported for "
                                  "a sparse mat1 only yet")
    if name == "AddmmBackward0":
        _dense_grad_refused(mat1, "torch.addmm")
    _check_mm(mat1, mat2)
    n = mat1._sp_size[0]
    return call_jax(name, functools.partial(_addmm, beta=beta, alpha=alpha, n=n),
                    [input, mat1._sp_values, mat1._sp_indices._data, mat2],
                    key=("sp_addmm", beta, alpha, n))


def sparse_addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    return addmm(mat, mat1, mat2, beta=beta, alpha=alpha, name="SparseAddmmBackward0")


def spmm(a, b):
    """`torch.spmm`: torch.mm for a sparse left operand."""
    if is_sparse_coo(a) or is_sparse_coo(b):
        return mm(a, b)
    from . import mm as dense_mm
    return dense_mm(a, b)


# ---- elementwise products of two sparse tensors ---------------------------------------------

def _coords(s):
    return _linear(np.asarray(s._sp_indices._data), s._sp_size[:s.sparse_dim()])


@eager_jit(static_argnames=("m",))
def _times_summed(src, other, inverse, lookup, m):
    # other's entries summed per coordinate (slot m stays zero: a coordinate other lacks)
    sums = jnp.zeros((m + 1,) + other.shape[1:], other.dtype).at[inverse].add(other)
    return src * sums[lookup]


@eager_jit
def _pairwise(va, vb, ta, tb):
    return va[ta] * vb[tb]


def sparse_mul(a, b):
    """sparse * sparse of equal shapes, as PyTorch's intersection kernel: two coalesced operands
    give their (sorted, coalesced) common entries; otherwise every entry of a "source" operand
    (the uncoalesced one if only one is, else the one with fewer entries, the second on a tie)
    is kept, uncoalesced, times the other's summed value at its coordinate (0 where absent)."""
    if (a.sparse_dim(), a._sp_size) != (b.sparse_dim(), b._sp_size):
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with "
                           "equal dimensionality, number of sparse dimensions, and shape of "
                           "sparse dimensions")
    from . import result_type
    common = result_type(a, b)
    va, vb = a._sp_values.to(common), b._sp_values.to(common)
    if a._sp_coalesced and b._sp_coalesced or not a._nnz() or not b._nnz():
        # (an operand without entries gives an empty, coalesced product too)
        if a._nnz() and b._nnz():
            _, ta, tb = np.intersect1d(_coords(a), _coords(b), assume_unique=True,
                                       return_indices=True)
        else:
            ta = tb = np.zeros(0, np.int64)
        idx = np.asarray(a._sp_indices._data)[:, ta]
        values = call_jax("MulBackward0", _pairwise,
                          [va, vb, jnp.asarray(ta), jnp.asarray(tb)], key=("sp_mul_cc",))
        return make(_wrap(jnp.asarray(idx)), values, a._sp_size, True)
    if a._sp_coalesced != b._sp_coalesced:
        second = a._sp_coalesced
    else:
        second = b._nnz() <= a._nnz()
    src, other, vs, vo = (b, a, vb, va) if second else (a, b, va, vb)
    uniq, inverse = np.unique(_coords(other), return_inverse=True)
    coords = _coords(src)
    slot = np.minimum(np.searchsorted(uniq, coords), max(len(uniq) - 1, 0))
    found = (uniq[slot] == coords) if len(uniq) else np.zeros(len(coords), bool)
    lookup = np.where(found, slot, len(uniq))
    m = len(uniq)
    values = call_jax("MulBackward0", functools.partial(_times_summed, m=m),
                      [vs, vo, jnp.asarray(inverse.reshape(-1)), jnp.asarray(lookup)],
                      key=("sp_mul", m))
    # PyTorch's product reads as (a * b): with b the source the factors commute anyway
    return make(src._sp_indices, values, a._sp_size, False)


def sparse_pow(s, exponent):
    """sparse ** number: the coalesced entries raised (0 ** e stays 0 for e > 0)."""
    if isinstance(exponent, Tensor):
        raise refuse("pow.Tensor_Tensor")
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    s = coalesce(s)
    return make(s._sp_indices, s._sp_values.pow(exponent), s._sp_size, True)


# ---- smm / hspmm ----------------------------------------------------------------------------

def _row_products(a, b, name):
    """PyTorch's checks for `name(a, b)` (a: 2-D sparse, b: 2-D strided), then (the sorted rows
    of `a` holding an entry, the dense rows `a[r] @ b` of those rows)."""
    if is_sparse_coo(b):
        raise RuntimeError("sspaddmm: expected 'mat2' to have strided layout, got 'mat2' with "
                           "layout Sparse" if name == "sspaddmm" else "addmm_sparse_dense: "
                           "expected strided result tensor, got tensor with layout Sparse")
    if a.sparse_dim() != 2:
        raise RuntimeError(f"{name}: Argument #2: matrices expected, got {a.sparse_dim()}D "
                           "tensor")
    if b.ndim != 2:
        raise RuntimeError(f"{name}: Argument #3: matrices expected, got {b.ndim}D tensor")
    if b.shape[0] != a.shape[1]:
        raise RuntimeError(f"{name}: Argument #3: Expected dim 0 size {a.shape[1]}, got "
                           f"{b.shape[0]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype._legacy} but found "
                           f"{b.dtype._legacy}")
    idx = np.asarray(a._sp_indices._data)
    rows, inverse = np.unique(idx[0], return_inverse=True)
    dense = _row_sums(a._sp_values._data, b._data, jnp.asarray(idx[1]),
                      jnp.asarray(inverse.reshape(-1)), m=len(rows))
    return rows.astype(np.int64), dense


@eager_jit(static_argnames=("m",))
def _row_sums(values, b, cols, inverse, m):
    return jax.ops.segment_sum(values[:, None] * b[cols], inverse, num_segments=m)


def _not_differentiable(op, a, b, out):
    from ._ops.call_jax import record_not_implemented
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        f"derivative for aten::{op} is not implemented"), [a._sp_values, b], [out._sp_values])
    return out


def smm(a, b):
    """`torch.smm`: sparse @ dense as a sparse tensor holding every column of each row of `a`
    with an entry (PyTorch computes it through sspaddmm, hence its error names)."""
    if not is_sparse_coo(a):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    rows, dense = _row_products(a, b, "sspaddmm")
    n = b.shape[1]
    idx = np.stack([np.repeat(rows, n), np.tile(np.arange(n, dtype=np.int64), len(rows))])
    out = make(_wrap(jnp.asarray(idx)), _wrap(dense.reshape(-1), b.device),
               (a.shape[0], n), idx.shape[1] <= 1)
    return _not_differentiable("sspaddmm", a, b, out)


def hspmm(a, b):
    """`torch.hspmm`: sparse @ dense as a hybrid tensor (1 sparse dim: the rows of `a` with an
    entry; each value a dense row)."""
    if not is_sparse_coo(a):   # (its only kernels are the sparse and meta ones)
        from ._sparse_ops import _ALWAYS
        raise NotImplementedError(
            "Could not run 'aten::hspmm' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build). If you are a Facebook "
            "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
            "possible resolutions. 'aten::hspmm' is only available for these backends: "
            f"[Meta, SparseCPU, {_ALWAYS}].")
    rows, dense = _row_products(a, b, "hspmm")
    out = make(_wrap(jnp.asarray(rows[None])), _wrap(dense, b.device), (a.shape[0], b.shape[1]),
               len(rows) <= 1)
    return _not_differentiable("hspmm", a, b, out)


# ---- joining and reshaping ------------------------------------------------------------------

def _no_backward(name, inputs, out):
    # PyTorch records these nodes but their backward needs as_strided, which sparse lacks
    from ._ops.call_jax import record_not_implemented
    record_not_implemented(name, refuse("squeeze"), [s._sp_values for s in inputs],
                           [out._sp_values])
    return out


def _with_row(idx, dim, rows):
    """indices with a row inserted at `dim` (rows: one value per entry)."""
    return np.concatenate([idx[:dim], rows[None], idx[dim:]]).astype(np.int64)


def sparse_unsqueeze(s, dim):
    from ._tensor_checks import _wrap_dim
    dim = _wrap_dim(dim, s.ndim + 1)
    size = s._sp_size[:dim] + (1,) + s._sp_size[dim:]
    if dim > s.sparse_dim():   # a new dense dim: the values gain it
        values = s._sp_values.detach().unsqueeze(dim - s.sparse_dim() + 1)
        return _no_backward("UnsqueezeBackward0", [s],
                            make(s._sp_indices, values, size, s._nnz() <= 1))
    idx = np.asarray(s._sp_indices._data)
    new_idx = _with_row(idx, dim, np.zeros(idx.shape[1], np.int64))
    # (PyTorch marks the result coalesced only when it has at most one entry)
    return _no_backward("UnsqueezeBackward0", [s], make(
        _wrap(jnp.asarray(new_idx)), s._sp_values.detach(), size, s._nnz() <= 1))


_RESIZE_HELP = (
    " on a non-empty sparse tensor is not supported.\nYou could try the following options:\n"
    "1. If you need an empty sparse tensor of this size, call `x = torch.sparse_coo_tensor("
    "size)`.\n2. If you need to resize this tensor, you have the following options:\n    1. "
    "For both sparse and dense dimensions, keep the number of them constant and the size of "
    "them non-shrinking, and then try the same call again.\n    2. Or, create a new sparse "
    "tensor with the correct indices and values from this sparse tensor.")


def sparse_resize(s, size, sparse_dim, dense_dim, clear=False):
    """`sparse_resize_`'s result: a non-empty tensor may only grow its dims (its values keep
    their flat order, as PyTorch's storage resize does; new room is zeros where PyTorch's is
    uninitialised); an empty one takes any shape."""
    for k, (name, v) in enumerate((("sparse_dim", sparse_dim), ("dense_dim", dense_dim))):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"sparse_resize_(): argument '{name}' (position {k + 2}) must be "
                            f"int, not {type(v).__name__}")
    size = tuple(int(n) for n in size)
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    values = s._sp_values.detach()
    if s._nnz() == 0 or clear:
        empty = jnp.zeros((0,) + size[sparse_dim:], values._data.dtype)
        return make(_wrap(jnp.zeros((sparse_dim, 0), jnp.int64)), _wrap(empty, values.device),
                    size, s._sp_coalesced or clear)
    old_sp, old_dn = s.sparse_dim(), s.dense_dim()
    for what, old, new in (("sparse", old_sp, sparse_dim), ("dense", old_dn, dense_dim)):
        if old != new:
            raise RuntimeError(f"changing the number of {what} dimensions (from {old} to {new})"
                               + _RESIZE_HELP)
    for what, old, new in (("sparse", s._sp_size[:old_sp], size[:sparse_dim]),
                           ("dense", s._sp_size[old_sp:], size[sparse_dim:])):
        if any(n < o for o, n in zip(old, new)):
            raise RuntimeError(f"shrinking the size of {what} dimensions (from {list(old)} to "
                               f"{list(new)})" + _RESIZE_HELP)
    data = values._data
    if size[sparse_dim:] != s._sp_size[old_sp:]:
        shape = (s._nnz(),) + size[sparse_dim:]
        flat = data.reshape(-1)
        need = int(np.prod(shape))
        data = jnp.concatenate([flat, jnp.zeros(need - flat.size, flat.dtype)]).reshape(shape)
    return make(_wrap(s._sp_indices._data), _wrap(data, values.device), size, s._sp_coalesced)


def _join_checks(tensors, what):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"torch.{what}(): expected a non-empty list of Tensors")
    for k, t in enumerate(tensors):
        if not is_sparse_coo(t):
            raise RuntimeError(f"Concatenating sparse tensors, but a dense tensor was found at "
                               f"position {k}.")
    from . import promote_types
    common = tensors[0].dtype
    for t in tensors[1:]:
        common = promote_types(common, t.dtype)
    return tensors, common


@eager_jit
def _concat_values(*values):
    return jnp.concatenate(values)


def _joined(name, tensors, common, idx, size):
    values = [t._sp_values.to(common) for t in tensors]
    if name == "StackBackward0":   # (PyTorch's stack backward works: slices of the values)
        out = call_jax(name, _concat_values, values, key=("sp_join", len(values)))
        return make(_wrap(jnp.asarray(idx)), out, size, False)
    out = _wrap(jnp.concatenate([v._data for v in values]), values[0].device)
    return _no_backward(name, tensors, make(_wrap(jnp.asarray(idx)), out, size, False))


def sparse_cat(tensors, dim=0):
    from ._tensor_checks import _wrap_dim
    tensors, common = _join_checks(tensors, "cat")
    first = tensors[0]
    dim = _wrap_dim(dim, first.ndim)
    if dim >= first.sparse_dim() or any(t.sparse_dim() != first.sparse_dim()
                                        for t in tensors):
        raise NotImplementedError("torchish: cat() of sparse_coo tensors along a dense "
                                  "dimension is not supported yet")
    for k, t in enumerate(tensors[1:], 1):
        if t.ndim != first.ndim or any(a != b for d, (a, b) in
                                       enumerate(zip(first.shape, t.shape)) if d != dim):
            raise RuntimeError(f"All tensors must have the same shape: {list(first.shape)} "
                               f"(except in the concatenating dimension), but found shape: "
                               f"{list(t.shape)} at position {k}.")
    parts, offset = [], 0
    for t in tensors:   # each one's coordinates shifted along `dim` past the ones before
        idx = np.array(t._sp_indices._data, dtype=np.int64)
        idx[dim] += offset
        offset += t._sp_size[dim]
        parts.append(idx)
    size = first._sp_size[:dim] + (offset,) + first._sp_size[dim + 1:]
    return _joined("CatBackward0", tensors, common, np.concatenate(parts, axis=1), size)


def sparse_stack(tensors, dim=0):
    from ._tensor_checks import _wrap_dim
    tensors, common = _join_checks(tensors, "stack")
    first = tensors[0]
    for k, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != tuple(first.shape):
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first.shape)} at entry 0 and {list(t.shape)} at entry "
                               f"{k}")
    dim = _wrap_dim(dim, first.ndim + 1)
    if dim > first.sparse_dim() or any(t.sparse_dim() != first.sparse_dim() for t in tensors):
        raise NotImplementedError("torchish: stack() of sparse_coo tensors along a dense "
                                  "dimension is not supported yet")
    parts = [_with_row(np.asarray(t._sp_indices._data), dim,
                       np.full(t._nnz(), k, np.int64)) for k, t in enumerate(tensors)]
    size = first._sp_size[:dim] + (len(tensors),) + first._sp_size[dim:]
    return _joined("StackBackward0", tensors, common, np.concatenate(parts, axis=1), size)


# ---- addition -------------------------------------------------------------------------------

def _merge(ia, ib):
    """PyTorch's merge of two entry lists (linear indices, each taken as sorted): equal heads
    sum, the smaller head goes first. -> (taken from a, taken from b) per result entry, -1
    for none."""
    out_a, out_b = [], []
    i = j = 0
    while i < len(ia) or j < len(ib):
        if j == len(ib) or (i < len(ia) and ia[i] < ib[j]):
            out_a.append(i), out_b.append(-1)
            i += 1
        elif i == len(ia) or ib[j] < ia[i]:
            out_a.append(-1), out_b.append(j)
            j += 1
        else:
            out_a.append(i), out_b.append(j)
            i += 1
            j += 1
    return np.asarray(out_a, dtype=np.int64), np.asarray(out_b, dtype=np.int64)


@eager_jit
def _merged(va, vb, ta, tb, alpha):
    # a zero row appended to each side is what index -1 (no entry) picks
    za = jnp.concatenate([va, jnp.zeros((1,) + va.shape[1:], va.dtype)])
    zb = jnp.concatenate([vb, jnp.zeros((1,) + vb.shape[1:], vb.dtype)])
    return za[ta] + alpha * zb[tb]


@eager_jit(static_argnames=("size",))
def _dense_plus(dense, values, idx, alpha, size):
    return dense + alpha * _scatter_dense(values, idx, size)


def add(a, b, *, alpha=1, name="AddBackward0"):
    if not is_sparse_coo(b) or not isinstance(a, Tensor):   # (a number reads as dense)
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a.shape)} != {list(b.shape)}")
    if not is_sparse_coo(a):   # dense + sparse: dense
        _dense_grad_refused(b, "add(dense, sparse)")
        return call_jax(name, functools.partial(_dense_plus, size=b._sp_size),
                        [a, b._sp_values, b._sp_indices._data, alpha], key=("sp_dadd",))
    size = a._sp_size[:a.sparse_dim()]
    ia = np.asarray(a._sp_indices._data)
    ta, tb = _merge(_linear(ia, size), _linear(np.asarray(b._sp_indices._data), size))
    both = np.concatenate([ia, np.asarray(b._sp_indices._data)], axis=1)
    idx = both[:, np.where(ta >= 0, ta, ia.shape[1] + tb)]
    values = call_jax(name, _merged, [a._sp_values, b._sp_values, jnp.asarray(ta),
                                      jnp.asarray(tb), alpha], key=("sp_add",))
    return make(_wrap(jnp.asarray(idx)), values, a._sp_size,
                a._sp_coalesced and b._sp_coalesced)


def sub(a, b, *, alpha=1):
    return add(a, b, alpha=-alpha, name="SubBackward0")


# ---- sums -------------------------------------------------------------------------------

def _dims(s, dim):
    from ._tensor_checks import _wrap_dim
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return sorted({_wrap_dim(d, s.ndim) for d in dims})


def sparse_sum(s, dim=None, dtype=None, name="SparseSumBackward0"):
    if dtype is not None:
        s = s.to(dtype)
    if dim is None:
        return s._sp_values.sum()
    dims = _dims(s, dim)
    sd = s.sparse_dim()
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:   # every sparse dim summed: a dense result
        return s._sp_values.sum((0,) + dense_axes)
    size = tuple(n for d, n in enumerate(s._sp_size) if d not in dims)
    idx = np.asarray(s._sp_indices._data)[keep]
    new_idx, inverse = merge_plan(idx, size[:len(keep)])
    m = new_idx.shape[1]
    values = call_jax(name, functools.partial(_sum_segments, m=m, axes=dense_axes),
                      [s._sp_values, jnp.asarray(inverse)], key=("sp_sum", m, dense_axes))
    return make(_wrap(jnp.asarray(new_idx)), values, size, True)


@eager_jit(static_argnames=("m", "axes"))
def _sum_segments(values, inverse, m, axes):
    if axes:
        values = values.sum(axes)
    return _segment_sum(values, inverse, m)


def sum_(s, dim=None, keepdim=False, *, dtype=None):
    if keepdim:
        raise NotImplementedError("torchish: sum(keepdim=True) of a sparse_coo tensor is not "
                                  "supported")
    return sparse_sum(s, dim, dtype, name="SumBackward1")


# ---- softmax along a dim: among the stored entries (absent ones are -inf) ---------------

def softmax(s, dim, dtype=None, log=False):
    from ._tensor_checks import _wrap_dim
    if dtype is not None:
        s = s.to(dtype)
    s = coalesce(s)
    d = _wrap_dim(dim, s.ndim)
    sd = s.sparse_dim()
    name = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    if d >= sd:   # a dense dim: every entry's own softmax
        fn = jax.nn.log_softmax if log else jax.nn.softmax
        values = call_jax(name, functools.partial(fn, axis=d - sd + 1), [s._sp_values],
                          key=("sp_softmax_dense", d - sd + 1, log))
        return make(s._sp_indices, values, s._sp_size, True)
    keep = [k for k in range(sd) if k != d]
    idx = np.asarray(s._sp_indices._data)[keep]
    _, groups = merge_plan(idx, tuple(s._sp_size[k] for k in keep))
    m = int(groups.max()) + 1 if len(groups) else 0
    values = call_jax(name, functools.partial(_segment_softmax, m=m, log=log),
                      [s._sp_values, jnp.asarray(groups)], key=("sp_softmax", m, log))
    return make(s._sp_indices, values, s._sp_size, True)


@eager_jit(static_argnames=("m", "log"))
def _segment_softmax(values, groups, m, log):
    top = jax.ops.segment_max(values, groups, num_segments=m)[groups]
    shifted = values - jax.lax.stop_gradient(top)
    total = jax.ops.segment_sum(jnp.exp(shifted), groups, num_segments=m)[groups]
    return shifted - jnp.log(total) if log else jnp.exp(shifted) / total


IMPLS = {"mm": mm, "spmm": spmm, "matmul": matmul, "__matmul__": matmul,
         "__rmatmul__": lambda a, b: matmul(b, a), "mv": mv, "addmm": addmm, "bmm": bmm,
         "add": add, "__add__": add, "__radd__": lambda a, b: add(b, a),
         "sub": sub, "__sub__": sub, "sum": sum_, "pow": sparse_pow, "__pow__": sparse_pow,
         "unsqueeze": sparse_unsqueeze, "cat": sparse_cat, "concat": sparse_cat,
         "concatenate": sparse_cat, "stack": sparse_stack}
