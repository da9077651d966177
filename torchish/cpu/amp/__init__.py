"""`torch.cpu.amp`: the deprecated CPU spellings of `torch.amp`."""
from ...amp._deprecated import cpu_autocast as autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
from ..._unsupported import module_getattr

__getattr__ = module_getattr(__name__)
