"""``torchish.utils``: helpers outside the tensor core (data loading)."""

from . import data

__all__ = ["data"]
