"""`torch.return_types`: the named tuples of multi-output ops (`torch.return_types.max`)."""
from ._ops.return_types import RETURN_TYPES as _RETURN_TYPES

globals().update(_RETURN_TYPES)
__all__ = sorted(_RETURN_TYPES)
