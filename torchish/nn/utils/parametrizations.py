"""`torch.nn.utils.parametrizations`: `weight_norm`, `spectral_norm` and `orthogonal` as
parametrizations."""
from enum import Enum, auto

import torchish
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


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


# ---- orthogonal -------------------------------------------------------------------------------

class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _geqrf(A):
    """LAPACK's geqrf (Householder vectors below the diagonal, R on and above; tau), no grad.
    NumPy's raw QR is that call, with the vectors stored transposed."""
    import numpy as np
    h, tau = np.linalg.qr(A.detach().cpu().numpy(), mode="raw")
    return (torchish.tensor(np.ascontiguousarray(h.swapaxes(-1, -2)), device=A.device),
            torchish.tensor(tau, device=A.device))   # (copies: from_numpy would share)


def _qr_positive(A):
    """The Q of A = QR (A tall) with the signs chosen so that diag(R) is non-negative."""
    Q, R = torchish.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = torchish.eye(k, dtype=Q.dtype, device=Q.device)
    return torchish.allclose(Q.mH @ Q, eye, atol=10.0 * n * torchish.finfo(Q.dtype).eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:  # work with a tall matrix
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # pad to square with zero columns
                pad = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = torchish.cat([X, pad], dim=-1)
            A = X - X.mH  # skew-symmetric / skew-hermitian
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = torchish.matrix_exp(A)
            else:  # Cayley transform (I - A/2)^-1 (I + A/2)
                eye = torchish.eye(n, dtype=A.dtype, device=A.device)
                Q = torchish.linalg.solve(torchish.add(eye, A, alpha=-0.5),
                                          torchish.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = torchish.linalg.householder_product(A, tau)
            # the diagonal of X holds the signs (+-1), kept out of the graph
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @torchish.autograd.no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                          "or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = _geqrf(Q)
            # diag(R) > 0 convention: the diagonal keeps only the signs
            diag = A.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _qr_positive(Q)
        else:  # complete the frame to a square orthogonal matrix
            extra = torchish.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _qr_positive(torchish.cat([Q, extra], dim=-1))
        self.base = Q
        # -I: with it householder(zeros) would be the identity, and exp(0) is the identity
        neg_eye = torchish.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep `module.<name>` orthogonal (or unitary): a matrix exponential, Cayley map or
    Householder product of an unconstrained parameter, times a fixed base when trivialized."""
    weight = getattr(module, name, None)
    if not isinstance(weight, torchish.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
