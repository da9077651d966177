"""LKJCholesky: the LKJ distribution over Cholesky factors of correlation matrices, sampled
with the onion method (Lewandowski, Kurowicka & Joe 2009): row i is a point on the unit
hemisphere scaled by the root of a Beta draw. The Beta draws use torchish's gamma sampler,
so samples are not PyTorch's stream; log densities are exact."""
import math

from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


def _torch():
    import torchish
    return torchish


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        torch = _torch()
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        marginal_conc = c + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=c.dtype, device=c.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(c.size(), torch.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LKJCholesky, batch_shape, _instance, {"concentration": 0})
        new.dim = self.dim
        new._beta = self._beta.expand(new.batch_shape + (self.dim,))
        return new

    def sample(self, sample_shape=()):
        torch = _torch()
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                            device=y.device).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True)
            # row 0 is all zeros (0 / 0 above): the first row of the factor is e_1
            first_row = torch.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            u = torch.where(first_row, 0.0, u)
            w = torch.sqrt(y) * u
            tiny = torch.finfo(w.dtype).tiny
            diag = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=tiny).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        torch = _torch()
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = torch.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1) - \
            torch.lgamma(alpha) * dm1
        return unnormalized - normalize
