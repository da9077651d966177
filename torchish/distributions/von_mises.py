"""VonMises: the circular normal on [-pi, pi), sampled by Best & Fisher's rejection scheme
in float64 from torch.rand (so seeded eager draws equal PyTorch's)."""
import math

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, rng_traced

__all__ = ["VonMises"]


def _torch():
    import torchish
    return torchish


def _eval_poly(y, coef):
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# Abramowitz & Stegun 9.8.1-9.8.4 polynomial fits of I0 and I1 (small: x < 3.75, large: the
# scaled asymptotic form), the approximation PyTorch uses
_COEF_SMALL = [[1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]]
_COEF_LARGE = [[0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                0.02635537, -0.01647633, 0.00392377],
               [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                -0.02895312, 0.01787654, -0.00420059]]


def _log_modified_bessel_fn(x, order=0):
    """log(I_order(x)) for order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return _torch().where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    torch = _torch()
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    traced = rng_traced(loc)
    rounds = 0
    # eagerly: until every draw is accepted (PyTorch's loop, same rand calls); traced: a fixed
    # number of rounds (each accepts with probability > 0.65, so all 20 fail below 1e-9)
    while (rounds < 20) if traced else not bool(done.all()):
        rounds += 1
        u1, u2, u3 = torch.rand((3,) + tuple(x.shape), dtype=loc.dtype,
                                device=loc.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        if traced or bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * _torch().cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - \
            _log_modified_bessel_fn(self.concentration, order=0)

    @lazy_property
    def _loc(self):
        return self.loc.to(_torch().double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(_torch().double)

    @lazy_property
    def _proposal_r(self):
        torch = _torch()
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        # tiny kappa: the exact form cancels catastrophically, use its Taylor expansion
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, r)

    def sample(self, sample_shape=()):
        torch = _torch()
        with torch.no_grad():
            shape = self._extended_shape(sample_shape)
            x = torch.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        # PyTorch builds a fresh instance from expanded parameters
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape), self.concentration.expand(batch_shape),
                          validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        c = self.concentration
        return 1 - (_log_modified_bessel_fn(c, order=1) -
                    _log_modified_bessel_fn(c, order=0)).exp()
