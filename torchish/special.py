"""`torchish.special`: PyTorch's torch.special namespace. Most names are torchish's own ops
(the same nodes PyTorch records: `expit` is `sigmoid`, `gammaln` is `lgamma`); the rest are
declared in `_ops/pointwise_math.py` under `special_*`."""
from ._ops.registry import REGISTRY as _REGISTRY
from ._unsupported import module_getattr
from . import _ops  # noqa: F401  (fills the registry)
from ._ops.pointwise import _add_scalar, _mul_scalar
from ._ops.recording import records as _records


def _reg(name):
    return _REGISTRY[name].function


expit = _reg("sigmoid")
logit = _reg("logit")
erf = _reg("erf")
erfc = _reg("erfc")
erfinv = _reg("erfinv")
gammaln = _reg("lgamma")
digamma = psi = _reg("digamma")
polygamma = _reg("polygamma")
multigammaln = _reg("mvlgamma")
gammainc = _reg("igamma")
gammaincc = _reg("igammac")
xlogy = _reg("xlogy")
i0 = _reg("i0")
log1p = _reg("log1p")
expm1 = _reg("expm1")
exp2 = _reg("exp2")
sinc = _reg("sinc")

entr = _reg("special_entr")
erfcx = _reg("special_erfcx")
i0e = _reg("special_i0e")
i1 = _reg("special_i1")
i1e = _reg("special_i1e")
_ndtr = _reg("special_ndtr")


def ndtr(input):
    if _records(input):   # PyTorch's composite, op by op: (1 + erf(x / sqrt(2))) * 0.5
        return _mul_scalar(_add_scalar(erf(_mul_scalar(input, 0.70710678118654752440)), 1),
                           0.5)
    return _ndtr(input)
ndtri = _reg("special_ndtri")
log_ndtr = _reg("special_log_ndtr")
xlog1py = _reg("special_xlog1py")
zeta = _reg("special_zeta")
round = _reg("special_round")
modified_bessel_i0 = _reg("special_modified_bessel_i0")
modified_bessel_i1 = _reg("special_modified_bessel_i1")
spherical_bessel_j0 = _reg("special_spherical_bessel_j0")
bessel_j0 = _reg("special_bessel_j0")
bessel_j1 = _reg("special_bessel_j1")
bessel_y0 = _reg("special_bessel_y0")
bessel_y1 = _reg("special_bessel_y1")
modified_bessel_k0 = _reg("special_modified_bessel_k0")
modified_bessel_k1 = _reg("special_modified_bessel_k1")
scaled_modified_bessel_k0 = _reg("special_scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _reg("special_scaled_modified_bessel_k1")
airy_ai = _reg("special_airy_ai")
chebyshev_polynomial_t = _reg("special_chebyshev_polynomial_t")
chebyshev_polynomial_u = _reg("special_chebyshev_polynomial_u")
chebyshev_polynomial_v = _reg("special_chebyshev_polynomial_v")
chebyshev_polynomial_w = _reg("special_chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _reg("special_shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _reg("special_shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _reg("special_shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _reg("special_shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _reg("special_hermite_polynomial_h")
hermite_polynomial_he = _reg("special_hermite_polynomial_he")
laguerre_polynomial_l = _reg("special_laguerre_polynomial_l")
legendre_polynomial_p = _reg("special_legendre_polynomial_p")


def softmax(input, dim, *, dtype=None):
    """torch.special.softmax (dim required)."""
    from . import softmax as _softmax
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.special.log_softmax (dim required)."""
    from . import log_softmax as _log_softmax
    return _log_softmax(input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False):
    """torch.special.logsumexp."""
    from . import logsumexp as _logsumexp
    return _logsumexp(input, dim, keepdim)


__getattr__ = module_getattr(__name__)
