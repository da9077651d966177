"""Sparse COO gradients of embedding weights (`F.embedding`/`F.embedding_bag` with `sparse=True`)
and of `torch.gather(..., sparse_grad=True)`'s input.

The lookup records its usual node (EmbeddingBackward0 / EmbeddingBagBackward0); when its weight
is a leaf, that node's backward gives the weight an uncoalesced sparse gradient as ATen's
`embedding_sparse_backward` builds it: one entry per looked-up index (in input order, padding
entries dropped), the entry's row of the output gradient as its values. The engine accumulates
such gradients with sparse addition (graph.py `_add`, `_accumulate`).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .graph import AccumulateGrad


def _give_sparse(out, weight, rows, traced, scale_grad_by_freq):
    """Make `out`'s node send `weight` the sparse gradient `rows(ct) -> (indices, values)`
    (indices a 1-d int64 NumPy array of rows, or `(sparse_dim, nnz)` coordinates; values an
    `(nnz, ...)` array). Other inputs keep their dense gradients. A weight that is no leaf
    keeps a dense gradient."""
    node = out.grad_fn
    if node is None or node._edges[0] is None or \
            not isinstance(node._edges[0][0], AccumulateGrad):
        return out
    others = any(e is not None for e in node._edges[1:])
    size = tuple(weight.shape)

    def vjp(cts, create_graph):
        from .._sparse_coo import make
        from .._tensor import _wrap
        if scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        if traced or isinstance(cts[0], jax.core.Tracer):
            raise NotImplementedError("torchish: sparse=True embedding gradients inside traced "
                                      "code (torchish.compile, jit) are not supported: use "
                                      "sparse=False")
        if create_graph:
            raise NotImplementedError("torchish: create_graph=True through a sparse embedding "
                                      "gradient is not supported")
        grads = list(node.apply_arrays(cts)) if others else [None] * len(node._edges)
        idx, values = rows(cts[0])
        idx = idx if idx.ndim == 2 else idx[None]
        grads[0] = make(_wrap(jnp.asarray(idx), device=weight.device),
                        _wrap(values, device=weight.device), size, idx.shape[1] <= 1)
        return grads
    node._tensor_vjp = vjp
    return out


def _drop_padding(idx, values, padding_idx):
    if padding_idx is None:
        return idx, values
    keep = np.flatnonzero(idx != padding_idx)
    return idx[keep], values[keep]


def embedding(out, weight, indices, padding_idx, scale_grad_by_freq):
    """`indices`: the lookup's indices as a NumPy array (None when traced)."""
    def rows(ct):
        flat = indices.reshape(-1).astype(np.int64)
        return _drop_padding(flat, ct.reshape(-1, ct.shape[-1]), padding_idx)
    return _give_sparse(out, weight, rows, indices is None, scale_grad_by_freq)


def embedding_bag(out, weight, indices, offsets, per_sample_weights, mode, padding_idx,
                  scale_grad_by_freq):
    """`indices`, `offsets`: NumPy arrays (None when traced)."""
    def rows(ct):
        flat = indices.reshape(-1).astype(np.int64)
        bag = np.searchsorted(offsets, np.arange(flat.size), side="right") - 1
        values = ct[jnp.asarray(bag)]
        if mode == "mean":   # ATen scales each row by 1 / its bag's size (padding not counted)
            sizes = np.bincount(bag[flat != padding_idx], minlength=ct.shape[0])
            values = values * (1 / jnp.asarray(sizes, ct.dtype))[jnp.asarray(bag)][:, None]
        if per_sample_weights is not None:
            values = values * per_sample_weights.detach()._data[:, None]
        return _drop_padding(flat, values, padding_idx)
    traced = indices is None or offsets is None
    return _give_sparse(out, weight, rows, traced, scale_grad_by_freq)


def gather(out, input, dim, index):
    """`torch.gather(input, dim, index, sparse_grad=True)`: one entry per element of `index`
    (row-major), at its position with the `dim` coordinate replaced by the index's value, as
    ATen's `gather_backward` builds it. `index`: a NumPy array (None when traced)."""
    def rows(ct):
        if input.ndim == 0:
            return np.zeros((0, 1), np.int64), ct.reshape(-1)
        coords = np.indices(index.shape).reshape(input.ndim, -1).astype(np.int64)
        coords[dim] = index.reshape(-1)
        return coords, ct.reshape(-1)
    return _give_sparse(out, input, rows, index is None, False)
