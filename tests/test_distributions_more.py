"""torchish.distributions against torch.distributions, for the families beyond the basic set
(Cauchy, StudentT, Chi2, HalfNormal, HalfCauchy, Gumbel, Weibull, Pareto, Geometric,
NegativeBinomial, Multinomial, Relaxed*, LowRankMultivariateNormal, MixtureSameFamily,
VonMises) and the KL pairs among them: densities, moments, cdf/icdf, gradients, seeded
samples, shapes, expand, validation errors."""
import math
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")
from distribution_helpers import OD, TD, both, close, cpu_repr  # noqa: E402

R = np.random.default_rng(1)
POS = R.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
POS2 = R.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
REAL = R.normal(size=(3, 4)).astype(np.float32)
P01 = R.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
DF = np.array([0.7, 1.5, 3.0, 8.0] * 3, np.float32).reshape(3, 4)
COUNTS = np.array([[0, 2, 1, 4], [3, 0, 0, 4], [1, 1, 1, 4]], np.float32)
W = R.normal(size=(3, 4, 2)).astype(np.float32)
A = R.normal(size=(4, 4))
COV = (A @ A.T + 2 * np.eye(4)).astype(np.float32)
ANGLES = R.uniform(-3.0, 3.0, (3, 4)).astype(np.float32)
CB_PROBS = np.array([0.1, 0.4995, 0.5, 0.9] * 3, np.float32).reshape(3, 4)
GP_CONC = np.array([-0.3, 0.0, 0.2, 0.7] * 3, np.float32).reshape(3, 4)
B = R.normal(size=(2, 3, 3))
WCOV = (B @ B.transpose(0, 2, 1) + 2 * np.eye(3)).astype(np.float32)
LKJ_VALUE = TD.transforms.CorrCholeskyTransform()(torch.tensor(REAL[:, :3])).cpu().numpy()


def _mixture(D, T):
    return D.MixtureSameFamily(D.Categorical(logits=T(REAL[:, :3])),
                               D.Normal(T(REAL[:, :3] * 2), T(POS[:, :3])))


def _mixture_mvn(D, T):
    return D.MixtureSameFamily(D.Categorical(T(POS[0, :3])),
                               D.Independent(D.Normal(T(REAL[:, :3].T), T(POS[:, :3].T)), 1))


# (name, constructor, values in the support to score, whether cdf/icdf exist)
CASES = {
    "Cauchy": (lambda D, T: D.Cauchy(T(REAL), T(POS)), REAL * 3, True),
    "Cauchy_scalar": (lambda D, T: D.Cauchy(0.5, 2.0), REAL, True),
    "StudentT": (lambda D, T: D.StudentT(T(DF), T(REAL), T(POS)), REAL * 2, False),
    "Chi2": (lambda D, T: D.Chi2(T(POS * 2)), POS2, False),
    "HalfNormal": (lambda D, T: D.HalfNormal(T(POS)), POS2, True),
    "HalfCauchy": (lambda D, T: D.HalfCauchy(T(POS)), POS2, True),
    "Gumbel": (lambda D, T: D.Gumbel(T(REAL), T(POS)), REAL * 2, True),
    "Gumbel_scalar": (lambda D, T: D.Gumbel(1.0, 2.0), REAL * 2, True),
    "Weibull": (lambda D, T: D.Weibull(T(POS), T(POS2 + 0.5)), POS2, True),
    "Pareto": (lambda D, T: D.Pareto(T(POS), T(POS2 * 2)), POS + POS2, True),
    "Geometric_probs": (lambda D, T: D.Geometric(T(P01)), np.floor(POS * 3), False),
    "Geometric_logits": (lambda D, T: D.Geometric(logits=T(REAL)), np.floor(POS * 3), False),
    "NegativeBinomial_probs": (lambda D, T: D.NegativeBinomial(T(POS * 3), T(P01)),
                               np.floor(POS2 * 3), False),
    "NegativeBinomial_logits": (lambda D, T: D.NegativeBinomial(4.0, logits=T(REAL)),
                                np.floor(POS2 * 3), False),
    "Multinomial": (lambda D, T: D.Multinomial(7, T(POS)), COUNTS, False),
    "Multinomial_logits": (lambda D, T: D.Multinomial(7, logits=T(REAL)), COUNTS, False),
    "RelaxedBernoulli": (lambda D, T: D.RelaxedBernoulli(T(0.7), T(P01)), 1 - P01, False),
    "RelaxedBernoulli_logits": (lambda D, T: D.RelaxedBernoulli(T(2.0), logits=T(REAL)), P01,
                                False),
    "RelaxedOneHotCategorical": (lambda D, T: D.RelaxedOneHotCategorical(T(0.5), T(POS)),
                                 POS2 / POS2.sum(-1, keepdims=True), False),
    "LowRankMultivariateNormal": (lambda D, T: D.LowRankMultivariateNormal(
        T(REAL), T(W), T(POS)), REAL * 2, False),
    "MixtureSameFamily": (_mixture, REAL[:, 0] * 2, True),
    "MixtureSameFamily_independent": (_mixture_mvn, REAL[:, :3], False),
    "VonMises": (lambda D, T: D.VonMises(T(REAL), T(POS * 3)), ANGLES, False),
    "ContinuousBernoulli": (lambda D, T: D.ContinuousBernoulli(T(CB_PROBS)), P01, True),
    "ContinuousBernoulli_logits": (lambda D, T: D.ContinuousBernoulli(logits=T(REAL)), P01,
                                   True),
    "InverseGamma": (lambda D, T: D.InverseGamma(T(POS * 2), T(POS2)), POS, False),
    "FisherSnedecor": (lambda D, T: D.FisherSnedecor(T(POS * 4), T(DF * 2)), POS2, False),
    "GeneralizedPareto": (lambda D, T: D.GeneralizedPareto(T(REAL), T(POS), T(GP_CONC)),
                          REAL + P01, True),
    "Kumaraswamy": (lambda D, T: D.Kumaraswamy(T(POS), T(POS2 * 2)), P01, False),
    "LogisticNormal": (lambda D, T: D.LogisticNormal(T(REAL), T(POS)),
                       np.concatenate([P01, P01[:, :1]], -1) / (P01.sum(-1, keepdims=True) +
                                                                P01[:, :1]), False),
    "OneHotCategoricalStraightThrough": (lambda D, T: D.OneHotCategoricalStraightThrough(
        T(POS)), np.eye(4, dtype=np.float32)[[1, 0, 3]], False),
    "LKJCholesky": (lambda D, T: D.LKJCholesky(3, T(POS[:, 0])), LKJ_VALUE, False),
    "Wishart": (lambda D, T: D.Wishart(T(np.array([4.0, 6.5], np.float32)), T(WCOV)),
                WCOV[::-1] * 1.5, False),
    "Wishart_scale_tril": (lambda D, T: D.Wishart(5.0, scale_tril=T(np.linalg.cholesky(
        WCOV[0]))), WCOV, False),
}


def _attr_or_error(d, attr):
    try:
        return getattr(d, attr)() if attr == "entropy" else getattr(d, attr)
    except NotImplementedError:
        return NotImplementedError


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_moments(name):
    ctor, value, has_cdf = CASES[name]
    theirs, ours = both(ctor)
    assert type(ours).__name__ == type(theirs).__name__
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert cpu_repr(ours.support) == repr(theirs.support)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert repr(ours) == repr(theirs)
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == \
        {k: repr(v) for k, v in theirs.arg_constraints.items()}
    close(ours.log_prob(torchish.tensor(value)), theirs.log_prob(torch.tensor(value)), 1e-4,
          1e-5)
    for attr in ("mean", "variance", "stddev", "mode", "entropy"):
        want = _attr_or_error(theirs, attr)
        got = _attr_or_error(ours, attr)
        if want is NotImplementedError:
            assert got is NotImplementedError, attr
        else:
            close(got, want, 1e-4, 1e-5)
    if has_cdf:
        close(ours.cdf(torchish.tensor(value)), theirs.cdf(torch.tensor(value)), 1e-4, 1e-6)
        if name.startswith("Mixture"):
            return
        close(ours.icdf(torchish.tensor(P01)), theirs.icdf(torch.tensor(P01)), 1e-4, 1e-5)


@pytest.mark.parametrize("name", ["Cauchy", "StudentT", "Chi2", "HalfNormal", "Gumbel",
                                  "Weibull", "Pareto", "Geometric_logits",
                                  "NegativeBinomial_probs", "Multinomial", "RelaxedBernoulli",
                                  "RelaxedOneHotCategorical", "LowRankMultivariateNormal",
                                  "MixtureSameFamily", "VonMises", "ContinuousBernoulli",
                                  "InverseGamma", "FisherSnedecor", "GeneralizedPareto",
                                  "Kumaraswamy", "LogisticNormal", "LKJCholesky", "Wishart"])
def test_log_prob_gradients(name):
    ctor, value, _ = CASES[name]
    grads = []
    for D, mod in ((TD, torch), (OD, torchish)):
        params = []

        def T(a, mod=mod, params=params):
            t = mod.tensor(a, requires_grad=True)
            params.append(t)
            return t
        d = ctor(D, T)
        lp = d.log_prob(mod.tensor(value)).sum()
        try:
            lp = lp + d.entropy().sum()
        except NotImplementedError:
            pass
        lp.backward()
        grads.append([p.grad for p in params])
    for o, t in zip(grads[1], grads[0]):
        if t is None:
            assert o is None
        else:
            close(o, t, 1e-4, 1e-5)


def _rsample_with_grads(D, mod, ctor, seed=5):
    params = []

    def T(a):
        t = mod.tensor(a, requires_grad=True)
        params.append(t)
        return t
    d = ctor(D, T)
    mod.manual_seed(seed)
    s = d.rsample((2,))
    (s * s).sum().backward()
    return s, [p.grad for p in params], mod.rand(2)


@pytest.mark.parametrize("name", ["Cauchy", "HalfNormal", "HalfCauchy", "Gumbel", "Weibull",
                                  "Pareto", "RelaxedBernoulli", "RelaxedBernoulli_logits",
                                  "RelaxedOneHotCategorical", "LowRankMultivariateNormal",
                                  "ContinuousBernoulli", "GeneralizedPareto", "Kumaraswamy",
                                  "LogisticNormal", "OneHotCategoricalStraightThrough"])
def test_rsample_equals_pytorch_under_seed(name):
    ctor = CASES[name][0]
    ts, tg, tr = _rsample_with_grads(TD, torch, ctor)
    os_, og, or_ = _rsample_with_grads(OD, torchish, ctor)
    close(os_, ts, 1e-4, 1e-5)
    for o, t in zip(og, tg):
        close(o, t, 1e-3, 1e-4)
    close(or_, tr, 0, 0)  # the generator advanced by the same amount


@pytest.mark.parametrize("name", ["Cauchy_scalar", "Geometric_probs", "Geometric_logits",
                                  "Multinomial", "MixtureSameFamily",
                                  "MixtureSameFamily_independent", "VonMises", "Gumbel_scalar",
                                  "RelaxedOneHotCategorical", "ContinuousBernoulli_logits"])
def test_sample_equals_pytorch_under_seed(name):
    theirs, ours = both(CASES[name][0])
    torch.manual_seed(11)
    torchish.manual_seed(11)
    t, o = theirs.sample((2,)), ours.sample((2,))
    assert not o.requires_grad
    close(o, t, 1e-4, 1e-5)
    close(torchish.rand(2), torch.rand(2), 0, 0)


# parametrisation variants (scalar, logits, other matrix argument) add compiles, not coverage;
# Wishart's samples are checked in test_moments_of_samples
@pytest.mark.parametrize("name", sorted(k for k in CASES if k not in (
    "Cauchy_scalar", "Gumbel_scalar", "Wishart", "Wishart_scale_tril", "Multinomial_logits",
    "RelaxedBernoulli_logits", "ContinuousBernoulli_logits")))
def test_sample_shapes_support_and_expand(name):
    ctor, value, _ = CASES[name]
    theirs, ours = both(ctor)
    torchish.manual_seed(0)
    s, t = ours.sample((2,)), theirs.sample((2,))
    assert tuple(s.shape) == tuple(t.shape) and str(s.dtype) == str(t.dtype)
    assert s.grad_fn is None
    assert bool(ours.support.check(s).all())
    # expanded to (2,) + batch_shape: the same shapes as the samples above
    shape = (2,) + tuple(theirs.batch_shape)
    te, oe = theirs.expand(shape), ours.expand(shape)
    assert type(oe) is type(ours)
    assert tuple(oe.batch_shape) == tuple(te.batch_shape)
    assert tuple(oe.event_shape) == tuple(te.event_shape)
    assert oe._validate_args == te._validate_args
    # the expanded parameters (a log_prob at the new shape would only add compiles)
    for k in te.arg_constraints:
        if k in te.__dict__:
            close(oe.__dict__[k], te.__dict__[k], 1e-5)
    assert tuple(oe.sample().shape) == tuple(t.shape)


# the samplers not reproduced bit for bit (they draw gammas): distributional checks
@pytest.mark.parametrize("make", [
    lambda D, T: D.StudentT(T([5.0, 9.0]), T([1.0, -2.0]), T([0.5, 2.0])),
    lambda D, T: D.NegativeBinomial(T([3.0, 10.0]), T([0.2, 0.6])),
    lambda D, T: D.InverseGamma(T([5.0, 9.0]), T([1.0, 2.0])),
    lambda D, T: D.FisherSnedecor(T([5.0, 9.0]), T([12.0, 20.0])),
    lambda D, T: D.Wishart(T(6.0), T(WCOV[0])),
])
def test_moments_of_samples(make):
    n = 20000
    theirs, ours = both(make)
    torchish.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's "Singular sample detected."
        s = ours.sample((n,))
        assert str(s.dtype) == str(theirs.sample().dtype)
    assert bool(ours.support.check(s).all())
    x = s.cpu().numpy().astype(np.float64)
    mean, var = theirs.mean.cpu().numpy(), theirs.variance.cpu().numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=5 * np.sqrt(var / n).max())
    np.testing.assert_allclose(x.var(0), var, rtol=0.15)


def test_studentt_rsample_gradient():
    # d sample / d loc = 1, d sample / d scale = sample standardized
    loc = torchish.tensor([1.0, -1.0], requires_grad=True)
    scale = torchish.tensor([2.0, 0.5], requires_grad=True)
    s = OD.StudentT(torchish.tensor([4.0, 6.0]), loc, scale).rsample((3,))
    s.sum().backward()
    close(loc.grad, torch.tensor([3.0, 3.0]))
    close(scale.grad, torch.tensor(((s - loc) / scale).sum(0).detach().cpu().numpy()), 1e-4, 1e-5)


def _kl_cases():
    N = lambda D, T: D.Normal(T(REAL), T(POS))  # noqa: E731
    U = lambda D, T: D.Uniform(T(P01 * 0.5), T(P01 * 0.5 + 0.4))  # noqa: E731
    E = lambda D, T: D.Exponential(T(POS))  # noqa: E731
    G = lambda D, T: D.Gamma(T(POS), T(POS2))  # noqa: E731
    B = lambda D, T: D.Beta(T(POS), T(POS2))  # noqa: E731
    Gu = lambda D, T: D.Gumbel(T(REAL), T(POS2))  # noqa: E731
    Pa = lambda D, T: D.Pareto(T(POS), T(POS2 * 3))  # noqa: E731
    La = lambda D, T: D.Laplace(T(REAL), T(POS2))  # noqa: E731
    return [
        (lambda D, T: D.Cauchy(T(REAL), T(POS)), lambda D, T: D.Cauchy(T(REAL * 2), T(POS2))),
        (Gu, lambda D, T: D.Gumbel(T(REAL * 2), T(POS))),
        (lambda D, T: D.Geometric(T(P01)), lambda D, T: D.Geometric(logits=T(REAL))),
        (lambda D, T: D.HalfNormal(T(POS)), lambda D, T: D.HalfNormal(T(POS2))),
        (Pa, lambda D, T: D.Pareto(T(POS * 0.5), T(POS2))),
        (Pa, lambda D, T: D.Pareto(T(POS2), T(POS))),
        (lambda D, T: D.LowRankMultivariateNormal(T(REAL), T(W), T(POS)),
         lambda D, T: D.LowRankMultivariateNormal(T(REAL[0] * 2), T(W[1]), T(POS2))),
        (lambda D, T: D.MultivariateNormal(T(REAL), T(COV)),
         lambda D, T: D.LowRankMultivariateNormal(T(REAL[0] * 2), T(W), T(POS2))),
        (lambda D, T: D.LowRankMultivariateNormal(T(REAL), T(W), T(POS)),
         lambda D, T: D.MultivariateNormal(T(REAL[1]), T(COV))),
        (lambda D, T: D.Bernoulli(T(P01)), lambda D, T: D.Poisson(T(POS))),
        (B, E), (B, G), (B, N), (B, U), (B, Pa), (E, Gu), (E, N), (E, U), (G, E), (G, Gu),
        (G, N), (G, B), (Gu, N), (Gu, E), (La, N), (La, Pa), (N, Gu), (N, La), (N, E),
        (Pa, E), (Pa, G), (Pa, N), (Pa, U), (U, B), (U, E), (U, G), (U, Gu), (U, N), (U, Pa),
        (lambda D, T: D.Poisson(T(POS)), lambda D, T: D.Binomial(5, T(P01))),
    ]


KL_PAIRS = _kl_cases()


@pytest.mark.parametrize("i", range(len(KL_PAIRS)))
def test_kl_divergence(i):
    p_ctor, q_ctor = KL_PAIRS[i]
    res = []
    for D, mod in ((TD, torch), (OD, torchish)):
        params = []

        def T(a, mod=mod, params=params):
            t = mod.tensor(a, requires_grad=True)
            params.append(t)
            return t
        kl = D.kl_divergence(p_ctor(D, T), q_ctor(D, T))
        if kl.requires_grad:
            kl.sum().backward()
        res.append((kl, [p.grad for p in params]))
    (tk, tg), (ok, og) = res
    close(ok, tk, 1e-4, 1e-5)
    for o, t in zip(og, tg):
        if t is not None:
            close(o, t, 1e-3, 1e-4)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("make", [
    lambda D, T: D.Cauchy(T([0.0, 1.0]), T([1.0, -1.0])),
    lambda D, T: D.StudentT(T([-1.0, 2.0])),
    lambda D, T: D.StudentT(T([1.0]), T([0.0]), T([0.0])),
    lambda D, T: D.Chi2(T([0.0])),
    lambda D, T: D.HalfNormal(T([-1.0])),
    lambda D, T: D.HalfCauchy(T([1.0])).log_prob(T([-1.0])),
    lambda D, T: D.Gumbel(T([0.0]), T([-1.0])),
    lambda D, T: D.Weibull(T([1.0]), T([-1.0])),
    lambda D, T: D.Pareto(T([1.0]), T([2.0])).log_prob(T([0.5])),
    lambda D, T: D.Geometric(T([0.0, 0.5])),
    lambda D, T: D.Geometric(T([1.5])),
    lambda D, T: D.Geometric(probs=T([0.5]), logits=T([0.0])),
    lambda D, T: D.Geometric(T([0.5])).log_prob(T([1.5])),
    lambda D, T: D.NegativeBinomial(T([2.0]), T([1.0])),
    lambda D, T: D.Multinomial(T(3), T([0.5, 0.5])),
    lambda D, T: D.Multinomial(3, T([0.5, 0.5])).log_prob(T([2.0, 2.0])),
    lambda D, T: D.RelaxedBernoulli(T(0.5), T([1.5])),
    lambda D, T: D.RelaxedOneHotCategorical(T(0.5), T([0.5, -0.1])),
    lambda D, T: D.LowRankMultivariateNormal(T(0.0), T([[1.0]]), T([1.0])),
    lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([1.0, 1.0]), T([1.0, 1.0])),
    lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0, 1.0]]), T([1.0, 1.0])),
    lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]), T([1.0])),
    lambda D, T: D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]),
                                             T([1.0, -1.0])),
    lambda D, T: D.MixtureSameFamily(D.Normal(T([0.0]), T([1.0])), D.Normal(T([0.0]),
                                                                            T([1.0]))),
    lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])), "normal"),
    lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])),
                                     D.Normal(T([0.0, 1.0, 2.0]), T([1.0, 1.0, 1.0]))),
    lambda D, T: D.MixtureSameFamily(D.Categorical(T([[0.5, 0.5]] * 2)),
                                     D.Normal(T([[0.0, 1.0]] * 3), T([[1.0, 1.0]] * 3))),
    lambda D, T: D.MixtureSameFamily(D.Categorical(T([0.5, 0.5])), D.Exponential(
        T([1.0, 2.0]))).log_prob(T(-1.0)),
    lambda D, T: D.VonMises(T([0.0]), T([-1.0])),
    lambda D, T: D.LKJCholesky(1),
    lambda D, T: D.LKJCholesky(2, T([-1.0])),
    lambda D, T: D.Wishart(T(1.5), T(np.eye(3, dtype=np.float32))),
    lambda D, T: D.Wishart(T(5.0)),
    lambda D, T: D.Wishart(T(5.0), T([1.0, 2.0])),
    lambda D, T: D.Wishart(T(5.0), T([[1.0, 2.0], [2.0, 1.0]])),
    lambda D, T: D.ContinuousBernoulli(T([1.5]), validate_args=True),
    lambda D, T: D.GeneralizedPareto(T([0.0]), T([1.0]), T([-0.5])).log_prob(T([3.0])),
    lambda D, T: D.Kumaraswamy(T([1.0]), T([-1.0])),
    lambda D, T: D.LogisticNormal(T([0.0]), T([0.0])),
    lambda D, T: D.transforms.ReshapeTransform((2, 3), (4,)),
    lambda D, T: D.transforms.ReshapeTransform((2, 3), (3, 2)).forward_shape((2, 2)),
    lambda D, T: D.biject_to(D.constraints.positive_definite),
    lambda D, T: D.kl_divergence(D.LowRankMultivariateNormal(T([0.0]), T([[1.0]]), T([1.0])),
                                 D.LowRankMultivariateNormal(T([0.0, 0.0]), T([[1.0], [1.0]]),
                                                             T([1.0, 1.0]))),
])
@pytest.mark.usefixtures("cpu_tensors")  # the messages print tensors, as the CPU oracle's
def test_validation_errors(make):
    want = _error(lambda: make(TD, torch.tensor))
    got = _error(lambda: make(OD, torchish.tensor))
    assert want is not None
    assert got is not None, want
    assert got[0] is want[0] and got[1] == want[1], (got, want)


def test_lowrank_matrices_and_misc():
    theirs, ours = both(CASES["LowRankMultivariateNormal"][0])
    for attr in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        close(getattr(ours, attr), getattr(theirs, attr), 1e-4, 1e-5)
    theirs, ours = both(CASES["MixtureSameFamily"][0])
    assert type(ours.mixture_distribution).__name__ == "Categorical"
    assert cpu_repr(ours.support) == repr(theirs.support)
    x = [[-1.0, 0.0], [1.0, math.nan]]
    C, TC = OD.constraints, TD.constraints
    close(C.MixtureSameFamilyConstraint(C.positive).check(torchish.tensor(x)),
          TC.MixtureSameFamilyConstraint(TC.positive).check(torch.tensor(x)))
    corr = [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.6, 0.7]]]
    close(C.corr_cholesky.check(torchish.tensor(corr)), TC.corr_cholesky.check(torch.tensor(corr)))
    assert repr(C.corr_cholesky) == repr(TC.corr_cholesky)
    m = OD.Multinomial(5, torchish.tensor(POS))
    tm = TD.Multinomial(5, torch.tensor(POS))
    assert repr(m.support) == repr(tm.support)
    c2 = OD.Chi2(torchish.tensor(POS))
    close(c2.df, TD.Chi2(torch.tensor(POS)).df)
    assert isinstance(c2, OD.Gamma)
    st = OD.StudentT(2.0)
    assert tuple(st.batch_shape) == () and st.df.dtype == torchish.float32
    # HalfCauchy casts the value to the parameters' dtype, HalfNormal does not
    for name in ("HalfNormal", "HalfCauchy"):
        o = getattr(OD, name)(torchish.tensor(1.0)).log_prob(torchish.tensor(0.5).double())
        t = getattr(TD, name)(torch.tensor(1.0)).log_prob(torch.tensor(0.5).double())
        close(o, t)


def test_continuous_bernoulli_and_expfamily_kl():
    CB = lambda D, T: D.ContinuousBernoulli(T(CB_PROBS))  # noqa: E731
    pairs = [(CB, lambda D, T: D.ContinuousBernoulli(logits=T(REAL))),
             (lambda D, T: D.Beta(T(POS), T(POS2)), CB),
             (CB, lambda D, T: D.Exponential(T(POS))),
             (CB, lambda D, T: D.Normal(T(REAL), T(POS))),
             (CB, lambda D, T: D.Uniform(T(REAL - 1), T(REAL + 1))),
             (lambda D, T: D.Uniform(T(P01 * 0.5), T(P01 * 0.5 + 0.4)), CB),
             (lambda D, T: D.Normal(T(REAL), T(POS)), CB),
             (CB, lambda D, T: D.Pareto(T(POS), T(POS2)))]
    for p, q in pairs:
        theirs = TD.kl_divergence(*both(p)[:1], *both(q)[:1])
        ours = OD.kl_divergence(both(p)[1], both(q)[1])
        close(ours, theirs, 1e-4, 1e-5)
    # the Bregman-divergence KL and entropy of ExponentialFamily, used directly
    for make in (lambda D, T: D.Normal(T(REAL), T(POS)),
                 lambda D, T: D.Gamma(T(POS), T(POS2)),
                 lambda D, T: D.Poisson(T(POS)),
                 lambda D, T: D.Bernoulli(T(P01))):
        (tp, op), (tq, oq) = both(make), both(lambda D, T: make(D, lambda a: T(a * 0.8)))
        assert isinstance(op, OD.ExponentialFamily)
        close(OD.kl._kl_expfamily_expfamily(op, oq),
              TD.kl._kl_expfamily_expfamily(tp, tq), 1e-4, 1e-5)
        if not isinstance(op, OD.Poisson):
            close(OD.ExponentialFamily.entropy(op), TD.ExponentialFamily.entropy(tp), 1e-4,
                  1e-5)
    want = _error(lambda: TD.kl_divergence(TD.Poisson(torch.tensor(1.0)),
                                           TD.Normal(0.0, 1.0)))
    got = _error(lambda: OD.kl_divergence(OD.Poisson(torchish.tensor(1.0)),
                                          OD.Normal(0.0, 1.0)))
    assert got == want


def test_structured_transforms_and_registry():
    x = R.normal(size=(2, 6)).astype(np.float32)
    m = R.normal(size=(2, 3, 3)).astype(np.float32)
    cases = [
        (lambda M: M.StickBreakingTransform(), x),
        (lambda M: M.CorrCholeskyTransform(), x),
        (lambda M: M.LowerCholeskyTransform(), m),
        (lambda M: M.PositiveDefiniteTransform(), m),
        (lambda M: M.SoftmaxTransform(), x),
        (lambda M: M.ReshapeTransform((6,), (2, 3)), x),
        (lambda M: M.CatTransform([M.ExpTransform(), M.AffineTransform(1.0, 2.0)], 1, [2, 4]),
         x),
        (lambda M: M.StackTransform([M.ExpTransform(), M.SigmoidTransform()], 0), x),
    ]
    for make, arr in cases:
        o, t = make(OD.transforms), make(TD.transforms)
        ox, tx = torchish.tensor(arr), torch.tensor(arr)
        assert repr(o) == repr(t)
        assert repr(o.domain) == repr(t.domain) and repr(o.codomain) == repr(t.codomain)
        assert o.bijective == t.bijective
        oy, ty = o(ox), t(tx)
        close(oy, ty, 1e-4, 1e-5)
        close(o.inv(oy), t.inv(ty), 1e-3, 1e-4)
        assert tuple(o.forward_shape(ox.shape)) == tuple(t.forward_shape(tx.shape))
        try:
            want = t.log_abs_det_jacobian(tx, ty)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                o.log_abs_det_jacobian(ox, oy)
        else:
            close(o.log_abs_det_jacobian(ox, oy), want, 1e-4, 1e-5)
    cdf_o = OD.transforms.CumulativeDistributionTransform(OD.Normal(0.0, 1.0))
    cdf_t = TD.transforms.CumulativeDistributionTransform(TD.Normal(0.0, 1.0))
    close(cdf_o(torchish.tensor(x)), cdf_t(torch.tensor(x)), 1e-5)
    C, TC = OD.constraints, TD.constraints
    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector",
                 "lower_cholesky", "positive_definite", "corr_cholesky"):
        for reg in ("biject_to", "transform_to"):
            try:
                want = repr(getattr(TD, reg)(getattr(TC, name)))
            except NotImplementedError as e:
                with pytest.raises(NotImplementedError, match=str(e)):
                    getattr(OD, reg)(getattr(C, name))
                continue
            assert repr(getattr(OD, reg)(getattr(C, name))) == want, (reg, name)
    assert repr(OD.biject_to(C.interval(-1.0, 3.0))) == \
        repr(TD.biject_to(TC.interval(-1.0, 3.0)))
    y = OD.transform_to(C.greater_than(2.0))(torchish.tensor(x))
    assert bool((y > 2.0).all())


def test_under_compile():
    loc = torchish.tensor(REAL)
    scale = torchish.tensor(POS)
    probs = torchish.tensor(POS / POS.sum(-1, keepdims=True))

    def f(loc, scale, probs):
        mix = OD.MixtureSameFamily(OD.Categorical(probs), OD.Normal(loc, scale))
        return (OD.Cauchy(loc, scale).rsample(), OD.Geometric(probs).sample(),
                OD.Multinomial(5, probs).sample(), mix.log_prob(loc[:, 0]),
                OD.VonMises(loc, scale).sample())
    with _no_warning():
        out = torchish.compile(f)(loc, scale, probs)
    assert [tuple(o.shape) for o in out] == [(3, 4)] * 3 + [(3,)] + [(3, 4)]
    assert bool((out[2].sum(-1) == 5).all())
    assert bool((out[4].abs() <= math.pi).all())
    close(out[3], OD.MixtureSameFamily(OD.Categorical(probs), OD.Normal(loc, scale))
          .log_prob(loc[:, 0]), 1e-5)


class _no_warning:
    """Fails if torchish.compile falls back to eager (it warns when it does)."""

    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings(record=True)
        self._log = self._cm.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        assert not [w for w in self._log if "compile" in str(w.message)], \
            [str(w.message) for w in self._log]


def test_pytorch_module_paths():
    import importlib
    for mod, name in (("normal", "Normal"), ("studentT", "StudentT"), ("gamma", "Gamma"),
                      ("mixture_same_family", "MixtureSameFamily"), ("one_hot_categorical",
                      "OneHotCategoricalStraightThrough"), ("relaxed_categorical",
                      "ExpRelaxedCategorical"), ("wishart", "Wishart"),
                      ("lowrank_multivariate_normal", "LowRankMultivariateNormal"),
                      ("constraint_registry", "biject_to"), ("exp_family", "ExponentialFamily"),
                      ("transforms", "StickBreakingTransform"), ("utils", "tril_matrix_to_vec")):
        assert hasattr(importlib.import_module(f"torch.distributions.{mod}"), name)
        assert hasattr(importlib.import_module(f"torchish.distributions.{mod}"), name), mod


def test_classes_name_pytorchs_modules():
    # type(d), "<class ...> does not implement mode" and pickles name PyTorch's module
    import pickle
    for name in torch.distributions.__all__:
        ref = getattr(torch.distributions, name)
        if isinstance(ref, type):
            ours = getattr(torchish.distributions, name)
            assert ours.__module__.replace("torchish", "torch", 1) == ref.__module__, name
    d = torchish.distributions.LogisticNormal(torchish.zeros(2), torchish.ones(2))
    with pytest.raises(NotImplementedError) as ours:
        d.mode
    with pytest.raises(NotImplementedError) as ref:
        torch.distributions.LogisticNormal(torch.zeros(2), torch.ones(2)).mode
    assert str(ours.value).replace("torchish", "torch") == str(ref.value)
    back = pickle.loads(pickle.dumps(torchish.distributions.Gumbel(0.0, 2.0)))
    assert repr(back) == "Gumbel(loc: 0.0, scale: 2.0)"
