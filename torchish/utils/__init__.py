"""``torchish.utils``: helpers outside the tensor core (data loading, DLPack exchange)."""

from . import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]


def __getattr__(name):
    # loaded on first use only: logging is not needed at `import torchish`
    if name == "tensorboard":
        import importlib
        return importlib.import_module(".tensorboard", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
