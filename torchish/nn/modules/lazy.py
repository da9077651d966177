"""Lazy modules: LazyLinear, LazyConv*/LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*.

Their parameters (and buffers) start as `UninitializedParameter`s; the first forward reads
the missing size from its input, materializes them, initialises them exactly as the eager
module would (so the random stream matches PyTorch's), and the module becomes that module's
class (`cls_to_become`). Loading a state dict before the first forward materializes them too.
"""
import torchish
from ..parameter import UninitializedBuffer, UninitializedParameter
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
                            InstanceNorm2d, InstanceNorm3d)

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]

_LAZY = (UninitializedParameter, UninitializedBuffer)


class LazyModuleMixin:
    """The first forward (or a state dict load) materializes the parameters; see the module
    docstring. A class sets `cls_to_become` and writes `initialize_parameters(input)`."""
    cls_to_become = None
    _size_attr = None   # the size the first input gives ("in_features", "in_channels", ...)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(
            LazyModuleMixin._infer_parameters, with_kwargs=True)

    def reset_parameters(self):
        # the eager __init__ calls this with the size still 0: nothing to initialise, and no
        # random numbers drawn (the first forward initialises, as the eager module would)
        if not self.has_uninitialized_params() and getattr(self, self._size_attr) != 0:
            super().reset_parameters()

    def _lazy_weight_and_bias(self, out_attr, out, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        setattr(self, out_attr, out)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def has_uninitialized_params(self):
        return any(isinstance(t, _LAZY) for t in
                   list(self._parameters.values()) + list(self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        # an uninitialized entry takes the shape of the tensor loaded into it
        for table in (self._parameters, self._buffers):
            for name, value in table.items():
                key = prefix + name
                if isinstance(value, _LAZY) and key in state_dict and \
                        not isinstance(state_dict[key], _LAZY):
                    with torchish.no_grad():
                        value.materialize(tuple(state_dict[key].size()))

    @staticmethod
    def _infer_parameters(module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become


class LazyLinear(LazyModuleMixin, Linear):
    """`Linear` whose `in_features` is read from the first input."""
    cls_to_become = Linear
    _size_attr = "in_features"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self._lazy_weight_and_bias("out_features", out_features, bias, device, dtype)

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with torchish.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    """`in_channels` read from the first input (dim 1, or 0 for an unbatched one)."""
    _size_attr = "in_channels"

    def _get_in_channels(self, input):
        unbatched = self._N + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D "
                               f"(batched) input to {self._get_name()}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            with torchish.no_grad():
                self.weight.materialize(shape + tuple(self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


class _LazyNormMixin(LazyModuleMixin):
    """`num_features` read from the first input's channel dim."""
    _size_attr = "num_features"

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = torchish.tensor(0, dtype=torchish.long, device=device)

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with torchish.no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _named(cls, name):
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = __name__
    return cls


def _lazy_conv(eager):
    class LazyConv(_LazyConvMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device=device, dtype=dtype)
            self._lazy_weight_and_bias("out_channels", out_channels, bias, device, dtype)
    return _named(LazyConv, "Lazy" + eager.__name__)


def _lazy_conv_transpose(eager):
    class LazyConvTranspose(_LazyConvMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups,
                             False, dilation, padding_mode, device=device, dtype=dtype)
            self._lazy_weight_and_bias("out_channels", out_channels, bias, device, dtype)
    return _named(LazyConvTranspose, "Lazy" + eager.__name__)


def _lazy_norm(eager):
    return _named(type("LazyNorm", (_LazyNormMixin, eager), {"cls_to_become": eager}),
                  "Lazy" + eager.__name__)


LazyConv1d, LazyConv2d, LazyConv3d = map(_lazy_conv, (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = map(
    _lazy_conv_transpose, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = map(
    _lazy_norm, (BatchNorm1d, BatchNorm2d, BatchNorm3d))
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = map(
    _lazy_norm, (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
