"""``torchish.utils``: helpers outside the tensor core (data loading, DLPack exchange,
checkpointing, hook handles; tensorboard and benchmark load on first use)."""

from . import checkpoint, data, dlpack, hooks

__all__ = ["checkpoint", "data", "dlpack", "hooks"]


def __getattr__(name):
    # loaded on first use only: logging and benchmarking are not needed at `import torchish`
    if name in ("tensorboard", "benchmark"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
