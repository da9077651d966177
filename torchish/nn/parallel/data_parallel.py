"""`torch.nn.parallel.data_parallel`: where PyTorch defines DataParallel."""
from . import DataParallel  # noqa: F401

__all__ = ["DataParallel"]
