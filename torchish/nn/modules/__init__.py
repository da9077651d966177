"""All module classes. Each file here lists its public classes in `__all__`."""
import importlib
import os

_SUBMODULES = ["module", "container", "linear", "activation", "dropout", "sparse", "flatten",
               "loss", "conv", "pooling", "normalization", "upsampling", "pixelshuffle",
               "fold", "padding", "distance", "rnn", "attention", "transformer", "batchnorm",
               "instancenorm", "lazy", "utils", "adaptive", "linear_cross_entropy"]

__all__ = []
_here = os.path.dirname(__file__)
for _name in _SUBMODULES:
    if not os.path.exists(os.path.join(_here, _name + ".py")):
        continue  # a family not written yet
    _mod = importlib.import_module(f"{__name__}.{_name}")
    for _cls in getattr(_mod, "__all__", ()):
        globals()[_cls] = getattr(_mod, _cls)
        __all__.append(_cls)
