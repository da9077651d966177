"""PyTorch's `torch.nn.modules.batchnorm` path: the batch norms live in normalization.py here,
but programs import `_BatchNorm` from this name (isinstance checks, update_bn)."""
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm,  # noqa: F401
                            _BatchNorm, _NormBase)

__all__ = []  # re-exported by the package from normalization.py already
