"""`torch.utils.hooks.RemovableHandle`, in a module of its own so that the autograd engine can
import it before `torchish.utils` exists."""
import collections
import weakref


class RemovableHandle:
    """Removes hook `id` from the dict it was registered in (and from `extra_dict`: one dict or a
    list of them). Holds the dicts weakly, as PyTorch does, so a handle keeps nothing alive."""
    __module__ = "torchish.utils.hooks"   # where PyTorch defines it
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extras = [extra_dict] if isinstance(extra_dict, dict) else extra_dict or ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # a dict that is gone by pickling time comes back as a fresh empty one
        hooks, self.id, extras = state
        self.hooks_dict_ref = weakref.ref(collections.OrderedDict() if hooks is None else hooks)
        self.extra_dict_ref = tuple(weakref.ref(collections.OrderedDict() if d is None else d)
                                    for d in extras)
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()
