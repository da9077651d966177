"""`torch.*` spellings of functional ops and tensor predicates (PyTorch exposes its ATen
functions at the top level too: `torch.dropout(x, p, train)`, `torch.max_pool2d`,
`torch.detach(x)`). Each is the torchish function or method it names, with ATen's
argument order."""
from . import _ops
from ._tensor import Tensor

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


# PyTorch's unsafe_* split ops alias the input as split does but record their own node
def _unsafe(parts, name):
    for part in parts:
        if part.grad_fn is not None:
            part.grad_fn._name = name
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
