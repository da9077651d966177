"""`torch.nn.parallel.distributed`: where PyTorch defines DistributedDataParallel."""
from . import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
