"""Count distributions: Geometric (failures before the first success), NegativeBinomial
(a gamma-Poisson mixture) and Multinomial (category counts over `total_count` draws)."""
import math
import numbers

from . import constraints
from . import _sampling
from .discrete import Binomial, Categorical, _count_params, _expand_counts, _one_of
from .distribution import Distribution, _all_true
from .gamma import Gamma
from .._tensor_checks import _vmap_batched
from .utils import (_fresh_inplace, broadcast_all, lazy_property, logits_to_probs,
                    probs_to_logits)

__all__ = ["Geometric", "NegativeBinomial", "Multinomial"]


def _torch():
    import torchish
    return torchish


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        super().__init__(() if isinstance(given, numbers.Number) else given.size(),
                         validate_args=validate_args)
        if self._validate_args and probs is not None:
            # unit_interval admits 0, a geometric does not
            value = self.probs
            valid = value > 0
            # (PyTorch reads this check as a Python bool, which vmap refuses when batched)
            if not (bool(valid.all()) if _vmap_batched(valid._data) else _all_true(valid)):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Geometric, batch_shape, _instance, {"probs": 0, "logits": 0})

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _torch().zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        torch = _torch()
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            # inversion of a uniform on (tiny, 1): PyTorch's draw order
            u = _fresh_inplace(torch.empty(shape, dtype=self.probs.dtype,
                                           device=self.probs.device))
            u = u.uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        value, probs = broadcast_all(value, self.probs)
        # p = 1 puts all the mass on 0: 0 * log(0) there counts as 0
        probs = torch.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        F = _torch().nn.functional
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs


class NegativeBinomial(Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _count_params(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return _expand_counts(self, NegativeBinomial, batch_shape, _instance)

    @property
    def mean(self):
        return self.total_count * _torch().exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / _torch().sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=_torch().exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with _torch().no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _sampling.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        F = torch.nn.functional
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_norm = -torch.lgamma(n + value) + torch.lgamma(1.0 + value) + torch.lgamma(n)
        # n = 0 is a point mass at 0: its normaliser is 1
        log_norm = log_norm.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_norm


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = _torch().Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        torch = _torch()
        sample_shape = torch.Size(sample_shape)
        # total_count categorical draws (PyTorch's stream), then counted per category
        draws = self._categorical.sample(torch.Size((self.total_count,)) + sample_shape)
        order = list(range(1, draws.dim())) + [0]
        draws = draws.permute(tuple(order))
        counts = torch.zeros(self._extended_shape(sample_shape), dtype=draws.dtype,
                             device=draws.device)
        counts.scatter_add_(-1, draws, torch.ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        torch = _torch()
        n = torch.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = torch.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * torch.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = torch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = torch.lgamma(value + 1).sum(-1)
        # a zero count of an impossible category contributes 0, not 0 * -inf
        logits = torch.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
