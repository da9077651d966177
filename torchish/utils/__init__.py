"""``torchish.utils``: helpers outside the tensor core (data loading, DLPack exchange)."""

from . import data, dlpack

__all__ = ["data", "dlpack"]
