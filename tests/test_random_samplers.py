"""Samplers that replay PyTorch's CPU kernels on the host, against real PyTorch: gamma-based
samples (`_standard_gamma`, `_sample_dirichlet` in torchish/_random_gamma.py, and every
distribution drawing through them) under the same seed, with what the generator draws next
(the Box-Muller cache included); multinomial's errors for invalid probabilities."""
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


def test_gamma_rsample_gradient_is_pytorchs(cpu_tensors):
    grads = []
    for L in (torchish, torch):
        L.manual_seed(1)
        a = L.tensor([0.7, 3.0], requires_grad=True)
        L.distributions.Gamma(a, L.tensor([2.0, 0.5])).rsample((5,)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4)


@pytest.mark.parametrize("probs, n, replacement", [
    ([-1.0, 1.0], 2, True), ([float("inf"), 1.0], 2, True), ([float("nan"), 1.0], 2, True),
    ([-1.0, 1.0], 1, True), ([-1.0, 1.0], 2, False), ([0.0, 0.0], 2, True),
    ([[1.0, 2.0], [0.0, -1.0]], 3, True)])
def test_multinomial_errors_are_pytorchs(probs, n, replacement):
    raised = []
    for L in (torchish, torch):
        with pytest.raises(RuntimeError) as info:
            L.multinomial(L.tensor(probs), n, replacement)
        raised.append(str(info.value))
    assert raised[0] == raised[1]
