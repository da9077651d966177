"""GeneralizedPareto(loc, scale, concentration): the peaks-over-threshold family; the
concentration = 0 limit (an exponential tail) is selected elementwise with `isclose`."""
import math
import numbers

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


def _torch():
    import torchish
    return torchish


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance,
                              {"loc": 0, "scale": 0, "concentration": 0})

    def _safe_concentration(self):
        torch = _torch()
        c = self.concentration
        eq_zero = torch.isclose(c, torch.zeros_like(c))
        return eq_zero, torch.where(eq_zero, torch.ones_like(c), c)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _torch().rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        z = self._z(value)
        eq_zero, c = self._safe_concentration()
        y = 1 / c + torch.ones_like(z)
        nonzero = torch.where(y == 0, y, y * torch.log1p(c * z))
        return -self.scale.log() - torch.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        z = self._z(value)
        eq_zero, c = self._safe_concentration()
        return torch.where(eq_zero, -z, -torch.log1p(c * z) / c)

    def log_cdf(self, value):
        torch = _torch()
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return _torch().exp(self.log_cdf(value))

    def icdf(self, value):
        torch = _torch()
        eq_zero, c = self._safe_concentration()
        logu = torch.log1p(-value)
        nonzero = self.loc + self.scale / c * torch.expm1(-c * logu)
        return torch.where(eq_zero, self.loc - self.scale * logu, nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        torch = _torch()
        valid = self.concentration < 1
        c = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        torch = _torch()
        valid = self.concentration < 0.5
        c = torch.where(valid, self.concentration, 0.25)
        return torch.where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    def entropy(self):
        ans = _torch().log(self.scale) + self.concentration + 1
        return _torch().broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        torch = _torch()
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
