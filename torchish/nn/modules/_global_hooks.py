"""Hooks common to all modules: PyTorch's global registration functions
(`torch.nn.modules.module.register_module_forward_hook` ...), importable from `module.py` too.

`Module` reads these dicts on every call; `_global_is_full_backward_hook` is rebound here, so it
is read as an attribute of this module.
"""
from collections import OrderedDict

from ..utils._hooks import RemovableHandle

_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def _add(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    handle = RemovableHandle(_global_forward_hooks,
                             extra_dict=[_global_forward_hooks_always_called,
                                         _global_forward_hooks_with_kwargs])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = True
    return _add(_global_backward_hooks, hook)
