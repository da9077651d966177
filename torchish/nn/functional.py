"""`torchish.nn.functional`: the registry's `nn=True` ops plus the functions in `_functional/`
(each file lists its public names in `__all__`)."""
import importlib as _importlib
import inspect as _inspect
import os as _os

from ..overrides import entry as _entry

from .._ops.registry import functional_ops as _functional_ops

globals().update(_functional_ops())

_FAMILIES = ["activation", "linear", "loss", "dropout", "sparse", "conv", "pooling",
             "normalization", "vision", "distance", "attention", "padding", "rnn",
             "linear_cross_entropy"]
_here = _os.path.join(_os.path.dirname(__file__), "_functional")
for _name in _FAMILIES:
    if not _os.path.exists(_os.path.join(_here, _name + ".py")):
        continue
    _mod = _importlib.import_module(f"{__package__}._functional.{_name}")
    for _fn in getattr(_mod, "__all__", ()):
        _value = getattr(_mod, _fn)
        if _inspect.isfunction(_value):   # dispatches __torch_function__ once, at its entry
            _value = _entry(_value, "torch.nn.functional." + _fn, python=True)
        globals()[_fn] = _value


def conv_tbc(input, weight, bias, pad=0):
    """PyTorch's `F.conv_tbc` is `torch.conv_tbc`: a 1-d convolution over (time, batch,
    channel) input."""
    from .._aten_aliases import conv_tbc as aten
    return aten(input, weight, bias, pad)


from .._unsupported import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
