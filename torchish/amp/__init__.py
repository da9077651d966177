"""`torchish.amp`: automatic mixed precision (autocast regions and gradient scaling)."""
from .autocast_mode import (autocast, is_autocast_available, custom_fwd,  # noqa: F401
                            custom_bwd)
from .grad_scaler import GradScaler  # noqa: F401
from .._unsupported import module_getattr

__getattr__ = module_getattr(__name__)
