"""`torch.autograd.variable`: `Variable` is Tensor, as since PyTorch 0.4."""
from .._tensor import Tensor as Variable  # noqa: F401

__all__ = ["Variable"]
