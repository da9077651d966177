"""`Identity`, `Linear`, `Bilinear`, `LazyLinear` (initialised exactly as PyTorch)."""
import math

import torchish
from .. import functional as F, init
from ..parameter import Parameter, UninitializedParameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torchish.empty((out_features, in_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(torchish.empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    pass


class Bilinear(Module):
    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(torchish.empty((out_features, in1_features, in2_features),
                                               **factory_kwargs))
        if bias:
            self.bias = Parameter(torchish.empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _materialize(param, shape, dtype, device):
    param.data = torchish.empty(shape, dtype=dtype, device=device)
    param.__class__ = Parameter


class LazyLinear(Linear):
    """`Linear` whose `in_features` is read from the first input; then it becomes a Linear."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self._factory = {"device": device, "dtype": dtype}
        self.weight = UninitializedParameter()
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter()
        self._lazy_hook = self.register_forward_pre_hook(LazyLinear._infer)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with torchish.no_grad():
                self.in_features = input.shape[-1]
                dtype = self._factory["dtype"] or torchish.get_default_dtype()
                _materialize(self.weight, (self.out_features, self.in_features), dtype,
                             self._factory["device"])
                if self.bias is not None:
                    _materialize(self.bias, (self.out_features,), dtype,
                                 self._factory["device"])
                self.reset_parameters()

    @staticmethod
    def _infer(module, args):
        module.initialize_parameters(*args)
        if not module.has_uninitialized_params():
            module._lazy_hook.remove()
            del module._lazy_hook
            del module._factory
            module.__class__ = module.cls_to_become
