"""Wishart(df, covariance | precision | scale_tril): distribution over positive definite
matrices, sampled by the Bartlett decomposition (chi-square diagonal, normal lower part).
The chi-square draws use torchish's gamma sampler, so samples are not PyTorch's stream."""
import math
import numbers
import warnings

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import is_traced, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _torch():
    import torchish
    return torchish


def _mvdigamma(x, p):
    torch = _torch()
    if not is_traced(x) and not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    shifts = torch.arange(p, dtype=x.dtype, device=x.device).div(2)
    return torch.digamma(x.unsqueeze(-1) - shifts.expand(x.shape + (-1,))).sum(-1)


def _cholesky_solve(b, L):
    """(L L^T)^-1 b, broadcasting L's batch dims against b's."""
    torch = _torch()
    batch = torch.broadcast_shapes(L.shape[:-2], b.shape[:-2])
    L = L.expand(batch + L.shape[-2:])
    x = torch.linalg.solve_triangular(L, b.expand(batch + b.shape[-2:]), upper=False)
    return torch.linalg.solve_triangular(L.mT, x, upper=True)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        torch = _torch()
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if not is_traced(self.df) and bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else \
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix"
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if not is_traced(self.df) and bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        # Bartlett: the i-th diagonal entry squared is chi-square with df - i degrees
        torch = _torch()
        L = self._unbroadcasted_scale_tril
        shifts = torch.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=self.df.unsqueeze(-1) - shifts.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        batch_shape = _torch().Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new = self._get_checked_instance(Wishart, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(batch_shape)
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self, m):
        return m.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return self._full(L @ L.transpose(-2, -1))

    @lazy_property
    def precision_matrix(self):
        torch = _torch()
        L = self._unbroadcasted_scale_tril
        eye = torch.eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return self._full(_cholesky_solve(eye, L))

    def _df_matrix(self, df):
        return df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _torch().where(factor <= 0, math.nan, factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        torch = _torch()
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + torch.einsum("...i,...j->...ij", d, d))

    def _bartlett_sampling(self, sample_shape=()):
        torch = _torch()
        p = self._event_shape[-1]
        diag = self._dist_chi2.rsample(sample_shape).sqrt()
        noise = diag.clamp(min=torch.finfo(diag.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = torch.tril_indices(p, p, offset=-1)
        lower = torch.randn(torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                            dtype=noise.dtype, device=noise.device)
        noise = _put_lower(noise, i, j, lower)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        bad = ~self.support.check(sample)
        return bad.amax(self._batch_dims) if self._batch_shape else bad

    def rsample(self, sample_shape=(), max_try_correction=None):
        torch = _torch()
        traced = is_traced(self.df)
        if max_try_correction is None:
            max_try_correction = 3 if traced else 10
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        tail = (1,) * (len(self._batch_shape) + 2)
        # PyTorch's first check is inverted (it flags the valid draws), so eagerly it warns
        # and redraws on almost every call; the redraws are then checked the right way
        flagged = ~self._singular(sample)
        if traced or bool(flagged.any()):
            if not traced:
                warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                new = self._bartlett_sampling(sample_shape)
                sample = torch.where(flagged.view(sample_shape + tail), new, sample)
                flagged = flagged & self._singular(new)
                if not traced and not bool(flagged.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = _cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - torch.mvlgamma(nu / 2, p=p) +
                (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        torch = _torch()
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + torch.mvlgamma(nu / 2, p=p) -
                (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return (-self.precision_matrix / 2, (self.df - p - 1) / 2)

    def _log_normalizer(self, x, y):
        torch = _torch()
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-torch.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + \
            torch.mvlgamma(y + (p + 1) / 2, p=p)


def _put_lower(mat, i, j, values):
    """mat with its strictly-lower entries (i, j) set from the last dim of `values`."""
    torch = _torch()
    p = mat.shape[-1]
    flat_idx = (i * p + j).tolist()
    flat = mat.reshape(mat.shape[:-2] + (p * p,))
    flat = flat.index_copy(-1, torch.tensor(flat_idx, dtype=torch.long), values)
    return flat.reshape(mat.shape)
