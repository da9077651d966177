"""Distributions PyTorch defines as a simple base pushed through fixed transforms:
HalfNormal and HalfCauchy (|x|), Gumbel (double log of a uniform), Weibull (power of an
exponential), Pareto (exp of an exponential), Kumaraswamy (powers of a uniform) and
LogisticNormal (stick-breaking of a normal). Samples therefore follow the base's stream."""
import math
import numbers

from . import constraints
from .continuous import Exponential, Normal, Uniform
from .heavy_tailed import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ExpTransform, PowerTransform,
                         StickBreakingTransform)
from .utils import broadcast_all, euler_constant

__all__ = ["HalfNormal", "HalfCauchy", "Gumbel", "Weibull", "Pareto", "Kumaraswamy",
           "LogisticNormal"]


def _torch():
    import torchish
    return torchish


class _Folded(TransformedDistribution):
    """|X| for X symmetric about 0: density doubled on [0, inf), -inf below."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return _torch().zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return _torch().where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        # unlike HalfNormal, PyTorch's HalfCauchy casts the value to the scale's dtype
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        value = torch.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return torch.where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    @property
    def mean(self):
        return _torch().full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                             device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        torch = _torch()
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torch.finfo(self.loc.dtype)
        # uniforms kept off 0 and 1 so that both logs stay finite
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base = Uniform(torch.full_like(self.loc, finfo.tiny),
                           torch.full_like(self.loc, 1 - finfo.eps), validate_args=validate_args)
        # x = loc - scale * log(-log(u))
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)


class Weibull(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(_torch().ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        # x = scale * e^(1/k), e ~ Exponential(1)
        return [PowerTransform(exponent=self.concentration_reciprocal),
                AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         new._transforms(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * _torch().exp(_torch().lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        torch = _torch()
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (torch.exp(torch.lgamma(1 + 2 * r)) -
                                    torch.exp(2 * torch.lgamma(1 + r)))

    def entropy(self):
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + _torch().log(self.scale * r) + 1


class Pareto(TransformedDistribution):
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


def _kumaraswamy_moment(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    torch = _torch()
    arg1 = 1 + n / a
    return b * torch.exp(torch.lgamma(arg1) + torch.lgamma(b) - torch.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        torch = _torch()
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(torch.full_like(self.concentration0, 0),
                       torch.full_like(self.concentration0, 1), validate_args=validate_args)
        # x = (1 - u^(1/b))^(1/a)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        # PyTorch's formula and its nan where either concentration is below 1
        log_mode = _torch().where((b < 1) | (a < 1), math.nan, log_mode)
        return log_mode.exp()

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - _torch().pow(self.mean, 2)

    def entropy(self):
        torch = _torch()
        a, b = self.concentration1, self.concentration0
        t1 = 1 - a.reciprocal()
        t0 = 1 - b.reciprocal()
        H0 = torch.digamma(b + 1) + euler_constant
        return t0 + t1 * H0 - torch.log(a) - torch.log(b)


class LogisticNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
