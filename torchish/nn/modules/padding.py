"""Padding modules: Zero/Constant/Reflection/Replication/Circular Pad 1d, 2d, 3d."""
from collections.abc import Iterable
from itertools import repeat

from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d"]


def _ntuple(n, x):
    if isinstance(x, Iterable):
        return tuple(x)
    return tuple(repeat(x, n))


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = None
    _n = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._n, padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        if input.dim() not in (self._n + 1, self._n + 2):
            raise ValueError(f"expected {self._n + 1}D or {self._n + 2}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    _n = 1


class CircularPad2d(_CircularPadNd):
    _n = 2


class CircularPad3d(_CircularPadNd):
    _n = 3


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _ntuple(2 * self._n, padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    _n = 3


class ReflectionPad1d(_PadNd):
    _mode, _n = "reflect", 1


class ReflectionPad2d(_PadNd):
    _mode, _n = "reflect", 2


class ReflectionPad3d(_PadNd):
    _mode, _n = "reflect", 3


class ReplicationPad1d(_PadNd):
    _mode, _n = "replicate", 1


class ReplicationPad2d(_PadNd):
    _mode, _n = "replicate", 2


class ReplicationPad3d(_PadNd):
    _mode, _n = "replicate", 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
