"""The bodies of `Module.state_dict` / `load_state_dict` and their per-module steps
(`_save_to_state_dict`, `_load_from_state_dict`), kept in PyTorch's order: key order, hook
firing order and error texts match `torch/nn/modules/module.py`.

`Module` keeps the methods (subclasses override `_save_to_state_dict` / `_load_from_state_dict`
and call `super()`); each method calls the function of the same name here, which calls the
methods back on children so overrides apply all the way down.
"""
import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ...autograd import grad_mode
from ..parameter import Parameter

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def save_to_state_dict(module, destination, prefix, keep_vars, extra_state):
    """`extra_state`: whether the module's class overrides `get_extra_state`."""
    for name, param in module._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if extra_state:
        destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = module.get_extra_state()


def state_dict(module, destination, prefix, keep_vars):
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = dict(version=module._version)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        hook_result = hook(module, destination, prefix, local_metadata)
        if not getattr(hook, "_from_public_api", False):
            if hook_result is not None:
                destination = hook_result
        elif hook_result is not None:
            raise RuntimeError("state_dict post-hook must return None")
    return destination


def load_from_state_dict(module, state_dict, prefix, local_metadata, strict, missing_keys,
                         unexpected_keys, error_msgs, extra_state):
    """`extra_state`: whether the module's class overrides `set_extra_state`."""
    for hook in module._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
             error_msgs)
    persistent_buffers = {k: v for k, v in module._buffers.items()
                          if k not in module._non_persistent_buffers_set}
    local_state = {k: v for k, v in itertools.chain(module._parameters.items(),
                                                    persistent_buffers.items())
                   if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected '
                              "torch.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(input_param)}")
            continue
        if len(param.shape) == 0 and len(input_param.shape) == 1 and \
                input_param.shape[0] == 1:
            input_param = input_param[0]
        if input_param.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{input_param.shape} from checkpoint, the shape in current "
                              f"model is {param.shape}.")
            continue
        if param.is_meta and not input_param.is_meta and not assign:
            warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a "
                          "meta parameter in the current model, which is a no-op. (Did you "
                          "mean to pass `assign=True` to assign items in the state dictionary "
                          "to their corresponding key in the module instead of copying them "
                          "in place?)", stacklevel=2)
        try:
            with grad_mode.no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        if not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param,
                                                    requires_grad=param.requires_grad)
                        else:
                            input_param.requires_grad_(param.requires_grad)
                    setattr(module, name, input_param)
                else:
                    param.copy_(input_param)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose '
                              f"dimensions in the model are {param.size()} and whose "
                              f"dimensions in the checkpoint are {input_param.size()}, an "
                              f"exception occurred : {ex.args}.")
    extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
    if extra_state:
        if extra_state_key in state_dict:
            module.set_extra_state(state_dict[extra_state_key])
        elif strict:
            missing_keys.append(extra_state_key)
    elif strict and extra_state_key in state_dict:
        unexpected_keys.append(extra_state_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_state_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in module._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)


def load_state_dict(module, state_dict, strict, assign):
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    def load(module, local_state_dict, prefix=""):
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                     missing_keys, unexpected_keys, error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state = {k: v for k, v in local_state_dict.items()
                               if k.startswith(child_prefix)}
                load(child, child_state, child_prefix)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in module._load_state_dict_post_hooks.values():
            if hook(module, incompatible) is not None:
                raise AssertionError("Hooks registered with "
                                     "``register_load_state_dict_post_hook`` are not "
                                     "expected to return new values, if incompatible_keys "
                                     "need to be modified, it should be done inplace.")

    load(module, state_dict)
    del load
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            module.__class__.__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)
