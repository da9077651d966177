"""torch.distributions samplers inside an eager `torch.func.vmap(randomness=...)`: each case
runs in torchish and in PyTorch from the same seed and compares the values, their dtype, the
generator's state after the call, or the error raised (functorch refuses batched parameters
under "same" and in-place draws into a fresh, unbatched tensor under "different", which
Normal.rsample, Exponential, Laplace, Cauchy and MultivariateNormal make)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

B = 3
_PROBS = np.random.RandomState(0).rand(B, 5).astype(np.float32)
# (eager too, these differ from PyTorch by an ulp in their transforms, not in their draws)
_ULP = {"gumbel", "relaxed_bernoulli", "student_t", "continuous_bernoulli", "relaxed_one_hot",
        "pareto", "generalized_pareto", "logistic_normal"}


def _cases(T):
    D, vmap = T.distributions, T.func.vmap
    x, p, probs = T.zeros(B, 4), T.full((B, 4), 0.3), T.tensor(_PROBS)
    ones = T.ones(4)
    return {
        "normal_sample": (lambda v: D.Normal(v, 1.).sample(), (x,), {}),
        "normal_sample_unbatched": (lambda v: D.Normal(T.zeros(4), ones).sample() + v, (x,),
                                    {}),
        "normal_sample_shape": (lambda v: D.Normal(v, 2.).sample((2,)), (x,), {}),
        "normal_scalar_params": (lambda v: D.Normal(0., 1.).sample((4,)) + v, (x,), {}),
        "normal_rsample": (lambda v: D.Normal(v, 1.).rsample(), (x,), {}),
        "normal_rsample_unbatched": (lambda v: D.Normal(T.zeros(4), ones).rsample() + v,
                                     (x,), {}),
        "log_normal": (lambda v: D.LogNormal(v, 1.).sample(), (x,), {}),
        "bernoulli": (lambda q: D.Bernoulli(q).sample(), (p,), {}),
        "bernoulli_logits": (lambda q: D.Bernoulli(logits=q).sample(), (p,), {}),
        "bernoulli_unbatched": (lambda v: D.Bernoulli(T.full((4,), .3)).sample() + v, (x,),
                                {}),
        "categorical": (lambda q: D.Categorical(q).sample(), (probs,), {}),
        "categorical_shape": (lambda q: D.Categorical(q).sample((2,)), (probs,), {}),
        "categorical_unbatched": (lambda v: D.Categorical(T.ones(5)).sample((2,)) +
                                  v.long()[:2], (x,), {}),
        "one_hot_categorical": (lambda q: D.OneHotCategorical(q).sample(), (probs,), {}),
        "uniform": (lambda v: D.Uniform(v, v + 1).sample(), (x,), {}),
        "uniform_rsample": (lambda v: D.Uniform(v, v + 1).rsample((2,)), (x,), {}),
        "uniform_unbatched": (lambda v: D.Uniform(T.zeros(4), ones).sample() + v, (x,), {}),
        "exponential": (lambda v: D.Exponential(v + 1).sample(), (x,), {}),
        "exponential_unbatched": (lambda v: D.Exponential(ones).sample() + v, (x,), {}),
        "laplace": (lambda v: D.Laplace(v, 1.).sample(), (x,), {}),
        "cauchy": (lambda v: D.Cauchy(v, 1.).sample(), (x,), {}),
        "gumbel": (lambda v: D.Gumbel(v, 1.).sample(), (x,), {}),
        "relaxed_bernoulli": (lambda q: D.RelaxedBernoulli(T.tensor(0.5), q).rsample(), (p,),
                              {}),
        "gamma": (lambda v: D.Gamma(v + 1, 1.).sample(), (x,), {}),
        "gamma_unbatched": (lambda v: D.Gamma(ones, 2.).rsample() + v, (x,), {}),
        "chi2_unbatched": (lambda v: D.Chi2(ones).sample((2,)) + v, (x,), {}),
        "student_t": (lambda v: D.StudentT(T.full((4,), 3.)).sample() + v, (x,), {}),
        "beta": (lambda v: D.Beta(ones, ones).sample() + v, (x,), {}),
        "dirichlet": (lambda v: D.Dirichlet(ones).sample() + v, (x,), {}),
        "poisson": (lambda v: D.Poisson(v + 1).sample(), (x,), {}),
        "poisson_unbatched": (lambda v: D.Poisson(ones).sample() + v, (x,), {}),
        "binomial_unbatched": (lambda v: D.Binomial(5, T.full((4,), .3)).sample() + v, (x,),
                               {}),
        "binomial": (lambda q: D.Binomial(5, q).sample(), (p,), {}),
        "multivariate_normal": (lambda v: D.MultivariateNormal(v, T.eye(4)).sample(), (x,),
                                {}),
        "geometric": (lambda q: D.Geometric(q).sample(), (p,), {}),
        "von_mises": (lambda v: D.VonMises(v, 1.).sample(), (x,), {}),
        "wishart": (lambda v: D.Wishart(T.tensor(5.), T.eye(2)).sample() + v,
                    (T.zeros(B, 2, 2),), {}),
        "lkj_cholesky": (lambda v: D.LKJCholesky(3, T.tensor(1.)).sample() + v,
                         (T.zeros(B, 3, 3),), {}),
        "continuous_bernoulli": (lambda q: D.ContinuousBernoulli(q).sample(), (p,), {}),
        "relaxed_one_hot": (lambda q: D.RelaxedOneHotCategorical(T.tensor(0.5), q).rsample(),
                            (probs,), {}),
        "multinomial": (lambda q: D.Multinomial(4, q).sample(), (probs,), {}),
        "pareto": (lambda v: D.Pareto(v + 1, 1.).sample(), (x,), {}),
        "weibull": (lambda v: D.Weibull(v + 1, 1.).sample(), (x,), {}),
        "half_normal": (lambda v: D.HalfNormal(v + 1).sample(), (x,), {}),
        "half_cauchy": (lambda v: D.HalfCauchy(v + 1).sample(), (x,), {}),
        "low_rank_mvn": (lambda v: D.LowRankMultivariateNormal(v, T.ones(4, 1), ones).sample(),
                         (x,), {}),
        "kumaraswamy": (lambda v: D.Kumaraswamy(v + 1, ones).sample(), (x,), {}),
        "negative_binomial_unbatched": (lambda v: D.NegativeBinomial(
            3., T.full((4,), .4)).sample() + v, (x,), {}),
        "fisher_snedecor_unbatched": (lambda v: D.FisherSnedecor(ones, ones * 2).sample() + v,
                                      (x,), {}),
        "inverse_gamma_unbatched": (lambda v: D.InverseGamma(ones, ones).sample() + v, (x,),
                                    {}),
        "mixture": (lambda q: D.MixtureSameFamily(D.Categorical(q), D.Normal(
            T.zeros(5), T.ones(5))).sample(), (probs,), {}),
        "generalized_pareto": (lambda v: D.GeneralizedPareto(v, 1., 0.1).sample(), (x,), {}),
        "logistic_normal": (lambda v: D.LogisticNormal(v, 1.).sample(), (x,), {}),
        "independent": (lambda v: D.Independent(D.Normal(v, 1.), 1).sample(), (x,), {}),
        # the batch dim elsewhere, nested vmaps, chunks
        "in_dims1": (lambda v: D.Normal(v, 1.).sample(), (T.zeros(4, B),), {"in_dims": 1}),
        "nested": (lambda q: vmap(lambda r: D.Normal(r, 1.).sample(), randomness="different")(
            q), (T.zeros(B, 2, 4),), {}),
        "nested_bernoulli": (lambda q: vmap(lambda r: D.Bernoulli(r).sample(),
                                            randomness="different")(q),
                             (T.full((B, 2, 4), 0.4),), {}),
        "negative_binomial": (lambda q: D.NegativeBinomial(3., probs=q).sample(), (p,), {}),
        "binomial_counts": (lambda v: D.Binomial(v + 4, T.full((4,), .3)).sample(), (x,), {}),
        "gamma_in_dims1": (lambda v: D.Gamma(v + 1, 1.).sample(), (T.zeros(4, B),),
                           {"in_dims": 1}),
        "nested_gamma": (lambda q: vmap(lambda r: D.Gamma(q[0] + 1, 1.).sample() + r,
                                        randomness="different")(q), (T.zeros(B, 2, 4),), {}),
        "nested_poisson_same_inside": (lambda q: vmap(lambda r: D.Poisson(q[0] + 2).sample()
                                                      + r, randomness="same")(q),
                                       (T.zeros(B, 2, 4),), {}),
        "nested_gamma_inner_batched": (lambda q: vmap(lambda r: D.Gamma(r + 1, 1.).sample(),
                                                      randomness="different")(q),
                                       (T.zeros(B, 2, 4),), {}),
        "chunks": (lambda q: D.Categorical(q).sample((2,)), (probs,), {"chunk_size": 2}),
        "chunks_poisson": (lambda v: D.Poisson(v + 1).sample(), (x,), {"chunk_size": 2}),
        "chunks_gamma": (lambda v: D.Gamma(ones, 1.).sample() + v, (x,), {"chunk_size": 2}),
    }


# Multinomial: PyTorch refuses its in-place scatter_add_ of batched draws into an unbatched
# tensor, a check torchish's vmap does not make for in-place ops.
CASES = [(n, m) for n in _cases(torchish) for m in ("same", "different")]


def _run(T, name, mode):
    func, args, kwargs = _cases(T)[name]
    T.manual_seed(0)
    try:
        out = T.func.vmap(func, randomness=mode, **kwargs)(*args)
    except RuntimeError as e:
        return (type(e).__name__, str(e)), None
    return out.detach().numpy(), T.get_rng_state().numpy()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,mode", CASES)
def test_values_state_and_errors_as_pytorch(name, mode):
    ours, our_state = _run(torchish, name, mode)
    theirs, their_state = _run(torch, name, mode)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
        return
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
    if name in _ULP:
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_state, their_state)


def _rsample_grad(T):
    T.manual_seed(0)
    D = T.distributions
    f = T.func.vmap(T.func.grad(lambda s: (D.Normal(s, s.exp()).rsample() ** 2).sum()),
                    randomness="same")
    g = f(T.linspace(0, 1, 12).reshape(B, 4))
    return g.numpy(), T.get_rng_state().numpy()


def test_rsample_gradient_inside_vmap_as_pytorch():
    ours, theirs = _rsample_grad(torchish), _rsample_grad(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_compiled_vmap_keeps_jax_keys():
    D = torchish.distributions
    f = torchish.compile(lambda x: torchish.func.vmap(
        lambda v: D.Normal(v, 1.).sample() + D.Gamma(v + 1, 1.).rsample(),
        randomness="different")(x))
    torchish.manual_seed(0)
    a, b = f(torchish.zeros(B, 4)), f(torchish.zeros(B, 4))
    assert bool((a[0] != a[1]).all()) and bool((a != b).all())


def _grad_around_vmap_draw(T):
    D = T.distributions
    f = T.func.vmap(lambda v: D.Poisson(v * 50).sample() * v, randomness="different")
    T.manual_seed(0)
    g = T.func.grad(lambda u: f(u).sum())(T.linspace(1, 3, 12).reshape(B, 4))
    return g.numpy(), T.rand(2).numpy()   # (the gradient of sample * rate is the sample)


def test_batched_rates_under_grad_follow_pytorchs_stream():
    # func.grad around an eager vmap runs it on the values, so batched rates are read on the
    # host: PyTorch's draws, and its generator state after them
    ours, theirs = _grad_around_vmap_draw(torchish), _grad_around_vmap_draw(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
