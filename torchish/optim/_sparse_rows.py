"""Row-wise updates for sparse gradients (SparseAdam, Adagrad): one compiled function per
parameter shape and gradient nnz.

PyTorch's updates are not linear in the gradient, so they coalesce it first; here the
coalescing (a segment sum over the entries' distinct rows) runs inside the compiled update.
The distinct rows are padded up to nnz with an out-of-range row, which gathers zeros and
scatters nowhere: how many distinct rows a batch touches costs no new compile.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._eager_jit import eager_jit


def rows_of(grad):
    """`(values, rows, inverse)` of a sparse gradient: its values array; its distinct (sorted)
    row numbers over the sparse dims, padded to nnz with an out-of-range one; each entry's
    position among them. None for a gradient with no entries."""
    nnz = grad._nnz()
    if nnz == 0:
        return None
    size = tuple(grad.shape[:grad.sparse_dim()])
    idx = np.asarray(grad._indices()._data)
    linear, inverse = np.unique(np.ravel_multi_index(tuple(idx), size), return_inverse=True)
    rows = np.full(nnz, math.prod(size), dtype=np.int64)
    rows[:len(linear)] = linear
    return grad._values()._data, jnp.asarray(rows), jnp.asarray(inverse.reshape(-1))


def _by_rows(fn):
    """`fn(rows_views..., g, rows, *hp)` over arrays viewed as (rows, *dense dims), with `g`
    the coalesced gradient; results are reshaped back."""
    @functools.wraps(fn)
    def run(arrays, values, rows, inverse, *hp, **static):
        shape = arrays[0].shape
        flat = [a.reshape((-1,) + values.shape[1:]) for a in arrays]
        g = jax.ops.segment_sum(values, inverse, num_segments=rows.shape[0])
        return [a.reshape(shape) for a in fn(*flat, g, rows, *hp, **static)]
    return eager_jit(run, static_argnames=("maximize",))


def _get(a, rows):
    return a.at[rows].get(mode="fill", fill_value=0)


@_by_rows
def adam_rows(param, exp_avg, exp_avg_sq, g, rows, beta1, beta2, eps, step_size, maximize):
    """SparseAdam: the moments move towards the gradient only on its rows."""
    g = -g if maximize else g
    old_avg, old_sq = _get(exp_avg, rows), _get(exp_avg_sq, rows)
    avg_update = (g - old_avg) * (1 - beta1)
    sq_update = (g * g - old_sq) * (1 - beta2)
    exp_avg = exp_avg.at[rows].add(avg_update, mode="drop")
    exp_avg_sq = exp_avg_sq.at[rows].add(sq_update, mode="drop")
    denom = jnp.sqrt(sq_update + old_sq) + eps
    param = param.at[rows].add(-step_size * ((avg_update + old_avg) / denom), mode="drop")
    return param, exp_avg, exp_avg_sq


@_by_rows
def adagrad_rows(param, state_sum, g, rows, clr, eps, maximize):
    """Adagrad: squares summed and the step taken on the gradient's rows only."""
    g = -g if maximize else g
    state_sum = state_sum.at[rows].add(g * g, mode="drop")
    std = jnp.sqrt(_get(state_sum, rows)) + eps
    param = param.at[rows].add(-clr * (g / std), mode="drop")
    return param, state_sum
