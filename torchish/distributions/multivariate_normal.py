"""MultivariateNormal, parametrised by one of covariance, precision or lower Cholesky factor;
everything is computed from the (unbroadcast) Cholesky factor of the covariance."""
import math

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property


def _torch():
    import torchish
    return torchish


def _batch_mv(bmat, bvec):
    return _torch().matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(L, x):
    """|L^-1 x|^2 over broadcast batch dims (L lower triangular)."""
    torch = _torch()
    n = x.size(-1)
    batch = torch.broadcast_shapes(L.shape[:-2], x.shape[:-1])
    sol = torch.linalg.solve_triangular(L.expand(batch + (n, n)),
                                        x.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return sol.squeeze(-1).pow(2).sum(-1)


def _tril_inverse(L):
    torch = _torch()
    eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return torch.linalg.solve_triangular(L, eye.expand(L.shape), upper=False)


def _precision_to_scale_tril(P):
    # flipping rows and columns turns a lower Cholesky factor into an upper one: P = U U^T,
    # so P^-1 = U^-T U^-1 and the lower factor of the covariance is (U^T)^-1 (no P^-1 formed)
    torch = _torch()
    Lf = torch.linalg.cholesky(torch.flip(P, (-2, -1)))
    L_inv = torch.transpose(torch.flip(Lf, (-2, -1)), -2, -1)
    return _tril_inverse(L_inv)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        torch = _torch()
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, m in (("scale_tril matrix", scale_tril),
                        ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is None:
                continue
            if m.dim() < 2:
                raise ValueError(f"{name} must be at least two-dimensional, with optional "
                                 "leading batch dimensions")
            batch_shape = torch.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
            setattr(self, name.split()[0], m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance,
                             {"loc": 1, "covariance_matrix": 2, "scale_tril": 2,
                              "precision_matrix": 2})
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(_torch().matmul(L, L.mT))

    @lazy_property
    def precision_matrix(self):
        L_inv = _tril_inverse(self._unbroadcasted_scale_tril)
        return self._full(_torch().matmul(L_inv.mT, L_inv))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
