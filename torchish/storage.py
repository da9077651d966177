"""`torch.storage`: the module PyTorch's storage classes live in."""
from ._storage_classes import TypedStorage, UntypedStorage

__all__ = ["UntypedStorage", "TypedStorage"]
