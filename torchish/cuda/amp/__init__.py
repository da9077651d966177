"""`torch.cuda.amp`: the deprecated CUDA spellings of `torch.amp`."""
from ...amp._deprecated import (cuda_autocast as autocast, cuda_custom_bwd as custom_bwd,  # noqa
                               cuda_custom_fwd as custom_fwd)
from .grad_scaler import GradScaler  # noqa: F401
from ..._unsupported import module_getattr

__getattr__ = module_getattr(__name__)
