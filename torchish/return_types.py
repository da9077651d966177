"""`torch.return_types`: the named tuples of multi-output ops (`torch.return_types.max`), every
one `_ops.return_types._rt` made (torchish/__init__.py imports this module after the op
modules that make them)."""
from ._ops.return_types import RETURN_TYPES as _RETURN_TYPES

globals().update(_RETURN_TYPES)
__all__ = sorted(n for n in _RETURN_TYPES if not n.startswith("_"))
