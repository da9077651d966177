"""`torchish.autograd`: backward, grad, grad modes, custom Functions."""
from .grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                        is_grad_enabled, is_inference_mode_enabled, set_multithreading_enabled)
from .engine_api import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .anomaly import detect_anomaly, set_detect_anomaly  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from . import graph  # noqa: F401
from .graph import _is_checkpoint_valid  # noqa: F401
# imported before `def variable` below, which (as in PyTorch) then shadows the submodule name
from .variable import Variable  # noqa: F401

# `from torch.autograd import *` (old scripts use it for Variable) gives exactly these names
__all__ = ["Variable", "Function", "backward", "grad_mode", "detect_anomaly", "enable_grad",
           "grad", "gradcheck", "gradgradcheck", "inference_mode", "no_grad",
           "set_detect_anomaly", "set_grad_enabled", "set_multithreading_enabled", "variable"]


def variable(*args, **kwargs):
    """Removed constructor kept only for its error, as in PyTorch."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


def __getattr__(name):
    if name in ("functional", "profiler", "forward_ad"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(name)
