"""Heavy-tailed location-scale distributions: Cauchy and StudentT."""
import math

from . import constraints
from .continuous import _batch_shape_of
from .distribution import Distribution
from .gamma import Chi2
from .utils import _fresh_inplace, _standard_normal, broadcast_all


def _torch():
    import torchish
    return torchish


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape_of(loc, scale, self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance, {"loc": 0, "scale": 0})

    def _full(self, value):
        return _torch().full(self._extended_shape(), value, dtype=self.loc.dtype,
                             device=self.loc.device)

    @property
    def mean(self):
        return self._full(math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._full(math.inf)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # Tensor.cauchy_ reproduces PyTorch's draws (median 0, scale 1)
        eps = _fresh_inplace(_torch().empty(shape, dtype=self.loc.dtype, device=self.loc.device))
        eps = eps.cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _torch().atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return _torch().tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        # built (and validated) before StudentT's own checks, as in PyTorch
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(StudentT, batch_shape, _instance, {"df": 0, "loc": 0, "scale": 0})
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        torch = _torch()
        # the loc is kept where defined (df > 1), nan elsewhere
        return torch.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        torch = _torch()
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        return torch.where(df > 2, finite, torch.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        torch = _torch()
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * torch.rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi) +
                    torch.lgamma(0.5 * df) - torch.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * torch.log1p(y ** 2.0 / df) - log_norm

    def entropy(self):
        torch = _torch()
        df = self.df
        lbeta = torch.lgamma(0.5 * df) + math.lgamma(0.5) - torch.lgamma(0.5 * (df + 1))
        return (self.scale.log() +
                0.5 * (df + 1) * (torch.digamma(0.5 * (df + 1)) - torch.digamma(0.5 * df)) +
                0.5 * df.log() + lbeta)
