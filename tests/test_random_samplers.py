"""Samplers that replay PyTorch's CPU kernels on the host, against real PyTorch: gamma-based
samples (`_standard_gamma`, `_sample_dirichlet` in torchish/_random_gamma.py, and every
distribution drawing through them) under the same seed, with what the generator draws next
(the Box-Muller cache included), their reparameterized gradients; multinomial's errors for
invalid probabilities."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _t(L, v, dtype="float32"):
    return L.tensor(v, dtype=getattr(L, dtype))


CASES = {
    "gamma": lambda L, D: D.Gamma(_t(L, [0.5, 2.0, 0.05]), _t(L, [1.0, 3.0, 1.0])).sample((4,)),
    "gamma64": lambda L, D: D.Gamma(_t(L, [0.5, 7.0], "float64"),
                                    _t(L, [1.0, 3.0], "float64")).sample((3,)),
    "beta": lambda L, D: D.Beta(_t(L, [0.5, 2.0]), _t(L, [1.5, 0.3])).sample((3,)),
    "dirichlet": lambda L, D: D.Dirichlet(_t(L, [[0.5, 2.0, 1.0], [3.0, 0.2, 1.0]])).sample((2,)),
    "chi2": lambda L, D: D.Chi2(_t(L, [1.0, 5.0])).sample((3,)),
    "student_t": lambda L, D: D.StudentT(_t(L, [2.0, 5.0]), _t(L, [0.0, 1.0])).sample((3,)),
    "inverse_gamma": lambda L, D: D.InverseGamma(_t(L, [2.0, 3.0]), _t(L, [1.0, 2.0])).sample(),
    "fisher_snedecor": lambda L, D: D.FisherSnedecor(_t(L, [2.0, 5.0]), _t(L, [3.0, 4.0]))
    .sample((2,)),
    "negative_binomial": lambda L, D: D.NegativeBinomial(_t(L, [3.0, 5.0]),
                                                         probs=_t(L, [0.3, 0.6])).sample((3,)),
    "lkj_cholesky": lambda L, D: D.LKJCholesky(3, _t(L, 1.5)).sample((2,)),
    "standard_gamma_odd_count": lambda L, D: D.Gamma(_t(L, [3.0] * 21), _t(L, [1.0] * 21))
    .sample(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples_are_pytorchs(name, cpu_tensors):
    got = []
    for L in (torchish, torch):
        L.manual_seed(0)
        sample = CASES[name](L, L.distributions)
        got.append((sample.numpy(), L.randn(3).numpy()))   # the stream after it, too
    (ours, ours_next), (ref, ref_next) = got
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(ours_next, ref_next)


def test_standard_gamma_is_bit_exact(cpu_tensors):
    from torchish._random_engine import MT19937Engine
    from torchish import _random_gamma
    for dtype in (torch.float32, torch.float64):
        alphas = torch.tensor([0.5, 1.0, 2.5, 7.0, 0.1, 30.0, 1e-3], dtype=dtype)
        torch.manual_seed(3)
        expected = torch._standard_gamma(alphas).numpy()
        got = _random_gamma.standard_gamma(MT19937Engine(3), alphas.numpy())
        np.testing.assert_array_equal(got, expected)


RSAMPLES = {
    "gamma": lambda L, a, b: L.distributions.Gamma(a, b).rsample((5,)),
    "beta": lambda L, a, b: L.distributions.Beta(a, b).rsample((5,)),
    "dirichlet": lambda L, a, b: L.distributions.Dirichlet(L.stack([a, b], -1)).rsample((4,))
    * L.tensor([1.0, 3.0]),
    "student_t": lambda L, a, b: L.distributions.StudentT(a, b).rsample((3,)),
}


@pytest.mark.parametrize("name", sorted(RSAMPLES))
def test_rsample_gradients_are_pytorchs(name, cpu_tensors):
    """Reparameterized gradients use PyTorch's `_standard_gamma_grad`/`_dirichlet_grad`
    approximations at PyTorch's samples."""
    grads = []
    for L in (torchish, torch):
        L.manual_seed(1)
        a = L.tensor([0.7, 3.0, 9.0], requires_grad=True)
        b = L.tensor([2.0, 0.5, 8.0], requires_grad=True)
        RSAMPLES[name](L, a, b).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-7)


def _draws(dtype, n=4000):
    rng = np.random.default_rng(0)
    alpha = np.exp(rng.uniform(-3, 4, n)).astype(dtype)
    total = alpha + np.exp(rng.uniform(-3, 4, n)).astype(dtype)
    x = np.clip(rng.beta(alpha, total - alpha), 1e-6, 1 - 1e-6).astype(dtype)
    return alpha, total, x, np.maximum(rng.gamma(alpha), 1e-30).astype(dtype)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 5e-4)])
def test_reparameterized_gradient_approximations(dtype, rtol):
    """Every branch of the approximations (small and large samples and concentrations) over
    a wide range. In float32 a few Dirichlet gradients differ more: PyTorch runs some series
    in float32, whose cancellations magnify the last-bit differences of XLA's and the C
    library's float32 log and pow."""
    import jax.numpy as jnp
    from torchish.distributions._reparam_grads import dirichlet_grad, standard_gamma_grad
    alpha, total, x, g = _draws(dtype)
    np.testing.assert_allclose(
        np.asarray(standard_gamma_grad(jnp.asarray(alpha), jnp.asarray(g))),
        torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(g)).numpy(),
        rtol=1e-10 if dtype is np.float64 else 1e-6)
    np.testing.assert_allclose(
        np.asarray(dirichlet_grad(jnp.asarray(x), jnp.asarray(alpha), jnp.asarray(total))),
        torch._dirichlet_grad(torch.tensor(x), torch.tensor(alpha), torch.tensor(total)).numpy(),
        rtol=rtol)


@pytest.mark.parametrize("probs, n, replacement", [
    ([-1.0, 1.0], 2, True), ([float("inf"), 1.0], 2, True), ([float("nan"), 1.0], 2, True),
    ([-1.0, 1.0], 1, True), ([-1.0, 1.0], 2, False), ([0.0, 0.0], 2, True),
    ([[1.0, 2.0], [0.0, -1.0]], 3, True), ([1, 2], 1, True), ([True, False], 1, False)])
def test_multinomial_errors_are_pytorchs(probs, n, replacement):
    raised = []
    for L in (torchish, torch):
        with pytest.raises(RuntimeError) as info:
            L.multinomial(L.tensor(probs), n, replacement)
        raised.append(str(info.value))
    assert raised[0] == raised[1]


@pytest.mark.skipif(torchish.cuda.is_available(), reason="CPU-only behaviour: no CUDA device")
def test_cuda_seeding_without_a_gpu_leaves_the_cpu_stream_alone():
    def draws(T):
        T.manual_seed(0)
        a = T.rand(2).tolist()
        T.cuda.manual_seed(5)
        T.cuda.manual_seed_all(7)
        return a, T.rand(2).tolist(), T.initial_seed()
    assert draws(torchish) == draws(torch)


GENERATOR_CALLS = {
    "randn": lambda L, g: L.randn(2, generator=g),
    "randint": lambda L, g: L.randint(0, 3, (2,), generator=g),
    "randperm": lambda L, g: L.randperm(3, generator=g),
    "normal": lambda L, g: L.normal(0.0, 1.0, (2,), generator=g),
    "bernoulli": lambda L, g: L.bernoulli(L.ones(2) * 0.5, generator=g),
    "multinomial": lambda L, g: L.multinomial(L.ones(2), 1, generator=g),
    "rand_like": lambda L, g: L.rand_like(L.ones(2), generator=g),
    "normal_": lambda L, g: L.ones(2).normal_(generator=g),
    "uniform_": lambda L, g: L.ones(2).uniform_(0, 1, generator=g),
    "Tensor.multinomial": lambda L, g: L.ones(2).multinomial(1, generator=g),
}


@pytest.mark.parametrize("name", sorted(GENERATOR_CALLS))
def test_a_generator_that_is_not_one_is_pytorchs_type_error(name):
    call = GENERATOR_CALLS[name]
    for bad in (3, "g"):
        with pytest.raises(TypeError) as theirs:
            call(torch, bad)
        with pytest.raises(TypeError) as ours:
            call(torchish, bad)
        assert str(ours.value) == str(theirs.value)
    a = call(torchish, torchish.Generator().manual_seed(1))
    b = call(torch, torch.Generator().manual_seed(1))
    assert a.tolist() == b.tolist()
