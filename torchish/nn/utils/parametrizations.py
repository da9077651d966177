"""`torch.nn.utils.parametrizations`: `weight_norm` and `spectral_norm` as parametrizations."""
import torchish
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, pow, dim):
    """The `pow`-norm of `v` over every dim but `dim` (kept, size 1 elsewhere); all of it for -1."""
    return torchish.norm_except_dim(v, pow, dim)


def _weight_norm(v, g, dim):
    return torchish._weight_norm(v, g, dim)


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                             unexpected_keys, error_msgs):
    """Accept checkpoints of the older `nn.utils.weight_norm` (`weight_g`, `weight_v` keys)."""
    for name in ("weight",):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            base = f"{prefix}parametrizations.{name}."
            state_dict[base + "original0"] = state_dict.pop(g_key)
            state_dict[base + "original1"] = state_dict.pop(v_key)


def weight_norm(module, name="weight", dim=0):
    """w = g * v / ||v||: the magnitude `original0` and direction `original1` are trained."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @torchish.autograd.no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        # the buffers are updated in place, as PyTorch's `out=` calls do
        for _ in range(n_power_iterations):
            self._u.copy_(F.normalize(torchish.mv(weight_mat, self._v), dim=0, eps=self.eps))
            self._v.copy_(F.normalize(torchish.mv(weight_mat.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = torchish.vdot(u, torchish.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide the weight by its largest singular value, estimated by power iteration."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torchish.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
