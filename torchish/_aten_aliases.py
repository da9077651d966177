"""`torch.*` spellings of functional ops and tensor predicates (PyTorch exposes its ATen
functions at the top level too: `torch.dropout(x, p, train)`, `torch.max_pool2d`,
`torch.detach(x)`). Each is the torchish function or method it names, with ATen's
argument order."""
from . import _dtype as dt, _ops
from ._ops import native_norms as _native
from ._tensor import Tensor
from ._ops.arg_parser import REQUIRED

__all__ = ["detach", "adjoint", "is_conj", "is_neg", "resolve_conj", "resolve_neg",
           "is_signed", "is_inference", "get_device", "dropout", "dropout_", "alpha_dropout",
           "alpha_dropout_", "feature_dropout", "feature_dropout_", "feature_alpha_dropout",
           "feature_alpha_dropout_", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d", "prelu", "rrelu", "rrelu_",
           "embedding", "empty_strided", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes", "kl_div", "binary_cross_entropy_with_logits",
           "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
           "poisson_nll_loss", "triplet_margin_loss", "ctc_loss", "batch_norm", "instance_norm",
           "bilinear", "convolution", "constant_pad_nd", "rnn_tanh_cell", "rnn_relu_cell",
           "lstm_cell", "gru_cell"]


def _method(name):
    def fn(input):
        return getattr(Tensor, name)(input)
    fn.__name__ = fn.__qualname__ = name
    return fn


detach, adjoint, is_conj, is_neg, resolve_conj, resolve_neg, is_signed, is_inference, \
    get_device = map(_method, ("detach", "adjoint", "is_conj", "is_neg", "resolve_conj",
                               "resolve_neg", "is_signed", "is_inference", "get_device"))


def _F():
    from .nn import functional
    return functional


def dropout(input, p, train):
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train, inplace=False):
    # channel-wise: every (sample, channel) slice kept or dropped whole
    F = _F()
    drop = {2: F.dropout, 3: F.dropout1d, 4: F.dropout2d, 5: F.dropout3d}.get(input.dim())
    if drop is None:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return drop(input, p, train, inplace)


def feature_dropout_(input, p, train):
    return feature_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _F().max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _F().avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """(values, indices), as ATen's (F's returns indices only when asked)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def prelu(input, weight):
    return _F().prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _F().rrelu(input, lower, upper, training, inplace=True)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with these strides: a strided view of a fresh storage just
    large enough for it."""
    size, stride = tuple(size), tuple(stride)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    base = _ops.creation.empty(extent, dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.requires_grad_() if requires_grad else out


def _renamed(t, name):
    """`t` with its node reported as PyTorch's `name` (an op PyTorch records under its own
    node name but computes as the torchish op that made `t`)."""
    from .autograd.graph import _NODE_CLASSES, _node_class
    node = t.grad_fn
    if node is not None:
        node._name = name
        node.__class__ = _NODE_CLASSES.get(name) or _node_class(name)
    return t


# PyTorch's unsafe_* split ops alias the input as split does but record their own node
def _unsafe(parts, name):
    for part in parts:
        _renamed(part, name)
    return parts


def unsafe_chunk(input, chunks, dim=0):
    return _unsafe(input.chunk(chunks, dim), "UnsafeSplitBackward0")


def unsafe_split(input, split_size, dim=0, *, _position=2):
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position {_position}) must be "
                        f"int, not {type(split_size).__name__}")
    return _unsafe(input.split(split_size, dim), "UnsafeSplitBackward0")


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _unsafe(input.split(list(split_sizes), dim), "UnsafeSplitWithSizesBackward0")


Tensor.unsafe_chunk, Tensor.unsafe_split_with_sizes = unsafe_chunk, unsafe_split_with_sizes
Tensor.unsafe_split = lambda self, split_size, dim=0: unsafe_split(self, split_size, dim,
                                                                   _position=1)
Tensor.prelu = prelu


# ---- losses: ATen takes `reduction` as an int (0 none, 1 mean, 2 sum; others reduce nothing).
# Its schemas default to 1, but PyTorch's Python bindings cannot read that default and reduce
# nothing when `reduction` is left out: so do these.

def _reduction(reduction):
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def kl_div(input, target, reduction=0, *, log_target=False):
    from .nn._functional.loss import aten_kl_div
    return aten_kl_div(input, target, _reduction(reduction), log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return _F().binary_cross_entropy_with_logits(input, target, weight,
                                                 reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _reduction(reduction), zero_infinity)


# ---- layers in ATen's argument order

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                           eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def bilinear(input1, input2, weight, bias=None):
    return _F().bilinear(input1, input2, weight, bias)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """`conv{1,2,3}d` / `conv_transpose{1,2,3}d` by the weight's spatial dims."""
    nd = weight.dim() - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"Expected {weight.dim()}D (unbatched) or {weight.dim() + 1}D "
                           f"(batched) input to conv, but got input of size: "
                           f"{list(input.shape)}")
    F = _F()
    if transposed:
        return getattr(F, f"conv_transpose{nd}d")(input, weight, bias, tuple(stride),
                                                  tuple(padding), tuple(output_padding),
                                                  groups, tuple(dilation))
    return getattr(F, f"conv{nd}d")(input, weight, bias, tuple(stride), tuple(padding),
                                    tuple(dilation), groups)


def constant_pad_nd(input, pad, value=0):
    return _F().pad(input, pad, "constant", value)


def _cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode):
    """A recurrent cell step over explicit weights, as the nn cells run it."""
    from types import SimpleNamespace
    from .nn.modules.rnn import _cell_step
    cell = SimpleNamespace(input_size=w_ih.shape[1], hidden_size=w_hh.shape[1],
                           weight_ih=w_ih, weight_hh=w_hh, bias_ih=b_ih, bias_hh=b_hh)
    return _cell_step(cell, input, hx, cx, mode)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell(input, hx, None, w_ih, w_hh, b_ih, b_hh, "RNN_TANH")


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell(input, hx, None, w_ih, w_hh, b_ih, b_hh, "RNN_RELU")


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell(input, hx, None, w_ih, w_hh, b_ih, b_hh, "GRU")


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    from .nn.modules.rnn import check_lstm_state
    check_lstm_state(hx)
    return _cell(input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh, "LSTM")


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       requires_grad=False, pin_memory=False):
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


Tensor.new_empty_strided = _new_empty_strided


def _stft_method(self, *args, **kwargs):
    from .fft import _stft
    return _stft(self, *args, **kwargs)


def _istft_method(self, *args, **kwargs):
    from .fft import _istft
    return _istft(self, *args, **kwargs)


Tensor.stft, Tensor.istft = _stft_method, _istft_method


# ---- ATen's native kernels and other ATen-only spellings (sweep 19)

def _no_grad():
    from .autograd.grad_mode import no_grad
    return no_grad()


def _stats(input, dims, eps, *params):
    """(mean, 1 / sqrt(biased var + eps)) over `dims`, kept, as the native norms return
    them: not differentiable, in the input's dtype (computed in float32 for a half one, and
    kept float32 when a parameter is: autocast's mix)."""
    with _no_grad():
        x = input.detach()
        half = x.dtype in (dt.float16, dt.bfloat16)
        x = x.float() if half else x
        mean = x.mean(dims, keepdim=True)
        rstd = (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()
        if half and any(p is not None and p.dtype is dt.float32 for p in params):
            return mean, rstd
        return mean.to(input.dtype), rstd.to(input.dtype)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    dims = tuple(range(input.dim() - k, input.dim()))
    if input.dtype in (dt.float16, dt.bfloat16):
        # PyTorch's half kernel's own summation order, for its exact statistics
        from ._tensor import _wrap
        from ._ops.nn_norm import half_layer_stats, _saved_stats
        x = input.detach()._data
        stats = _saved_stats(x.dtype, *(None if p is None else p._data
                                        for p in (weight, bias)))
        return (out,) + tuple(_wrap(v) for v in half_layer_stats(x, dims, eps, x.dtype, stats))
    return (out,) + _stats(input, dims, eps, weight, bias)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd): the batch statistics when training, empty else."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                          eps)
    if not training:
        empty = _ops.creation.empty(0, dtype=input.dtype)
        return out, empty, empty.clone()
    mean, invstd = _stats(input, (0,) + tuple(range(2, input.dim())), eps, weight, bias,
                          running_mean, running_var)
    return out, mean.reshape(-1), invstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    # PyTorch's order: mixed-type check, groups, kernel dtype, size, parameter dtypes
    from ._ops.nn_norm import _check_kernel_dtypes, _check_mixed
    arrays = [None if t is None else t._data for t in (input, weight, bias)]
    mixed = _check_mixed(*arrays)
    if C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    _check_kernel_dtypes("GroupNormKernelImpl", arrays[0], mixed)
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    _check_kernel_dtypes("GroupNormKernelImpl", arrays[0], mixed, *arrays[1:])
    return _native._native_group_norm(input, weight, bias, N, C, HxW, group, eps)


def native_dropout(input, p, train):
    """(output, keep mask): PyTorch draws the mask as `dropout` does, so a seed gives both
    the same output."""
    if train is not None and not train:
        return _native._native_dropout(input, _ops.creation.ones_like(input)), \
            _ops.creation.ones_like(input, dtype=dt.bool)
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype._legacy}")
    if not 0 <= 1 - p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    with _no_grad():
        noise = _ops.creation.empty_like(input).bernoulli_(1 - p)
        mask = noise.bool()
        if p < 1:
            noise.div_(1 - p)
    return _native._native_dropout(input, noise), mask


def native_norm(input, *args, **kwargs):
    # PyTorch has a sparse kernel only
    raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                              "'CPU' backend. This could be because the operator doesn't exist "
                              "for this backend, or was omitted during the selective/custom "
                              "build process (if using custom build).")


_WARNED = set()


def _deprecated(name, instead):
    # (PyTorch warns once per process)
    import warnings
    if name in _WARNED:
        return
    _WARNED.add(name)
    warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It will "
                  f"be removed in a future PyTorch release. Please use `{instead}` instead",
                  UserWarning, stacklevel=3)


def _floating_norm(input):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype._legacy} instead.")


def frobenius_norm(input, dim=REQUIRED, keepdim=False):
    if dim is REQUIRED:
        raise TypeError('frobenius_norm() missing 1 required positional arguments: "dim"')
    _deprecated("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    _floating_norm(input)
    from . import linalg
    # (PyTorch routes it through at::norm)
    return _renamed(linalg.vector_norm(input, 2, dim, keepdim), "NormBackward1")


def nuclear_norm(input, dim=None, keepdim=False):
    """`nuclear_norm(input, keepdim=False)` or `nuclear_norm(input, dim, keepdim=False)`."""
    _deprecated("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    from . import linalg
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def _dense_strides(t):
    """The strides a clone of `t` gets: its own where they lay it out densely without
    overlap (in some dim order), row-major otherwise."""
    shape, stride = tuple(t.shape), t.stride()
    dims = sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: stride[d])
    expect = 1
    for d in dims:
        if stride[d] != expect:
            return t.contiguous().stride()
        expect *= shape[d]
    return stride


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    from ._ops.shape import check_strided
    size, stride = tuple(size), tuple(stride)
    offset = 0 if storage_offset is None else storage_offset
    check_strided(size, stride, offset, input.dtype.itemsize, input.nbytes)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    if input.requires_grad and not input.is_contiguous():
        from .autograd.grad_mode import is_grad_enabled
        if is_grad_enabled():   # (PyTorch's internal assert; its gradient reads row-major)
            raise RuntimeError("!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT "
                               "FAILED. as_strided_scatter is currently only supported for "
                               "contiguous inputs")
    return _native._as_strided_scatter(input, src, size, stride, offset, _dense_strides(input))


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """A view of `input`'s storage laid out as `src` is (PyTorch reads only src's geometry)."""
    return _renamed(input.as_strided(tuple(src.shape), src.stride(), src.storage_offset()),
                    "SliceInverseBackward0")


Tensor.as_strided_scatter, Tensor.slice_inverse = as_strided_scatter, slice_inverse


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                           return_indices=True)


def conv_tbc(input, weight, bias, pad=0):
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    if not isinstance(pad, int) or isinstance(pad, bool):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not "
                        f"{type(pad).__name__}")
    length = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if length < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                           f"[{length}, {input.shape[1]}, {weight.shape[2]}]")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{input.dtype._legacy} and {weight.dtype._legacy}")
    return _native._conv_tbc(input, weight, bias, pad)


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices), the bookkeeping tensors as PyTorch's CPU
    kernel fills them (its sum mode leaves most of them zero or empty)."""
    from ._ops.creation_ranges import arange
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    C = _ops.creation
    out = _F().embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                             _BAG_MODES[mode], sparse, per_sample_weights, include_last_offset,
                             padding_idx)
    n_bags = out.shape[0]
    with _no_grad():
        flat = indices.reshape(-1).long()
        if indices.dim() == 2:
            offsets = arange(0, flat.numel(), indices.shape[1])
        starts = offsets.long()[:n_bags]
        offset2bag = (arange(flat.numel())[:, None] >= starts[None, :]).sum(1) - 1
        member = offset2bag[:, None] == arange(n_bags)[None, :]
        if padding_idx is not None:
            member = member & (flat != padding_idx % weight.shape[0])[:, None]
        bag_size = member.long().sum(0)
        if mode == 0:
            zeros = C.zeros(n_bags, dtype=dt.int64)
            return out, offset2bag if padding_idx is not None else C.empty(0, dtype=dt.int64), \
                zeros, zeros.clone()
        if mode == 1:
            return out, offset2bag, bag_size, bag_size.clone()
        rows = weight.detach()[flat]
        low = C.full((), float("-inf"), dtype=rows.dtype)
        scored = rows[:, None, :].where(member[:, :, None], low)
        first = scored.argmax(0)
        max_indices = flat[first].where(bag_size[:, None] > 0, C.zeros((), dtype=dt.int64))
        return out, offset2bag, bag_size, max_indices


def embedding_renorm_(input, indices, max_norm, norm_type):
    from .autograd.grad_mode import is_grad_enabled
    from .nn._functional.sparse import _embedding_renorm_
    if input.requires_grad and input.grad_fn is None and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{indices.type()} instead (while checking arguments for "
                           f"embedding_renorm_)")
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"embedding_renorm_)")
    _embedding_renorm_(input, indices, max_norm, norm_type)
    return input


_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, nd):
    if nd and (input.dim() != nd + 2 or grid.dim() != nd + 2):
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same "
                           f"number of dimensions, but got input with sizes "
                           f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
    return _F().grid_sample(input, grid, _GRID_MODES[interpolation_mode],
                            _GRID_PADDINGS[padding_mode], align_corners)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 0)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 2)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 3)


def affine_grid_generator(theta, size, align_corners):
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return _F().affine_grid(theta, list(size), align_corners)


def conj_physical_(input):
    return input.conj_physical_()


def _rlshift(self, other):
    return _ops.REGISTRY["bitwise_left_shift"].function(other, self)


def _rrshift(self, other):
    return _ops.REGISTRY["bitwise_right_shift"].function(other, self)


def _delitem(self, key):
    raise TypeError("Tensor does not support deleting items")


def set_flush_denormal(mode):
    """True, as PyTorch's x86 CPU build answers (it supports the mode). XLA's CPU kernels
    flush denormals to zero whatever the mode: `False` cannot bring them back."""
    return True


def init_num_threads():
    return None


def detach_copy(input):
    """A detached copy; PyTorch still records a node for it, whose backward refuses."""
    from ._ops.call_jax import record_not_implemented
    out = input.detach().clone()
    record_not_implemented("torch::autograd::NotImplemented", RuntimeError(
        "derivative for aten::detach_copy is not implemented"), [input], [out])
    return out


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    n = input.dim()
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        dims = tuple(range(n))
    else:
        from ._ops.shape import _wrap_dim
        given = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = () if n == 0 else tuple(sorted({_wrap_dim(d, n) for d in given}))
        for d in given:   # (PyTorch names the dim as given)
            if n and input.shape[_wrap_dim(d, n)] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero "
                                 f"size.")
    return _native._hash_tensor(input, dims, keepdim)


Tensor.hash_tensor = hash_tensor


def values_copy(input):
    # (a sparse tensor's values: torchish tensors are all strided)
    raise RuntimeError("values expected sparse tensor layout but got Strided")


def is_distributed(input):
    return False


Tensor.__rlshift__, Tensor.__rrshift__, Tensor.__delitem__ = _rlshift, _rrshift, _delitem
Tensor.is_distributed = is_distributed

from ._ops.copy_variants import as_strided_copy, view_as_complex_copy  # noqa: E402
from ._ops.fake_quant import (fake_quantize_per_channel_affine,  # noqa: E402
                               fake_quantize_per_tensor_affine)

__all__ += ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout",
            "native_norm", "frobenius_norm", "nuclear_norm", "as_strided_scatter",
            "slice_inverse", "max_pool1d_with_indices", "conv_tbc", "embedding_bag",
            "embedding_renorm_", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
            "affine_grid_generator", "conj_physical_", "set_flush_denormal",
            "init_num_threads", "is_distributed", "as_strided_copy", "detach_copy",
            "hash_tensor", "values_copy", "view_as_complex_copy"]
__all__ += ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]
