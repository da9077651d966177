"""The order libstdc++'s `std::sort` leaves equal elements in, for `torch.mode`'s index.

PyTorch's CPU `mode` sorts each row's (value, index) pairs with `std::sort`, comparing values
alone (`a < b`, so a NaN compares false both ways), and reports the index that ends the first
longest run of equal values. `std::sort` is an unstable introsort, so which index that is
depends on the algorithm step for step: a median-of-three pivot moved to the front, an
unguarded Hoare partition, ranges of up to 16 elements left alone, heapsort past a recursion
depth of 2*floor(log2 n), then one insertion sort over the whole row (guarded for its first
16 elements). Rows are short and `mode` is rare, so this runs on the host (a traced `mode`
calls it through `jax.pure_callback`): a JAX port of the same loops cost seconds of XLA
compilation for every new row length.
"""
import numpy as np

_THRESHOLD = 16


def mode_indices(rows):
    """rows: (..., n) array -> (...) int64: the index PyTorch's CPU `mode` reports per row."""
    flat = np.asarray(rows).reshape(-1, rows.shape[-1])
    if flat.dtype == np.bool_:
        flat = flat.astype(np.uint8)
    out = np.fromiter((_mode_index(row.tolist()) for row in flat), np.int64, len(flat))
    return out.reshape(rows.shape[:-1])


def _mode_index(values):
    pairs = list(zip(values, range(len(values))))
    std_sort(pairs)
    best_index, best_len, run = 0, 0, 0
    for i, (value, index) in enumerate(pairs):
        run += 1
        if i == len(pairs) - 1 or value != pairs[i + 1][0]:   # a run ends (NaN != NaN)
            if run > best_len:
                best_index, best_len = index, run
            run = 0
    return best_index


def std_sort(v):
    """Sort a list of (key, payload) pairs in place by key, exactly as libstdc++ does."""
    n = len(v)
    if n > 1:
        _introsort(v, 0, n, 2 * (n.bit_length() - 1))
    if n > _THRESHOLD:
        _insertion_sort(v, 0, _THRESHOLD)
        for i in range(_THRESHOLD, n):
            _linear_insert(v, i)
    else:
        _insertion_sort(v, 0, n)


def _introsort(v, first, last, depth):
    while last - first > _THRESHOLD:
        if depth == 0:
            _heapsort(v, first, last)
            return
        depth -= 1
        cut = _partition_pivot(v, first, last)
        _introsort(v, cut, last, depth)   # (depth-bounded: at most 2*log2(n) deep)
        last = cut


def _partition_pivot(v, first, last):
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    ka, kb, kc = v[a][0], v[b][0], v[c][0]
    if ka < kb:
        median = b if kb < kc else (c if ka < kc else a)
    else:
        median = a if ka < kc else (c if kb < kc else b)
    v[first], v[median] = v[median], v[first]
    pivot = v[first][0]
    lo, hi = first + 1, last
    while True:
        while v[lo][0] < pivot:
            lo += 1
        hi -= 1
        while pivot < v[hi][0]:
            hi -= 1
        if not lo < hi:
            return lo
        v[lo], v[hi] = v[hi], v[lo]
        lo += 1


def _heapsort(v, first, last):
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(v, first, parent, length, v[first + parent])
    while last - first > 1:
        last -= 1
        value, v[last] = v[last], v[first]
        _adjust_heap(v, first, 0, last - first, value)


def _adjust_heap(v, first, hole, length, value):
    top = second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if v[first + second][0] < v[first + second - 1][0]:
            second -= 1
        v[first + hole] = v[first + second]
        hole = second
    if length % 2 == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        v[first + hole] = v[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and v[first + parent][0] < value[0]:
        v[first + hole] = v[first + parent]
        hole, parent = parent, (parent - 1) // 2
    v[first + hole] = value


def _insertion_sort(v, first, last):
    for i in range(first + 1, last):
        if v[i][0] < v[first][0]:
            v[first + 1:i + 1], v[first] = v[first:i], v[i]
        else:
            _linear_insert(v, i)


def _linear_insert(v, i):
    value, j = v[i], i - 1
    while value[0] < v[j][0]:
        v[j + 1] = v[j]
        j -= 1
    v[j + 1] = value
