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
           "unsafe_split_with_sizes"]


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


def unsafe_chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    return input.split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


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
