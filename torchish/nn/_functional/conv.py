"""`F.conv*` and `F.conv_transpose*`. The ops take batched or unbatched input; an unbatched
call goes through unsqueeze/squeeze here so its graph ends in SqueezeBackward1, as PyTorch's."""
from ..._ops import nn_conv as _conv

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]


def _unbatched(op, nd):
    def fn(input, weight, bias=None, *args, **kwargs):
        if input.ndim == nd + 1:
            return op(input.unsqueeze(0), weight, bias, *args, **kwargs).squeeze(0)
        return op(input, weight, bias, *args, **kwargs)
    return fn


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _CONV[0](input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _CONV[1](input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _CONV[2](input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _CONVT[0](input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _CONVT[1](input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _CONVT[2](input, weight, bias, stride, padding, output_padding, groups, dilation)


_CONV = [_unbatched(f, nd) for nd, f in
         ((1, _conv.conv1d), (2, _conv.conv2d), (3, _conv.conv3d))]
_CONVT = [_unbatched(f, nd) for nd, f in
          ((1, _conv.conv_transpose1d), (2, _conv.conv_transpose2d),
           (3, _conv.conv_transpose3d))]
