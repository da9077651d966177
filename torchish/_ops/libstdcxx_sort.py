"""The order libstdc++'s algorithms leave equal elements in, for the indices PyTorch's CPU
kernels report among ties: `mode` (std::sort), `sort(stable=False)` (std::sort), `topk`
(std::partial_sort, or std::nth_element then std::sort), and `kthvalue` (PyTorch's own
Sedgewick quickselect). The emulations below replay those loops step for step on (key,
payload) pairs whose keys `order_keys` builds so that `<` is the kernel's comparator.

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
import functools

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
    _make_heap(v, first, last)
    _sort_heap(v, first, last)


def _make_heap(v, first, last):
    length = last - first
    for parent in range((length - 2) // 2, -1, -1):
        _adjust_heap(v, first, parent, length, v[first + parent])


def _sort_heap(v, first, last):
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


# ---- selection: std::nth_element, std::partial_sort, PyTorch's quickselect -------------------

def order_keys(values, descending=False):
    """int64 keys whose `<` is PyTorch's CPU comparator for sorting `values` (any shape):
    NaN after every number (before, descending), -0.0 equal to 0.0, equal values equal."""
    a = np.asarray(values)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        f = a.astype(np.float64) + 0.0            # (-0.0 + 0.0 is 0.0)
        bits = f.view(np.int64)
        keys = np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)
        keys = np.where(np.isnan(f), np.int64(np.iinfo(np.int64).max), keys)
    else:
        keys = a.astype(np.int64)
    return ~keys if descending else keys


def nth_element(v, nth):
    """libstdc++'s std::nth_element (introselect) of a list of (key, payload) pairs."""
    first, last = 0, len(v)
    if nth >= last:
        return
    depth = 2 * (last.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last)


def partial_sort(v, middle):
    """libstdc++'s std::partial_sort: a heap of the first `middle`, then heap-sorted."""
    _heap_select(v, 0, middle, len(v))
    _sort_heap(v, 0, middle)


def _heap_select(v, first, middle, last):
    _make_heap(v, first, middle)
    for i in range(middle, last):
        if v[i][0] < v[first][0]:
            value, v[i] = v[i], v[first]
            _adjust_heap(v, first, 0, middle - first, value)


def topk_order(keys, k, sorted_=True):
    """The indices PyTorch's CPU topk picks from one row of `order_keys` (descending for
    largest): partial_sort when k * 64 <= n, else nth_element at k - 1 and (sorted) a
    std::sort of the k - 1 before it."""
    n = len(keys)
    v = list(zip(keys, range(n)))
    if k * 64 <= n:
        partial_sort(v, k)
    else:
        nth_element(v, k - 1)
        if sorted_ and k > 2:
            head = v[:k - 1]
            std_sort(head)
            v[:k - 1] = head
    return [i for _, i in v[:k]]


def sort_order(keys):
    """The permutation std::sort leaves one row of `order_keys` in."""
    v = list(zip(keys, range(len(keys))))
    std_sort(v)
    return [i for _, i in v]


def quickselect_index(keys, k):
    """The index PyTorch's CPU kthvalue reports: its quickselect (Sedgewick's median-of-three
    partition, swapping (value, index) pairs) run to position k (0-based) of one row of
    ascending `order_keys`."""
    v = list(keys)
    at = list(range(len(v)))

    def swap(i, j):
        v[i], v[j] = v[j], v[i]
        at[i], at[j] = at[j], at[i]

    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if v[lo] > v[hi]:
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if v[lo + 1] > v[hi]:
            swap(lo + 1, hi)
        if v[lo] > v[hi]:
            swap(lo, hi)
        if v[lo + 1] > v[lo]:
            swap(lo + 1, lo)
        i, j, pivot = lo + 1, hi, v[lo]
        while True:
            i += 1
            while pivot > v[i]:
                i += 1
            j -= 1
            while v[j] > pivot:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return at[k]


@functools.lru_cache(maxsize=256)
def all_equal_nth(n, nth):
    """The original position of the element std::nth_element leaves at `nth` in a row of n
    equivalent elements (nanmedian's index for an all-NaN row)."""
    v = [(0, i) for i in range(n)]
    nth_element(v, nth)
    return v[nth][1]
