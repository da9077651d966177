"""`torch.utils.data.distributed`: where PyTorch defines DistributedSampler."""
from .sampler import DistributedSampler  # noqa: F401

__all__ = ["DistributedSampler"]
