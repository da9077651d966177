"""torch.distributions on torchish: parametrised probability distributions with sampling,
reparameterized sampling (gradients through samples), log densities and KL divergences."""
import sys as _sys

from . import constraints, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .continuous import Exponential, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .counts import Geometric, Multinomial, NegativeBinomial
from .discrete import (Bernoulli, Binomial, Categorical, OneHotCategorical,
                       OneHotCategoricalStraightThrough, Poisson)
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Gamma
from .gamma_derived import FisherSnedecor, InverseGamma
from .generalized_pareto import GeneralizedPareto
from .heavy_tailed import Cauchy, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture import MixtureSameFamily
from .multivariate_normal import MultivariateNormal
from .relaxed import (ExpRelaxedCategorical, LogitRelaxedBernoulli,  # noqa: F401
                      RelaxedBernoulli, RelaxedOneHotCategorical)
from .transformed_distribution import LogNormal, TransformedDistribution
from .transformed_families import (Gumbel, HalfCauchy, HalfNormal, Kumaraswamy,
                                   LogisticNormal, Pareto, Weibull)
from .von_mises import VonMises
from .wishart import Wishart
from .transforms import (AbsTransform, AffineTransform, CatTransform,  # noqa: F401
                         ComposeTransform, CorrCholeskyTransform,
                         CumulativeDistributionTransform, ExpTransform, IndependentTransform,
                         LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform,
                         ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform,
                         TanhTransform, Transform, identity_transform)
from .._unsupported import module_getattr as _module_getattr

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ContinuousBernoulli", "Dirichlet", "Distribution", "Exponential",
           "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
           "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
           "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
           "kl_divergence", "register_kl", "transform_to",
           "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]  # the submodules stay out, as in PyTorch

# PyTorch keeps one module per distribution (`from torch.distributions.normal import Normal`);
# torchish groups related families, so each of those paths names the module defining it
from . import (continuous as _continuous, counts as _counts, discrete as _discrete,  # noqa: E402
               gamma as _gamma, gamma_derived as _gamma_derived, heavy_tailed as _heavy,
               mixture as _mixture, relaxed as _relaxed,
               transformed_distribution as _transformed,
               transformed_families as _families)
for _name, _module in {
        "bernoulli": _discrete, "beta": _gamma, "binomial": _discrete, "categorical": _discrete,
        "cauchy": _heavy, "chi2": _gamma, "dirichlet": _gamma, "exponential": _continuous,
        "fishersnedecor": _gamma_derived, "geometric": _counts, "gumbel": _families,
        "half_cauchy": _families, "half_normal": _families, "inverse_gamma": _gamma_derived,
        "kumaraswamy": _families, "laplace": _continuous, "log_normal": _transformed,
        "logistic_normal": _families, "mixture_same_family": _mixture,
        "multinomial": _counts, "negative_binomial": _counts, "normal": _continuous,
        "one_hot_categorical": _discrete, "pareto": _families, "poisson": _discrete,
        "relaxed_bernoulli": _relaxed, "relaxed_categorical": _relaxed,
        "studentT": _heavy, "uniform": _continuous, "weibull": _families}.items():
    _sys.modules.setdefault(f"{__name__}.{_name}", _module)
    globals()[_name] = _module

# ... and each class names the module PyTorch defines it in: it shows in `type(d)` and in
# errors ("<class 'torch.distributions.normal.Normal'> does not implement mode"), and a
# pickled distribution must name a module that exists in PyTorch
for _name, _classes in {
        "bernoulli": (Bernoulli,), "beta": (Beta,), "binomial": (Binomial,),
        "categorical": (Categorical,), "cauchy": (Cauchy,), "chi2": (Chi2,),
        "dirichlet": (Dirichlet,), "exponential": (Exponential,),
        "fishersnedecor": (FisherSnedecor,), "geometric": (Geometric,), "gumbel": (Gumbel,),
        "half_cauchy": (HalfCauchy,), "half_normal": (HalfNormal,),
        "inverse_gamma": (InverseGamma,), "kumaraswamy": (Kumaraswamy,),
        "laplace": (Laplace,), "log_normal": (LogNormal,), "logistic_normal": (LogisticNormal,),
        "mixture_same_family": (MixtureSameFamily,), "multinomial": (Multinomial,),
        "negative_binomial": (NegativeBinomial,), "normal": (Normal,),
        "one_hot_categorical": (OneHotCategorical, OneHotCategoricalStraightThrough),
        "pareto": (Pareto,), "poisson": (Poisson,),
        "relaxed_bernoulli": (LogitRelaxedBernoulli, RelaxedBernoulli),
        "relaxed_categorical": (ExpRelaxedCategorical, RelaxedOneHotCategorical),
        "studentT": (StudentT,), "uniform": (Uniform,), "weibull": (Weibull,),
        "transforms": (CatTransform, CorrCholeskyTransform, CumulativeDistributionTransform,
                       LowerCholeskyTransform, PositiveDefiniteTransform, ReshapeTransform,
                       SoftmaxTransform, StackTransform, StickBreakingTransform)}.items():
    for _cls in _classes:
        _cls.__module__ = f"{__name__}.{_name}"
del _name, _module, _classes, _cls

# any other torch.distributions name raises "not supported yet"
__getattr__ = _module_getattr(__name__)
