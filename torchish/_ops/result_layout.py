"""The memory layout (strides) of an op's results, as PyTorch's kernels choose it.

An op declares a rule (`op(..., layout=...)`; the pointwise families get `iterator` by
default); the dispatcher hands it the operands and the fresh results, and the rule gives a
result whose strides are not row-major a storage in that memory order (`_memory_layout.lay_out`;
the array in memory order is made only when something reads memory). Values never
change: only `stride()`, `is_contiguous()`, `view`'s checks and `data_ptr` offsets do. A
call whose operands all own their storage (no view: row-major) costs one test.
"""
import functools

import jax

from .._views import contiguous_strides
from .._tensor import _channels_last_contiguous, channels_last, channels_last_3d, preserve_format
from .._memory_layout import (_channels_last_strides, _non_overlapping_and_dense, lay_out,
                              layout_strides, memory_order)

# Python numbers PyTorch passes to these kernels as Scalar arguments; the binary ops' other
# numbers become wrapped 0-d tensors, operands of the iteration (they decide its shape rule)
_SCALAR_ARGUMENTS = frozenset({"pow", "clamp", "clamp_min", "clamp_max", "lerp", "threshold",
                               "square"})


# An operand is keyed by its (size, stride), stride None where it owns a row-major storage;
# a wrapped number is a 0-d operand:
_SCALAR = ((), None)

def _lay_out_all(outs, stride):
    for o in outs:
        if not isinstance(o._storage.data, jax.core.Tracer):   # (no layout inside a trace)
            lay_out(o, stride)


# ---- TensorIterator (pointwise ops) --------------------------------------------------------

def iterator(definition, tensors, outs, statics=None):
    """PyTorch's TensorIterator: the result follows the operands' memory order."""
    for t in tensors:
        if t is not None and t._view is not None:
            break
    else:
        return
    if definition.name in _SCALAR_ARGUMENTS:
        tensors = [t for t in tensors if t is not None]
    key = tuple(_SCALAR if t is None else (t._storage.data.shape, None) if t._view is None
                else (t._view.size, t._view.stride) for t in tensors)
    stride = iterator_strides(outs[0]._storage.data.shape, key)
    if stride is not None:
        _lay_out_all(outs, stride)


@functools.lru_cache(maxsize=4096)
def iterator_strides(shape, operands):
    """The strides of TensorIterator's output of `shape` for operands `(size, stride)`
    (stride None: row-major), or None for row-major ones (its compute_fast_setup_type, then
    compute_strides / reorder_dimensions / allocate_or_resize_outputs)."""
    ndim = len(shape)
    operands = [(size, contiguous_strides(size) if stride is None else stride)
                for size, stride in operands]
    if all(size == shape for size, _ in operands):
        if all(_contiguous(size, stride) for size, stride in operands):
            return None
        if ndim == 4 and all(_channels_last_contiguous(size, stride, 4)
                             for size, stride in operands):
            return _channels_last_strides(shape, 4, "channels_last")
        first = operands[0][1]
        if all(stride == first and _non_overlapping_and_dense(size, stride)
               for size, stride in operands):
            return tuple(first)
    if ndim <= 1:
        return None
    strides = []
    for size, stride in operands:   # a broadcast dim has stride 0
        lead = ndim - len(size)
        strides.append([0] * lead + [0 if n == 1 and shape[lead + i] != 1 else stride[i]
                                     for i, n in enumerate(size)])
    perm = memory_order(shape, *strides)   # innermost first
    if perm == list(range(ndim - 1, -1, -1)):
        return None
    out, acc = [0] * ndim, 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _contiguous(size, stride):
    if 0 in size:   # (an empty tensor counts as contiguous)
        return True
    expected = 1
    for n, s in zip(reversed(size), reversed(stride)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


# ---- copies in the input's layout (empty_like(input, preserve_format)) --------------------

def input_iterator(definition, tensors, outs, statics):
    """An iteration whose other operands PyTorch shapes apart (prelu's weight, seen as
    (1, C, 1, ...)): the input decides the order."""
    iterator(definition, tensors[:1], outs)


def target_iterator(definition, tensors, outs, statics):
    """binary_cross_entropy_with_logits: PyTorch's composite starts from `1 - target` and
    works in place on it, so the target alone decides the order."""
    iterator(definition, tensors[1:2], outs)


def preserve(definition, tensors, outs, statics):
    """A copy laid out as `empty_like(input, memory_format=...)` lays it out (`_to_copy`:
    `x.double()`, `x.to(dtype, memory_format=...)`; no format given: preserve_format)."""
    t, memory_format = tensors[0], statics.get("memory_format")
    if (t._view is not None or memory_format not in (None, preserve_format)) and \
            not isinstance(outs[0]._storage.data, jax.core.Tracer):
        stride = layout_strides(t, memory_format)
        for o in outs:
            lay_out(o, stride)


# ---- kernels writing in the input's suggested memory format (conv, pooling, norms) --------

def suggest_memory_format(t):
    """PyTorch's `Tensor.suggest_memory_format()`: channels_last(_3d) when the strides look
    like it, else contiguous_format (None here)."""
    v = t._view
    if v is None or len(v.size) not in (4, 5) or not _strides_like_channels_last(v.size,
                                                                                v.stride):
        return None
    return channels_last if len(v.size) == 4 else channels_last_3d


@functools.lru_cache(maxsize=1024)
def _strides_like_channels_last(size, stride):
    """PyTorch's is_channels_last_strides_2d / _3d: C innermost, then the spatial dims from
    the last one, then N, ambiguous size-1 cases read as contiguous."""
    if stride[1] == 0:
        return False
    smallest = 0
    for d in (1,) + tuple(range(len(size) - 1, 1, -1)) + (0,):
        if size[d] == 0 or stride[d] < smallest:
            return False
        if d == 0 and smallest == stride[1]:
            return False
        smallest = stride[d] * (size[d] if size[d] > 1 else 1)
    return True


def _in_format(outs, memory_format):
    if memory_format is not None:
        rank = 4 if memory_format is channels_last else 5
        for o in outs:
            if o.ndim == rank and not isinstance(o._storage.data, jax.core.Tracer):
                lay_out(o, _channels_last_strides(tuple(o.shape), rank, ""))


def in_suggested_format(out, input):
    """`out`, a result just made, restrided to `input`'s suggested memory format (ATen's
    adaptive average pooling to 1x1, a mean it restrides). Returns `out`."""
    _in_format([out], suggest_memory_format(input))
    return out


def suggested(definition, tensors, outs, statics):
    """Results in the input's suggested memory format (pooling, batch_norm, upsampling)."""
    _in_format(outs, suggest_memory_format(tensors[0]))


def convolution(definition, tensors, outs, statics):
    """oneDNN's and the slow kernels' rule for 2-d convolutions: channels_last when the input
    or the weight suggests it (the 3-d ones give contiguous results on the CPU)."""
    if outs[0].ndim == 4:
        _in_format(outs, suggest_memory_format(tensors[0]) or suggest_memory_format(tensors[1]))


def pad(definition, tensors, outs, statics):
    """constant, reflection and replication padding keep the suggested format; circular
    padding (slices copied into a new tensor) does not."""
    if statics["mode"] != "circular":
        suggested(definition, tensors, outs, statics)


def cat(definition, tensors, outs, statics):
    """The format every input suggests, else contiguous (its compute_output_memory_format)."""
    formats = {suggest_memory_format(t) for t in tensors if t is not None}
    if len(formats) == 1:
        _in_format(outs, formats.pop())


# ---- which ops follow which rule -----------------------------------------------------------

_BY_MODULE = {"pointwise": iterator, "pointwise_select": iterator, "pointwise_math": iterator,
              "activations": iterator, "special_bessel": iterator, "special_polynomials": iterator}
_BY_NAME = {
    "_to_dtype": preserve,
    "flip": preserve,   # empty_like(self, preserve_format), then filled
    # not the iteration's result: a contiguous clone filled in place (masked_fill), a
    # reduction's (mvlgamma), a contiguous buffer (log_sigmoid), a contiguous output
    # (pow(Scalar, Tensor)), the input or a view of it
    "masked_fill": None, "mvlgamma": None, "logsigmoid": None, "_rpow": None, "conj": None,
    "positive": None,
    "_prelu": input_iterator, "_local_response_norm": input_iterator,
    "_mse_loss": iterator, "_smooth_l1_loss": iterator, "_huber_loss": iterator,
    "_binary_cross_entropy": iterator, "_binary_cross_entropy_with_logits": target_iterator,
    "_soft_margin_loss": iterator,
    "conv1d": convolution, "conv2d": convolution, "conv3d": convolution,
    "conv_transpose2d": convolution, "conv_transpose3d": convolution,
    "max_pool2d": suggested, "max_pool3d": suggested, "avg_pool2d": suggested,
    "_adaptive_avg_pool2d": suggested, "_adaptive_avg_pool3d": suggested,
    "adaptive_max_pool2d": suggested, "adaptive_max_pool3d": suggested,
    "_batch_norm": suggested, "group_norm": suggested, "_upsample": suggested,
    "pixel_shuffle": suggested, "pixel_unshuffle": suggested, "channel_shuffle": suggested,
    "_pad": pad, "cat": cat,
}


def default_layout(name, module):
    """The rule of op `name` declared in `module` when its declaration names none."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _BY_MODULE.get(module.rsplit(".", 1)[-1])
