"""Activation modules (thin wrappers over `nn.functional`, with PyTorch's extra_repr)."""
import warnings

import torchish
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


class _Inplace(Module):
    """Modules whose only option is `inplace` (repr `inplace=True` or nothing)."""
    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


def _inplace_str(m):
    return ", inplace=True" if m.inplace else ""


class Threshold(Module):
    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self)}"


class ReLU(_Inplace):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class RReLU(Module):
    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self)}"


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to "
                          "`min_val`", FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to "
                          "`max_val`", FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):
        return torchish.sigmoid(input)


class Hardsigmoid(Module):
    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    def forward(self, input):
        return torchish.tanh(input)


class SiLU(_Inplace):
    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardswish(Module):
    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class ELU(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self)}"


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    def forward(self, input):
        return F.selu(input, self.inplace)


class GLU(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class Hardshrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self)}"


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(torchish.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class _WithDim(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_WithDim):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax(_WithDim):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_WithDim):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


# PyTorch defines MultiheadAttention in this module; code imports it from here
from .attention import MultiheadAttention  # noqa: E402,F401
