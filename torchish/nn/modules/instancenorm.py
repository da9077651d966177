"""PyTorch's `torch.nn.modules.instancenorm` path (the classes live in normalization.py)."""
from .normalization import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,  # noqa: F401
                            _InstanceNorm)

__all__ = []
