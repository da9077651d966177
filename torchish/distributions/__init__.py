"""torch.distributions on torchish: parametrised probability distributions with sampling,
reparameterized sampling (gradients through samples), log densities and KL divergences."""
from . import constraints, transforms  # noqa: F401
from .continuous import Exponential, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .distribution import Distribution
from .gamma import Beta, Dirichlet, Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .transformed_distribution import LogNormal, TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform,  # noqa: F401
                         ExpTransform, IndependentTransform, PowerTransform, SigmoidTransform,
                         SoftplusTransform, TanhTransform, Transform, identity_transform)
from .._unsupported import module_getattr as _module_getattr

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution",
           "Exponential", "Gamma", "Independent", "Laplace", "LogNormal", "MultivariateNormal",
           "Normal", "OneHotCategorical", "Poisson", "TransformedDistribution", "Uniform",
           "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
           "IndependentTransform", "PowerTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "Transform", "identity_transform", "constraints", "transforms",
           "kl_divergence", "register_kl"]

# other torch.distributions names (Cauchy, StudentT, ...) raise "not supported yet"
__getattr__ = _module_getattr(__name__)
