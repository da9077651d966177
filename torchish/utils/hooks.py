"""`torch.utils.hooks`: the handle that every hook registration returns (modules, tensors,
graph nodes, optimizers), and the markers for hooks that should not be serialized."""
import warnings

from .._hook_handle import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark `f` as a hook that saving a tensor may silently drop."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    for hook in (getattr(tensor, "_backward_hooks", None) or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning")
