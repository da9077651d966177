"""`torch.nn.utils.spectral_norm` / `remove_spectral_norm`: the hook-based spectral
normalization (still in most GAN code): the parameter moves to `<name>_orig`, the power
iteration's vectors live in the buffers `<name>_u` and `<name>_v`, and a forward pre-hook sets
the plain attribute `<name>` to `<name>_orig / sigma` before every call, running
`n_power_iterations` steps of the power iteration first while the module trains."""
import torchish
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter
from ._hooks import pop_forward_pre_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    # version 1 keeps `_v` in the state dict; older checkpoints (no version) hold the
    # normalized weight instead, from which `_v` is solved on load
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix whose rows run along `dim`."""
        if self.dim != 0:
            order = [self.dim] + [d for d in range(weight.dim()) if d != self.dim]
            weight = weight.permute(tuple(order))
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with torchish.no_grad():
                for _ in range(self.n_power_iterations):
                    # the buffers are updated in place: the estimate carries over calls
                    F.normalize(torchish.mv(matrix.t(), u), dim=0, eps=self.eps, out=v)
                    F.normalize(torchish.mv(matrix, v), dim=0, eps=self.eps, out=u)
                # copies, so that backward does not see the buffers change in place
                u = u.clone(memory_format=torchish.contiguous_format)
                v = v.clone(memory_format=torchish.contiguous_format)
        sigma = torchish.dot(u, torchish.mv(matrix, v))
        return weight / sigma

    def remove(self, module):
        with torchish.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, matrix, u, target_sigma):
        # the v with u = normalize(W v) and u^T W v = sigma (least squares via the pseudoinverse)
        v = torchish.linalg.multi_dot([matrix.t().mm(matrix).pinverse(), matrix.t(),
                                       u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / torchish.dot(u, torchish.mv(matrix, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with torchish.no_grad():
            matrix = fn.reshape_weight_to_matrix(weight)
            h, w = matrix.size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward computes it
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(_StateDictHook(fn))
        module._register_load_state_dict_pre_hook(_LoadStateDictPreHook(fn))
        return fn


class _LoadStateDictPreHook:
    """Reads checkpoints of version < 1: `<name>` (the normalized weight) instead of `_v`."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and key not in state_dict and all(
                key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # saved without metadata, but in the current layout
        absent = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with torchish.no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            matrix = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(matrix, state_dict[key + "_u"],
                                                              sigma)


class _StateDictHook:
    """Records the layout version in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectrally normalize `module.<name>`; `dim` defaults to 1 for transposed convolutions
    (their output channels), else 0."""
    if dim is None:
        from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) \
            else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    pop_forward_pre_hook(module, SpectralNorm, name, "spectral_norm").remove(module)
    for hooks in (module._state_dict_hooks, module._load_state_dict_pre_hooks):
        for key, hook in list(hooks.items()):
            hook = getattr(hook, "hook", hook)   # load pre-hooks are wrapped
            if isinstance(hook, (_StateDictHook, _LoadStateDictPreHook)) and \
                    hook.fn.name == name:
                del hooks[key]
                break
    return module
