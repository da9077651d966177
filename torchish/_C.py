"""`torch._C`: the few names of PyTorch's C extension that Python code uses directly (the
`__torch_function__` switches); any other name is torchish's UnsupportedError."""
from ._unsupported import module_getattr as _module_getattr
from .overrides import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                        _disabled_torch_function_impl, _get_current_function_mode_stack,
                        _is_torch_function_mode_enabled, _pop_mode as _pop_torch_function_stack,
                        _push_mode as _push_on_torch_function_stack)
from .overrides import MODES as _MODES, STATE as _STATE
from .random import Generator  # noqa: F401  (torch._C.Generator is torch.Generator)


def _is_torch_function_enabled():
    return _STATE[0] == 0


def _is_torch_function_all_disabled():
    return _STATE[0] == 2


def _len_torch_function_stack():
    return len(_MODES)


def _get_function_stack_at(i):
    return _MODES[i]


def _log_api_usage_once(event):
    # PyTorch's usage logging (torchvision calls it from every model): nothing to log here
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")


def _get_tracing_state():
    return None   # torch.jit tracing is never active in torchish


__getattr__ = _module_getattr(__name__)
