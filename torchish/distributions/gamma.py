"""The gamma family: Gamma, Dirichlet (normalised gammas) and Beta (a two-class Dirichlet).

Samples are reparameterized (`rsample`) through `_sampling`: eagerly PyTorch's CPU stream
bit for bit; gradients by implicit reparameterization with PyTorch's approximations
(`_standard_gamma_grad`, `_dirichlet_grad`).
"""
import numbers

import jax.scipy.special as jsp

from .._ops.registry import call_jax
from . import constraints
from . import _sampling
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_traced


def _torch():
    import torchish
    return torchish


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalar else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, {"concentration": 0, "rate": 0})

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = _sampling.standard_gamma(self.concentration.expand(shape)) / \
            self.rate.expand(shape)
        # keep draws that underflowed to 0 inside the support (in place, outside autograd)
        value.detach().clamp_(min=_torch().finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        torch = _torch()
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) +
                torch.xlogy(self.concentration - 1, value) - self.rate * value -
                torch.lgamma(self.concentration))

    def entropy(self):
        torch = _torch()
        c = self.concentration
        return c - torch.log(self.rate) + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return _torch().lgamma(x + 1) + (x + 1) * _torch().log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # regularized lower incomplete gamma; torchish has no torch.special.gammainc yet
        x = self.rate * value
        c = self.concentration.expand(x.shape) if x.dim() >= self.concentration.dim() \
            else self.concentration
        return call_jax("SpecialGammaincBackward0", jsp.gammainc, [c.detach(), x])


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, {"concentration": 1})

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _sampling.sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        c = self.concentration
        return (torch.xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1)) -
                torch.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        torch = _torch()
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # all concentrations < 1: the mass piles up at a vertex. PyTorch writes those rows
        # through a boolean mask (grad_fn IndexPutBackward0, or CopySlices for one row); a
        # traced mask has no concrete row count, so compiled code selects with where instead
        corner = (self.concentration < 1).all(dim=-1)
        if is_traced(self.concentration):
            vertex = torch.nn.functional.one_hot(mode.argmax(dim=-1), cm1.shape[-1]).to(mode)
            return torch.where(corner.unsqueeze(-1), vertex, mode)
        mode[corner] = torch.nn.functional.one_hot(mode[corner].argmax(dim=-1),
                                                   cm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        torch = _torch()
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (torch.lgamma(c).sum(-1) - torch.lgamma(a0) - (k - a0) * torch.digamma(a0) -
                ((c - 1.0) * torch.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - _torch().lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        torch = _torch()
        if isinstance(concentration1, numbers.Number) and \
                isinstance(concentration0, numbers.Number):
            both = torch.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
            both = torch.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = _torch().Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(_torch().stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        torch = _torch()
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)


class Chi2(Gamma):
    """Chi-squared with `df` degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
