"""PyTorch's reparameterized gradients of gamma and Dirichlet samples (`_standard_gamma_grad`,
`_dirichlet_grad`): d sample / d concentration at a drawn value, from the approximations of
Jankowiak & Obermeyer (2018) that PyTorch's CPU kernels evaluate: a Taylor series for small
samples, Rice saddle-point expansions for large concentrations and fitted rational
corrections between. Each branch is computed everywhere and the applicable one selected, in
float64 (PyTorch's accumulation type on the CPU), so the gradients agree with PyTorch's to
rounding."""
import jax.numpy as jnp
from jax.scipy.special import digamma

# bivariate rational fit of the gamma gradient in (log(x / alpha), log(alpha)): rows are the
# coefficients of 1, u, u^2; columns 0-3 the numerator's powers of v, 4-7 the denominator's
_GAMMA_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)

# rational correction of the Dirichlet gradient: [numerator, denominator][power of
# log(x)][power of log(alpha / x)][power of log(total) - log(alpha / x)]
_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _horner(coefs, t):
    out = jnp.zeros_like(t) + coefs[-1]
    for c in coefs[-2::-1]:
        out = c + t * out
    return out


def _finite_or_zero(v):
    return jnp.where(jnp.isnan(v), 0.0, v)


def _gamma_small_x(alpha, x):
    """Taylor series of the gamma CDF's alpha derivative over its density (x < 0.8)."""
    numer, denom = jnp.ones_like(x), alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    pdf = x ** (alpha - 1) * jnp.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (jnp.log(x) - digamma(alpha)) * cdf - pow_x_alpha * series2
    return _finite_or_zero(-cdf_alpha / pdf)


def _gamma_large_alpha(alpha, x):
    """Rice saddle-point expansion (alpha > 8), with its own form near x = alpha."""
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (1440 * alpha * alpha + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x))
    at_mean = numer_1 * numer_2 / (1244160 * alpha ** 4)
    denom = jnp.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * jnp.log(x / alpha)) ** -1.5
    term23 = jnp.where(x < alpha, term2 - term3, term2 + term3)
    term1 = jnp.log(x / alpha) * term23 - jnp.sqrt(2 / alpha) * (alpha + x) / (alpha - x) ** 2
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return jnp.where(near, at_mean, -stirling * x * term1 / denom)


def _gamma_rational(alpha, x):
    u, v = jnp.log(x / alpha), jnp.log(alpha)
    coef = [_horner([row[i] for row in _GAMMA_UV], u) for i in range(8)]
    return jnp.exp(_horner(coef[:4], v) / _horner(coef[4:], v))


def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) (PyTorch's `_standard_gamma_grad(alpha, x)`)."""
    dtype = jnp.result_type(alpha, x)
    a, s = alpha.astype(jnp.float64), x.astype(jnp.float64)
    out = jnp.where(s < 0.8, _gamma_small_x(a, s),
                    jnp.where(a > 8.0, _gamma_large_alpha(a, s), _gamma_rational(a, s)))
    return out.astype(dtype)


# asymptotic series of digamma in 1 / x^2 (highest power first)
_DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                   7.57575757575757575758E-3, -4.16666666666666666667E-3,
                   3.96825396825396825397E-3, -8.33333333333333333333E-3,
                   8.33333333333333333333E-2)
_DIGAMMA_10 = 2.25175258906672110764


def _digamma_one(v):
    """PyTorch's `digamma_one` for positive `v` in v's dtype: for float32 its steps up to 10
    and its last terms round in float32 (the sum accumulates in float64), which these series'
    cancellations would otherwise show."""
    if v.dtype == jnp.float64:
        return digamma(v)
    result = jnp.zeros(v.shape, jnp.float64)
    for _ in range(10):   # digamma(x) = digamma(x + 1) - 1 / x, up to x >= 10
        below = v < 10
        result = result - jnp.where(below, 1 / v, 0).astype(jnp.float64)
        v = jnp.where(below, v + 1, v)
    z = 1.0 / (v * v).astype(jnp.float64)
    series = jnp.where(v < 1e17, z * _horner(_DIGAMMA_SERIES[::-1], z), 0.0)
    out = (result + jnp.log(v).astype(jnp.float64) - (0.5 / v).astype(jnp.float64) - series)
    return jnp.where(v == 10, result + _DIGAMMA_10, out).astype(v.dtype)


def _beta_grad_alpha_small(x, alpha, beta):
    """Taylor expansion for x near 0 of d x / d alpha, x ~ Beta(alpha, beta)."""
    factor = _digamma_one(alpha) - _digamma_one(alpha + beta) - jnp.log(x)
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    return _finite_or_zero(x * (1 - x) ** -beta * series)


def _beta_grad_beta_small(x, alpha, beta):
    """Taylor expansion for x near 0 of d x / d beta, x ~ Beta(alpha, beta)."""
    factor = _digamma_one(alpha + beta) - _digamma_one(beta)
    numer, betas, dbetas = jnp.ones_like(x), jnp.ones_like(x), jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    return _finite_or_zero(-(1 - x) ** (1 - beta) * series)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Rice saddle-point expansion for large alpha and beta."""
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    poly = 47 * x * beta ** 4 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * beta ** 3 + alpha * (
            3 * (59 + 180 * beta - 90 * x) * beta ** 2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha ** 3 * beta ** 2 * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / jnp.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    axbx = alpha * (x - 1) + beta * x
    term1 = ((2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * beta * beta)
             / (jnp.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx))
    term2 = 0.5 * jnp.log(alpha / (total * x))
    term3 = jnp.sqrt(8 * alpha * beta / total) / axbx
    term4 = (beta * jnp.log(beta / (total * (1 - x)))
             + alpha * jnp.log(alpha / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4))
    return jnp.where(near, at_mean, stirling * prefactor * term1234)


def _dirichlet_rational(x, alpha, total, dtype):
    u = jnp.log(x)
    a = jnp.log(alpha) - u
    b = jnp.log(total) - a
    p = q = jnp.zeros_like(x)
    for i in range(3):
        for j in range(3):
            ua = u ** i * a ** j
            p = p + ua * _horner(_DIRICHLET_C[0][i][j], b)
            q = q + ua * _horner(_DIRICHLET_C[1][i][j], b)
    # (PyTorch's digammas take, and return, the input's dtype)
    digammas = (_digamma_one(total.astype(dtype)).astype(jnp.float64)
                - _digamma_one(alpha.astype(dtype)).astype(jnp.float64))
    approx = x * digammas / (total - alpha)
    return p / q * approx


def dirichlet_grad(x, alpha, total):
    """PyTorch's `_dirichlet_grad(x, alpha, total)`: the reparameterized gradient of
    x ~ Beta(alpha, total - alpha) scaled by 1 / (1 - x), elementwise. (As PyTorch's kernel,
    the series near 0 and 1 run in the input's dtype, with float64 digammas; the other
    branches in float64.)"""
    dtype = jnp.result_type(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    x64, alpha64, total64 = (v.astype(jnp.float64) for v in (x, alpha, total))
    beta64 = total64 - alpha64
    out = jnp.where(
        (x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, alpha, beta),
        jnp.where((x >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1 - x, beta, alpha),
                  jnp.where((alpha > 6) & (beta > 6),
                            _beta_grad_alpha_mid(x64, alpha64, beta64),
                            _dirichlet_rational(x64, alpha64, total64, dtype)).astype(dtype)))
    return out.astype(dtype)


def dirichlet_sample_grad(x, concentration, grad_output):
    """The gradient a Dirichlet sample `x` passes to its concentration (PyTorch's
    `_Dirichlet` backward)."""
    total = jnp.broadcast_to(concentration.sum(-1, keepdims=True), concentration.shape)
    grad = dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, keepdims=True))


