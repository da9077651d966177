"""ContinuousBernoulli (Loaiza-Ganem & Cunningham 2019): a density on [0, 1] proportional to
p^x (1-p)^(1-x). Near p = 1/2 the closed forms divide 0 by 0, so inside `lims` they are
replaced by Taylor expansions, as PyTorch does."""
import math
import numbers

from . import constraints
from .discrete import _one_of
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


def _torch():
    import torchish
    return torchish


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            # PyTorch checks here only when validate_args is given explicitly
            if validate_args is not None and \
                    not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if isinstance(given, numbers.Number) else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance,
                             {"probs": 0, "logits": 0})
        new._lims = self._lims
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        torch = _torch()
        return torch.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * torch.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        torch = _torch()
        cut = self._cut_probs()
        below = torch.where(cut <= 0.5, cut, torch.zeros_like(cut))
        above = torch.where(cut >= 0.5, cut, torch.ones_like(cut))
        log_norm = torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut))) - torch.where(
            cut <= 0.5, torch.log1p(-2.0 * below), torch.log(2.0 * above - 1.0))
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        torch = _torch()
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (torch.log1p(-cut) - torch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return _torch().sqrt(self.variance)

    @property
    def variance(self):
        torch = _torch()
        cut = self._cut_probs()
        vs = cut * (cut - 1.0) / torch.pow(1.0 - 2.0 * cut, 2) + \
            1.0 / torch.pow(torch.log1p(-cut) - torch.log(cut), 2)
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), vs, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=()):
        torch = _torch()
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with torch.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _torch().rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = _torch().nn.functional.binary_cross_entropy_with_logits(logits, value,
                                                                      reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        cut = self._cut_probs()
        cdfs = (torch.pow(cut, value) * torch.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / \
            (2.0 * cut - 1.0)
        unbounded = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(value <= 0.0, torch.zeros_like(value),
                           torch.where(value >= 1.0, torch.ones_like(value), unbounded))

    def icdf(self, value):
        torch = _torch()
        cut = self._cut_probs()
        inv = (torch.log1p(-cut + value * (2.0 * cut - 1.0)) - torch.log1p(-cut)) / \
            (torch.log(cut) - torch.log1p(-cut))
        return torch.where(self._outside_unstable_region(), inv, value)

    def entropy(self):
        torch = _torch()
        log_p0 = torch.log1p(-self.probs)
        log_p1 = torch.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        torch = _torch()
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = torch.where(outside, x, (self._lims[0] - 0.5) * torch.ones_like(x))
        log_norm = torch.log(torch.abs(torch.special.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(outside, log_norm, taylor)
